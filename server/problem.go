package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/report"
)

// Problem is the HTTP rendering of an error: an RFC 9457 problem detail,
// as every error the API returns is written. It is not a finding type of
// its own: when a finding is behind the error (a file that cannot be read
// as a loop, a line rejected: journal.Problem, orbit's one finding type),
// it is rendered in Finding as the CLI's --json shows it.
type Problem struct {
	Type     string           `json:"type"`
	Title    string           `json:"title"`
	Status   int              `json:"status"`
	Detail   string           `json:"detail,omitempty"`
	Instance string           `json:"instance,omitempty"`
	Finding  *journal.Problem `json:"finding,omitempty"`
	// Field, Value and Allowed name the request field a 422 is about,
	// in the body's own terms (a domain *journal.FieldError).
	Field   string   `json:"field,omitempty"`
	Value   string   `json:"value,omitempty"`
	Allowed []string `json:"allowed,omitempty"`
}

// fieldProblem answers a request field orbit cannot take, naming the field
// as the JSON body does.
func fieldProblem(w http.ResponseWriter, r *http.Request, status int, fe *journal.FieldError) {
	writeProblem(w, r, Problem{Type: "about:blank", Title: "the request cannot be recorded as given", Status: status,
		Detail: fe.Error(), Instance: r.URL.Path, Field: fe.Field, Value: fe.Value, Allowed: fe.Allowed})
}

func problem(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	writeProblem(w, r, Problem{Type: "about:blank", Title: title, Status: status, Detail: detail, Instance: r.URL.Path})
}

// errorProblem writes err as a problem detail, with the finding behind it,
// if any, named by its path in the project (root).
func errorProblem(w http.ResponseWriter, r *http.Request, root string, status int, title string, err error) {
	p := Problem{Type: "about:blank", Title: title, Status: status, Detail: err.Error(), Instance: r.URL.Path}
	var f journal.Problem
	if errors.As(err, &f) {
		if rel, err := filepath.Rel(root, f.File); err == nil && filepath.IsAbs(f.File) && filepath.IsLocal(rel) {
			f.File = filepath.ToSlash(rel)
		}
		p.Finding = &f
		p.Detail = f.Error()
	}
	writeProblem(w, r, p)
}

// writeProblem writes p, naming the files of the project (whose root the
// request carries, Server.secure) relative to it: an absolute path says
// where the user keeps their work, which is none of a client's business.
func writeProblem(w http.ResponseWriter, r *http.Request, p Problem) {
	if root, _ := r.Context().Value(rootKey{}).(string); root != "" {
		p.Detail = strings.ReplaceAll(p.Detail, root+string(filepath.Separator), "")
		p.Detail = strings.ReplaceAll(p.Detail, root, ".")
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(p)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	data, err := report.JSON(v)
	if err != nil {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusInternalServerError)
		data, _ = report.JSON(Problem{Type: "about:blank", Title: "internal error", Status: http.StatusInternalServerError, Detail: err.Error()})
		w.Write(data)
		return
	}
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}

// WriteProblem writes an RFC 9457 problem detail, as every error of the API
// is written (the hub's API shares the format).
func WriteProblem(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	problem(w, r, status, title, detail)
}

// NextLink points a page's answer at the next page: the request's address
// with before set to the cursor, in a Link header (rel="next"), as
// GitHub's API pages. The body stays the list itself.
func NextLink(w http.ResponseWriter, r *http.Request, before string) {
	next := *r.URL
	q := next.Query()
	q.Set("before", before)
	next.RawQuery = q.Encode()
	w.Header().Set("Link", "<"+next.RequestURI()+`>; rel="next"`)
}

// WriteJSON writes v as the API writes every answer.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }
