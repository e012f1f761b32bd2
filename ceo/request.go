package ceo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/orbit-loop/orbit/journal"
)

// Request is a decision request as JSON: the body of POST
// /api/v1/decisions, each line of `orbit decide --stdin`, and what the
// flags of `orbit decide` fill. It holds a pending request's fields (seed
// 000's queue shape: id, submitted_at, requestor, category, title,
// description, impact, reversible, context, depth) and the verdict's
// (decision, reason, next_action, confidence, iteration, retro).
type Request struct {
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Category    string   `json:"category"`
	Impact      string   `json:"impact"`
	Reversible  *bool    `json:"reversible"`
	Depth       string   `json:"depth,omitempty"`
	Decision    string   `json:"decision,omitempty"`
	Reason      string   `json:"reason,omitempty"`
	NextAction  string   `json:"next_action,omitempty"`
	Confidence  *float64 `json:"confidence,omitempty"`
	Iteration   *int64   `json:"iteration,omitempty"`
	Requestor   string   `json:"requestor,omitempty"`
	Context     string   `json:"context,omitempty"`
	// RequestID is the request's id, and its idempotency key: a request
	// whose id is already in the journal is answered with the decision
	// recorded for it, never recorded twice. "id" (the queue's name for
	// it) is accepted too.
	RequestID   string `json:"request_id,omitempty"`
	ID          string `json:"id,omitempty"`
	SubmittedAt string `json:"submitted_at,omitempty"`
	// Retro is "ID=OUTCOME", as with --retro.
	Retro string `json:"retro,omitempty"`
	// Precedents is how many similar past decisions to attach (3).
	Precedents *int `json:"precedents,omitempty"`
}

// RequestFields are the JSON fields a Request takes.
func RequestFields() []string {
	t := reflect.TypeFor[Request]()
	out := make([]string, t.NumField())
	for i := range out {
		out[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return out
}

// Input is what the request asks to decide. A retro that is not ID=OUTCOME
// or ids that disagree are a *journal.FieldError.
func (r Request) Input() (Input, error) {
	in := Input{Title: r.Title, Category: r.Category, Impact: r.Impact, Reversible: r.Reversible, Depth: r.Depth,
		Decision: r.Decision, Reason: r.Reason, NextAction: r.NextAction, Confidence: r.Confidence, Iteration: r.Iteration,
		Requestor: r.Requestor, Context: joinNonEmpty(r.Description, r.Context), RequestID: r.RequestID}
	if r.ID != "" {
		if in.RequestID != "" && in.RequestID != r.ID {
			return in, &journal.FieldError{Field: "id", Value: r.ID, Problem: fmt.Sprintf("differs from request_id %q (they name the same thing)", r.RequestID)}
		}
		in.RequestID = r.ID
	}
	var err error
	in.Retro, err = ParseRetroRef(r.Retro)
	return in, err
}

// ReadRequests reads one JSON request, or several as JSON Lines (any JSON
// values one after the other), each validated as a Request: an unknown
// field is a *journal.FieldError listing the fields allowed, with the line
// of the value in Problem.
func ReadRequests(r io.Reader) ([]Request, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var out []Request
	for {
		start := int(dec.InputOffset())
		for start < len(data) && strings.IndexByte(" \t\r\n", data[start]) >= 0 {
			start++
		}
		var req Request
		err := dec.Decode(&req)
		if errors.Is(err, io.EOF) {
			break
		}
		line := 1 + bytes.Count(data[:start], []byte("\n"))
		if err != nil {
			return nil, requestError(err, line)
		}
		out = append(out, req)
	}
	if len(out) == 0 {
		return nil, &InputError{Msg: "no request: want a JSON object (or JSON Lines, one per line)"}
	}
	return out, nil
}

func requestError(err error, line int) error {
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if name, ok := strings.CutPrefix(msg, "unknown field "); ok {
		name = strings.Trim(name, `"`)
		allowed := RequestFields()
		return &journal.FieldError{Field: name, Problem: fmt.Sprintf("is not a field of a decision request (line %d)", line),
			Allowed: allowed, Suggest: journal.Closest(name, allowed)}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		got := withArticle(strings.Fields(te.Value)[0])
		if te.Field == "" {
			return &InputError{Msg: fmt.Sprintf("line %d: want a JSON object, got %s", line, got)}
		}
		return &journal.FieldError{Field: te.Field, Problem: fmt.Sprintf("has the wrong type: want %s, got %s (line %d)", jsonKind(te.Type), got, line)}
	}
	return &InputError{Msg: fmt.Sprintf("line %d: invalid JSON: %s", line, msg)}
}

// jsonKind names the JSON value a Go type takes.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array"
	}
	return "a JSON object"
}

// withArticle is a JSON kind as encoding/json names it ("number",
// "array", "bool") with its article.
func withArticle(kind string) string {
	switch kind {
	case "array", "object":
		return "an " + kind
	case "bool":
		return "a boolean"
	}
	return "a " + kind
}

// Override returns r with every field o sets (a non-zero value) taken
// from o: flags given beside --stdin override the request read.
func (r Request) Override(o Request) Request {
	rv, ov := reflect.ValueOf(&r).Elem(), reflect.ValueOf(o)
	for i := range rv.NumField() {
		if f := ov.Field(i); !f.IsZero() {
			rv.Field(i).Set(f)
		}
	}
	return r
}
