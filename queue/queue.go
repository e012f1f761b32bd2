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
	"path/filepath"
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
	Root string
	Path string
	// Requests are the valid items, in file order.
	Requests []Request
	// Invalid are the items orbit cannot decide as they are (a field
	// missing or not allowed, a duplicate id): they stay in the file,
	// untouched, and every reader names them.
	Invalid []Invalid
	// Exists is false when there was no file (an empty queue).
	Exists bool
	// items are every item in file order, valid or not: what Bytes
	// writes back.
	items []item
}

// Invalid is a queue item orbit cannot decide as it is.
type Invalid struct {
	// Err names the file, the item (its position and id), the field and
	// what is wrong with it (with the allowed values).
	Err *Error
	raw json.RawMessage
}

// Error is the fault, as one line.
func (v Invalid) Error() string { return v.Err.Error() }

// MarshalJSON is the fault as {"item", "id", "field", "error"}.
func (v Invalid) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Item  int    `json:"item"`
		ID    string `json:"id,omitempty"`
		Field string `json:"field,omitempty"`
		Error string `json:"error"`
	}{v.Err.Item, v.Err.ID, v.Err.Field, v.Err.Error()})
}

// item is one item of the file: a request, or an invalid item.
type item struct {
	req     *Request
	invalid *Invalid
}

func (it item) raw() json.RawMessage {
	if it.req != nil {
		return it.req.raw
	}
	return it.invalid.raw
}

// MaxFileBytes bounds a queue file.
const MaxFileBytes = 16 << 20

// Read reads and validates the queue file at path (absolute, or relative to
// the project root; opened as every project file is, project.Open). A
// missing or empty file is an empty queue. A file that is not a JSON array
// is an error naming where it goes wrong. An item that is not a valid
// request does not spoil the others: it is listed in Invalid (file, item,
// id, field, allowed values) and kept in the file as it is.
func Read(root, path string) (*Queue, error) {
	path = project.Abs(root, path)
	// Faults name the file as the project knows it, relative to its root:
	// they reach the API's answers, which never show the server's paths.
	shown := path
	if rel, err := filepath.Rel(root, path); root != "" && err == nil && !strings.HasPrefix(rel, "..") {
		shown = filepath.ToSlash(rel)
	}
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
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fileError(shown, data, err)
	}
	seen := map[string]int{}
	for i, raw := range raws {
		req, err := ParseRequest(shown, i+1, raw)
		if err == nil && req.ID != "" {
			if first, dup := seen[req.ID]; dup {
				err = &Error{Path: shown, Item: i + 1, ID: req.ID, Field: "id", Msg: fmt.Sprintf("duplicate of item %d", first)}
			} else {
				seen[req.ID] = i + 1
			}
		}
		if err != nil {
			var qe *Error
			if !errors.As(err, &qe) {
				return nil, err
			}
			q.items = append(q.items, item{invalid: &Invalid{Err: qe, raw: append(json.RawMessage(nil), bytes.TrimSpace(raw)...)}})
			continue
		}
		q.items = append(q.items, item{req: &req})
	}
	q.index()
	return q, nil
}

// index fills Requests and Invalid from items.
func (q *Queue) index() {
	q.Requests, q.Invalid = nil, nil
	for _, it := range q.items {
		if it.req != nil {
			q.Requests = append(q.Requests, *it.req)
		} else {
			q.Invalid = append(q.Invalid, *it.invalid)
		}
	}
}

// FindInvalid returns the invalid item with id.
func (q *Queue) FindInvalid(id string) (Invalid, bool) {
	for _, v := range q.Invalid {
		if id != "" && v.Err.ID == id {
			return v, true
		}
	}
	return Invalid{}, false
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

// Without returns the queue without the requests for which drop is true;
// invalid items stay.
func (q *Queue) Without(drop func(Request) bool) *Queue {
	out := &Queue{Root: q.Root, Path: q.Path, Exists: q.Exists}
	for _, it := range q.items {
		if it.req == nil || !drop(*it.req) {
			out.items = append(out.items, it)
		}
	}
	out.index()
	return out
}

// Bytes renders the queue as a two-space indented array, each item's
// fields as they were read, invalid items included, in file order.
func (q *Queue) Bytes() []byte {
	if len(q.items) == 0 {
		return []byte("[]\n")
	}
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, it := range q.items {
		b.WriteString("  ")
		var v bytes.Buffer
		if json.Indent(&v, it.raw(), "  ", "  ") != nil {
			v.Reset()
			v.Write(it.raw())
		}
		b.Write(v.Bytes())
		if i < len(q.items)-1 {
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
