//go:build !orbit_decode_stdlib && !orbit_decode_jsonv2

package journal

// The record decoders on decode.go's one-pass lexer. The bench harness's
// decode suite builds orbit with the tags orbit_decode_stdlib and
// orbit_decode_jsonv2 instead (decode_stdlib.go, decode_jsonv2.go) to
// measure them against encoding/json and encoding/json/v2 (BENCHMARKS.md,
// "JSON decoding").

// decodeDecision fills w from a record's text.
func decodeDecision(text []byte, w *wireDecision) error {
	l := &lexer{b: text}
	return l.document(func(key string) error {
		switch key {
		case "id":
			return l.optString("id", &w.ID)
		case "iteration":
			return l.optInt("iteration", &w.Iteration)
		case "ts":
			return l.optString("ts", &w.TS)
		case "tier":
			return l.optString("tier", &w.Tier)
		case "depth":
			return l.optString("depth", &w.Depth)
		case "category":
			return l.optString("category", &w.Category)
		case "input":
			return l.optString("input", &w.Input)
		case "decision":
			return l.optString("decision", &w.Decision)
		case "reason":
			return l.optString("reason", &w.Reason)
		case "next_action":
			return l.optString("next_action", &w.NextAction)
		case "verification":
			return l.optString("verification", &w.Verification)
		case "confidence":
			return l.optFloat("confidence", &w.Confidence)
		case "requestor":
			return l.anyString(&w.Requestor)
		case "context":
			return l.anyString(&w.Context)
		case "description":
			return l.anyString(&w.Description)
		case "request_id":
			return l.anyString(&w.RequestID)
		case "retrograde":
			if isNull, err := l.null(); isNull || err != nil {
				w.Retrograde = nil
				return err
			}
			if l.kind() != "object" {
				return l.mistyped("retrograde", "object")
			}
			// Like encoding/json, a repeated key fills the same struct.
			if w.Retrograde == nil {
				w.Retrograde = &wireRetrograde{}
			}
			r := w.Retrograde
			return l.object(func(key string) error {
				switch key {
				case "previous_id":
					return l.optString("retrograde.previous_id", &r.PreviousID)
				case "outcome":
					return l.optString("retrograde.outcome", &r.Outcome)
				}
				return l.skip()
			})
		}
		return l.skip()
	})
}

// decodeOutcome fills w from a retrograde journal line.
func decodeOutcome(text []byte, w *wireOutcome) error {
	l := &lexer{b: text}
	return l.document(func(key string) error {
		switch key {
		case "ts":
			return l.optString("ts", &w.TS)
		case "decision_id":
			return l.optString("decision_id", &w.DecisionID)
		case "outcome":
			return l.optString("outcome", &w.Outcome)
		case "evidence":
			return l.optString("evidence", &w.Evidence)
		case "void":
			return l.optBool("void", &w.Void)
		}
		return l.skip()
	})
}
