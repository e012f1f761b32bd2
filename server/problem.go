package server

import (
	"encoding/json"
	"net/http"

	"github.com/orbit-loop/orbit/report"
)

// Problem is an RFC 9457 problem detail: every error the API returns.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
}

func problem(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(Problem{Type: "about:blank", Title: title, Status: status, Detail: detail, Instance: r.URL.Path})
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

// WriteJSON writes v as the API writes every answer.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }
