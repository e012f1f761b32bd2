package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// refDecision is wireDecision as encoding/json decodes it: pointers detect
// presence; the fields kept only when they are strings are raw.
type refDecision struct {
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
	Requestor    json.RawMessage `json:"requestor"`
	Context      json.RawMessage `json:"context"`
	Description  json.RawMessage `json:"description"`
}

// stringOrEmpty is what decodeDecision keeps of a field that is kept only
// when it is a string.
func stringOrEmpty(raw json.RawMessage) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

func (r refDecision) wire() wireDecision {
	return wireDecision{
		ID: r.ID, Iteration: r.Iteration, TS: r.TS, Tier: r.Tier, Depth: r.Depth, Category: r.Category, Input: r.Input,
		Decision: r.Decision, Reason: r.Reason, NextAction: r.NextAction, Verification: r.Verification, Retrograde: r.Retrograde,
		Confidence: r.Confidence, Requestor: stringOrEmpty(r.Requestor), Context: stringOrEmpty(r.Context), Description: stringOrEmpty(r.Description),
	}
}

// knownKeys are the keys the decoders look up. encoding/json also matches
// them case-insensitively; ours deliberately does not.
var knownKeys = []string{"id", "iteration", "ts", "tier", "depth", "category", "input", "decision", "reason", "next_action",
	"verification", "retrograde", "confidence", "requestor", "context", "description", "previous_id", "outcome",
	"decision_id", "evidence"}

// caseVariantKey reports whether valid JSON data has an object key that
// differs from a known key only by case.
func caseVariantKey(data []byte) bool {
	d := json.NewDecoder(bytes.NewReader(data))
	type frame struct{ object, wantKey bool }
	var stack []frame
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		top := len(stack) - 1
		if top >= 0 && stack[top].object && stack[top].wantKey {
			if k, ok := tok.(string); ok {
				stack[top].wantKey = false
				for _, known := range knownKeys {
					if k != known && strings.EqualFold(k, known) {
						return true
					}
				}
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
			if top > 0 && stack[top-1].object {
				stack[top-1].wantKey = true
			}
		default:
			if top >= 0 && stack[top].object {
				stack[top].wantKey = true
			}
		}
	}
}

// firstNonSpace returns the first byte that is not JSON whitespace.
func firstNonSpace(data []byte) byte {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}

// classify names the kind of error: "" (none), "syntax" or "type".
func classifyOurs(t *testing.T, err error) string {
	var se *syntaxError
	var te *typeError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &se):
		return "syntax"
	case errors.As(err, &te):
		return "type"
	}
	t.Fatalf("decoder returned %T %v; want *syntaxError or *typeError", err, err)
	return ""
}

func classifyRef(t *testing.T, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &se):
		return "syntax"
	case errors.As(err, &te):
		return "type"
	}
	t.Fatalf("encoding/json returned %T %v", err, err)
	return ""
}

// FuzzDecodeMatchesEncodingJSON checks the one-pass decoders against
// encoding/json: same syntax accepted, same type errors, same values.
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, name := range []string{"doc-example.ceo-loop-decisions.jsonl", "doc-example.pretty.decision-record.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		dec("iter-1-1", 1, 0),
		retroDec("iter-2-1", 2, 5, "iter-1-1", "CORRECT"),
		retroLine(7, "iter-1-1", "INCORRECT"),
		`{}`, ` { } `, `{"id":null}`, `{"retrograde":null}`, `{"retrograde":{}}`,
		`{"id":"caf\u00e9","input":"\ud83d\ude00","reason":"\ud800","next_action":"\ud800\ud800\udc00","context":"\udc00x"}`,
		`{"input":"\"\\\/\b\f\n\r\t\u0000\u001f"}`,
		`{"input":"` + "caf\xc3\xa9 \xff\xfe \xed\xa0\x80" + `"}`,
		`{"input":"\u00e9` + "\xc3" + `\u00e9"}`,
		`{"iteration":1e2}`, `{"iteration":-0}`, `{"confidence":1.5E+3}`, `{"confidence":-0}`, `{"confidence":0.000001e-3}`,
		`{"iteration":9223372036854775807}`, `{"iteration":9223372036854775808}`, `{"iteration":-9223372036854775808}`,
		`{"confidence":1e400}`, `{"confidence":1e-400}`, `{"iteration":01}`, `{"iteration":1.}`, `{"iteration":.5}`, `{"iteration":-}`,
		`{"iteration":"3"}`, `{"iteration":7.5}`, `{"confidence":"high"}`, `{"retrograde":"x"}`, `{"retrograde":[]}`,
		`{"id":true}`, `{"id":{}}`, `{"id":[1,2,{"a":[]}]}`, `{"requestor":5,"context":{"a":1},"description":null}`,
		`{"requestor":"a","requestor":null}`, `{"id":"a","id":null}`, `{"id":null,"id":"b"}`,
		`{"retrograde":{"outcome":"CORRECT"},"retrograde":{"previous_id":"x"}}`,
		`{"retrograde":{"outcome":"CORRECT"},"retrograde":null,"retrograde":{"previous_id":"x"}}`,
		`{"ID":"a"}`, `{"Iteration":1}`, `{"tſ":"x"}`, `{"\u0069d":"escaped key"}`,
		`{"iteration":"3",}`, `{"iteration":"3"} x`, `{"a":1,}`, `{,}`, `{"a" 1}`, `{"a":1 "b":2}`, `[1]`, `null`, `"s"`, ``, `{`,
		`{"id":"a"}{}`, `{"id":"a"}` + "\n", "\v{}", `{"a":tru}`, `{"a":nul}`, `{"a":truex}`, `{"id":"\x"}`, `{"id":"\u12"}`,
		`{"id":"\ud800\u12"}`, `{"id":"` + "\t" + `"}`,
		// Deep nesting is in TestDecodeDepthLimit: seeds that large make the
		// fuzzer spend its time minimising.
		`{"a":[[[[[[[[[[{"b":[]}]]]]]]]]]]}`, `{"retrograde":{"a":{"b":{"c":[{}]}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		var w wireDecision
		ourErr := decodeDecision(data, &w)
		var wo wireOutcome
		ourOutErr := decodeOutcome(data, &wo)
		if valid && firstNonSpace(data) != '{' {
			// Not an object: the decoders refuse it as malformed, and
			// ParseDecision names what it is instead.
			if classifyOurs(t, ourErr) != "syntax" || classifyOurs(t, ourOutErr) != "syntax" {
				t.Fatalf("decoders accepted the non-object %q: %v, %v", data, ourErr, ourOutErr)
			}
			if _, _, bad := ParseDecision(data); bad == nil || bad.Code != CodeNotObject {
				t.Fatalf("ParseDecision(%q) = %v; want %s", data, bad, CodeNotObject)
			}
			return
		}
		if got := classifyOurs(t, ourErr) != "syntax"; got != valid {
			t.Fatalf("decodeDecision(%q) syntax ok = %v (%v); encoding/json says %v", data, got, ourErr, valid)
		}
		if got := classifyOurs(t, ourOutErr) != "syntax"; got != valid {
			t.Fatalf("decodeOutcome(%q) syntax ok = %v (%v); encoding/json says %v", data, got, ourOutErr, valid)
		}
		if !valid || caseVariantKey(data) {
			return
		}
		var ref refDecision
		refErr := json.Unmarshal(data, &ref)
		if got, want := classifyOurs(t, ourErr), classifyRef(t, refErr); got != want {
			t.Fatalf("decodeDecision(%q) error = %v; encoding/json: %v", data, ourErr, refErr)
		}
		if ourErr == nil && !reflect.DeepEqual(w, ref.wire()) {
			t.Fatalf("decodeDecision(%q) =\n%s\nencoding/json:\n%s", data, dump(w), dump(ref.wire()))
		}
		var refOut wireOutcome
		refOutErr := json.Unmarshal(data, &refOut)
		if got, want := classifyOurs(t, ourOutErr), classifyRef(t, refOutErr); got != want {
			t.Fatalf("decodeOutcome(%q) error = %v; encoding/json: %v", data, ourOutErr, refOutErr)
		}
		if ourOutErr == nil && !reflect.DeepEqual(wo, refOut) {
			t.Fatalf("decodeOutcome(%q) =\n%s\nencoding/json:\n%s", data, dump(wo), dump(refOut))
		}
	})
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// TestDecodeDepthLimit checks the nesting limit against encoding/json's: the
// same depth is the deepest accepted.
func TestDecodeDepthLimit(t *testing.T) {
	for _, depth := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		inputs := map[string]string{
			"arrays":            `{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`,
			"objects":           strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth),
			"in retrograde":     `{"retrograde":` + strings.Repeat(`{"a":`, depth-1) + "1" + strings.Repeat("}", depth),
			"objects in arrays": `{"a":` + strings.Repeat(`[{"a":`, (depth-1)/2) + strings.Repeat("[", (depth-1)%2) + "null" + strings.Repeat("]", (depth-1)%2) + strings.Repeat("}]", (depth-1)/2) + `}`,
		}
		for name, in := range inputs {
			t.Run(fmt.Sprintf("%s %d", name, depth), func(t *testing.T) {
				want := json.Valid([]byte(in))
				var w wireDecision
				err := decodeDecision([]byte(in), &w)
				if got := err == nil; got != want {
					t.Errorf("decodeDecision(depth %d) error = %v; encoding/json valid = %v", depth, err, want)
				}
				if want != (depth <= maxDepth) {
					t.Errorf("encoding/json valid = %v at depth %d; the test's depth count is off", want, depth)
				}
			})
		}
	}
}

func TestDecodeTypeErrorThenSyntaxError(t *testing.T) {
	// encoding/json validates first: a syntax error anywhere wins over a
	// type error before it.
	var w wireDecision
	err := decodeDecision([]byte(`{"iteration":"3","id":}`), &w)
	var se *syntaxError
	if !errors.As(err, &se) {
		t.Fatalf("decodeDecision = %T %v; want a syntax error", err, err)
	}
	if want := "invalid character '}' at column 23"; err.Error() != want {
		t.Errorf("error = %q; want %q", err, want)
	}
}
