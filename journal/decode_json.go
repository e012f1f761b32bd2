//go:build orbit_decode_stdlib || orbit_decode_jsonv2

package journal

import "encoding/json"

// The record types as encoding/json decodes them, for the comparison builds
// of the bench harness's decode suite (decode_records.go).

// jsonDecision is wireDecision with the fields that are not seed fields
// kept only when they are strings (a value of another type is ignored, as
// the one-pass decoder does).
type jsonDecision struct {
	wireDecision
	Requestor   looseString `json:"requestor"`
	Context     looseString `json:"context"`
	Description looseString `json:"description"`
	RequestID   looseString `json:"request_id"`
}

func (r *jsonDecision) wire() wireDecision {
	w := r.wireDecision
	w.Requestor, w.Context, w.Description, w.RequestID = string(r.Requestor), string(r.Context), string(r.Description), string(r.RequestID)
	return w
}

// looseString keeps a value when it is a string and ignores any other.
type looseString string

func (s *looseString) UnmarshalJSON(b []byte) error {
	*s = ""
	if len(b) > 0 && b[0] == '"' {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = looseString(v)
	}
	return nil
}
