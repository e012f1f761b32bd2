//go:build orbit_decode_stdlib || orbit_decode_jsonv2

package journal

import "encoding/json"

// The record types as encoding/json decodes them, for the comparison builds
// of the bench harness's decode suite (decode_records.go).

// jsonDecision is wireDecision with the fields kept only when they are
// strings decoded loosely.
type jsonDecision struct {
	ID           *string         `json:"id"`
	Iteration    *int64          `json:"iteration"`
	TS           *string         `json:"ts"`
	Tier         *string         `json:"tier"`
	Depth        *string         `json:"depth"`
	Category     *string         `json:"category"`
	Input        *string         `json:"input"`
	Decision     *string         `json:"decision"`
	Reason       *string         `json:"reason"`
	NextAction   *string         `json:"next_action"`
	Verification *string         `json:"verification"`
	Retrograde   *wireRetrograde `json:"retrograde"`
	Confidence   *float64        `json:"confidence"`
	Requestor    looseString     `json:"requestor"`
	Context      looseString     `json:"context"`
	Description  looseString     `json:"description"`
	RequestID    looseString     `json:"request_id"`
}

func (r *jsonDecision) wire() wireDecision {
	return wireDecision{
		ID: r.ID, Iteration: r.Iteration, TS: r.TS, Tier: r.Tier, Depth: r.Depth, Category: r.Category, Input: r.Input,
		Decision: r.Decision, Reason: r.Reason, NextAction: r.NextAction, Verification: r.Verification, Retrograde: r.Retrograde,
		Confidence: r.Confidence, Requestor: string(r.Requestor), Context: string(r.Context), Description: string(r.Description),
		RequestID: string(r.RequestID),
	}
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
