// Package queue owns the pending-decision queue of seed 000
// (.claude/ceo-decisions-pending.json): agents write requests there; orbit
// validates them, takes the ones it decides out, and rewrites the file
// atomically with every other item exactly as it was.
package queue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/policy"
	"github.com/orbit-loop/orbit/project"
)

// Request is one pending decision, in seed 000's shape. Depth is orbit's
// optional addition (classified when absent).
type Request struct {
	ID          string `json:"id"`
	SubmittedAt string `json:"submitted_at"`
	Requestor   string `json:"requestor"`
	Category    string `json:"category"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Impact      string `json:"impact"`
	Reversible  bool   `json:"reversible"`
	Context     string `json:"context"`
	Depth       string `json:"depth,omitempty"`

	raw json.RawMessage
}

// wireRequest detects absent fields and wrong types.
type wireRequest struct {
	ID          *string `json:"id"`
	SubmittedAt *string `json:"submitted_at"`
	Requestor   *string `json:"requestor"`
	Category    *string `json:"category"`
	Title       *string `json:"title"`
	Description *string `json:"description"`
	Impact      *string `json:"impact"`
	Reversible  *bool   `json:"reversible"`
	Context     *string `json:"context"`
	Depth       *string `json:"depth"`
}

// Error is a fault in a queue file or request, naming the item and field.
type Error struct {
	Path  string
	Line  int // 1-based line of a syntax error; 0 when not known
	Item  int // 1-based; 0 for a fault of the whole file
	ID    string
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Item > 0 {
		fmt.Fprintf(&b, ": item %d", e.Item)
		if e.ID != "" {
			fmt.Fprintf(&b, " (%s)", e.ID)
		}
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": %s", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// ParseRequest decodes and validates one request; where names it in errors.
func ParseRequest(where string, item int, raw []byte) (Request, error) {
	var w wireRequest
	fail := func(field, format string, args ...any) (Request, error) {
		id := ""
		if w.ID != nil {
			id = *w.ID
		}
		return Request{}, &Error{Path: where, Item: item, ID: id, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fail("", "want a JSON object")
	}
	if err := json.Unmarshal(trimmed, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			t := te.Type
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			return fail(te.Field, "want %s, got %s", t.Kind(), te.Value)
		}
		return fail("", "invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if !utf8.Valid(trimmed) {
		// encoding/json would quietly turn the bytes into U+FFFD.
		return fail("", "invalid UTF-8 at byte %d of the item", journal.InvalidUTF8At(trimmed)+1)
	}
	req := Request{raw: append(json.RawMessage(nil), trimmed...)}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	req.ID, req.SubmittedAt, req.Requestor = str(w.ID), str(w.SubmittedAt), str(w.Requestor)
	req.Title, req.Description, req.Context = str(w.Title), str(w.Description), str(w.Context)
	req.Category, req.Impact, req.Depth = str(w.Category), str(w.Impact), str(w.Depth)
	for _, f := range []struct {
		name, v string
	}{{"id", req.ID}, {"requestor", req.Requestor}, {"title", req.Title}, {"description", req.Description}, {"context", req.Context}} {
		if len(f.v) > journal.MaxFieldBytes {
			return fail(f.name, "%d bytes long; at most %d", len(f.v), journal.MaxFieldBytes)
		}
	}
	switch {
	case req.Title == "":
		return fail("title", "missing (required)")
	case w.Category == nil:
		return fail("category", "missing (required; allowed: %s)", strings.Join(journal.Categories, ", "))
	case !slices.Contains(journal.Categories, req.Category):
		return fail("category", "%q is not allowed (allowed: %s)", req.Category, strings.Join(journal.Categories, ", "))
	case w.Impact == nil:
		return fail("impact", "missing (required; allowed: %s)", strings.Join(policy.Impacts, ", "))
	case !slices.Contains(policy.Impacts, req.Impact):
		return fail("impact", "%q is not allowed (allowed: %s)", req.Impact, strings.Join(policy.Impacts, ", "))
	case w.Reversible == nil:
		return fail("reversible", "missing (required: true or false)")
	case req.Depth != "" && !slices.Contains(journal.Depths, req.Depth):
		return fail("depth", "%q is not allowed (allowed: %s)", req.Depth, strings.Join(journal.Depths, ", "))
	}
	req.Reversible = *w.Reversible
	return req, nil
}

// Raw returns the request's JSON as it was read.
func (r Request) Raw() json.RawMessage { return r.raw }

// Queue is a queue file's requests.
type Queue struct {
	// Root is the project root the file is under ("" for none).
	Root     string
	Path     string
	Requests []Request
	// Exists is false when there was no file (an empty queue).
	Exists bool
}

// MaxFileBytes bounds a queue file.
const MaxFileBytes = 16 << 20

// Read reads and validates the queue file at path (absolute, or relative to
// the project root; opened as every project file is, project.Open). A
// missing or empty file is an empty queue. Any fault is an error naming the
// item and field, and nothing is changed.
func Read(root, path string) (*Queue, error) {
	path = project.Abs(root, path)
	data, err := project.ReadFile(root, path, MaxFileBytes)
	if errors.Is(err, os.ErrNotExist) {
		return &Queue{Root: root, Path: path}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read queue: %w", err)
	}
	q := &Queue{Root: root, Path: path, Exists: true}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return q, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, fileError(path, data, err)
	}
	seen := map[string]int{}
	for i, raw := range items {
		req, err := ParseRequest(path, i+1, raw)
		if err != nil {
			return nil, err
		}
		if req.ID != "" {
			if first, dup := seen[req.ID]; dup {
				return nil, &Error{Path: path, Item: i + 1, ID: req.ID, Field: "id", Msg: fmt.Sprintf("duplicate of item %d", first)}
			}
			seen[req.ID] = i + 1
		}
		q.Requests = append(q.Requests, req)
	}
	return q, nil
}

// fileError names where a queue file that is not an array of objects went
// wrong: the line of a syntax error, what was found instead of an array.
func fileError(path string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off := min(int(se.Offset), len(data))
		// The offset is just past the offending byte.
		line := bytes.Count(data[:max(off-1, 0)], []byte("\n")) + 1
		return &Error{Path: path, Line: line, Msg: "want a JSON array of requests: " + se.Error()}
	case errors.As(err, &te):
		return &Error{Path: path, Msg: "want a JSON array of requests, found " + te.Value}
	}
	return &Error{Path: path, Msg: "want a JSON array of requests: " + strings.TrimPrefix(err.Error(), "json: ")}
}

// Find returns the request with id.
func (q *Queue) Find(id string) (Request, bool) {
	for _, r := range q.Requests {
		if r.ID == id {
			return r, true
		}
	}
	return Request{}, false
}

// Same reports whether two requests are the same item: the same id, or,
// without ids, the same fields.
func Same(a, b Request) bool {
	if a.ID != "" || b.ID != "" {
		return a.ID == b.ID
	}
	return bytes.Equal(a.raw, b.raw)
}

// Without returns the queue without the requests for which drop is true.
func (q *Queue) Without(drop func(Request) bool) *Queue {
	out := &Queue{Path: q.Path, Exists: q.Exists}
	for _, r := range q.Requests {
		if !drop(r) {
			out.Requests = append(out.Requests, r)
		}
	}
	return out
}

// Bytes renders the queue as a two-space indented array, each request's
// fields as they were read.
func (q *Queue) Bytes() []byte {
	if len(q.Requests) == 0 {
		return []byte("[]\n")
	}
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, r := range q.Requests {
		b.WriteString("  ")
		var v bytes.Buffer
		if json.Indent(&v, r.raw, "  ", "  ") != nil {
			v.Reset()
			v.Write(r.raw)
		}
		b.Write(v.Bytes())
		if i < len(q.Requests)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.Bytes()
}

// Write replaces the queue file atomically (temp file, fsync, rename).
func (q *Queue) Write() error {
	return journal.WriteFileAtomic(q.Root, q.Path, q.Bytes(), 0o644)
}
