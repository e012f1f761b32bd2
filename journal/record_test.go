package journal

import (
	"encoding/json"
	"strings"
	"testing"
)

// absent marks a field to leave out of a record built by recordWith.
type absentField struct{}

var absent = absentField{}

// recordWith returns a valid decision record with some fields changed:
// a value of absent drops the field, a json.RawMessage is written as is.
func recordWith(tb testing.TB, changes map[string]any) []byte {
	tb.Helper()
	m := map[string]any{
		"id":           "iter-7-1",
		"iteration":    7,
		"ts":           "2026-03-08T10:15:00Z",
		"tier":         "auto_approve",
		"depth":        "trivial",
		"category":     "quality",
		"input":        "Add ESLint auto-fix to CI pipeline",
		"decision":     "APPROVED",
		"reason":       "Low risk, high alignment.",
		"next_action":  "Commit and move to next task.",
		"verification": "PENDING",
		"retrograde":   map[string]any{"previous_id": nil, "outcome": "N/A"},
		"confidence":   0.98,
	}
	for k, v := range changes {
		if v == absent {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// flipCase returns s in the other case: values are matched exactly.
func flipCase(s string) string {
	if u := strings.ToUpper(s); u != s {
		return u
	}
	return strings.ToLower(s)
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func remarkCodes(rs []Problem) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return strings.Join(out, ",")
}

func TestParseDecisionEnumerations(t *testing.T) {
	fields := []struct {
		field   string
		allowed []string
		set     func(v string) map[string]any
		get     func(p Parsed) string
	}{
		{"tier", Tiers, func(v string) map[string]any { return map[string]any{"tier": v} }, func(p Parsed) string { return p.Tier }},
		{"depth", Depths, func(v string) map[string]any { return map[string]any{"depth": v} }, func(p Parsed) string { return p.Depth }},
		{"category", Categories, func(v string) map[string]any { return map[string]any{"category": v} }, func(p Parsed) string { return p.Category }},
		{"decision", DecisionValues, func(v string) map[string]any { return map[string]any{"decision": v} }, func(p Parsed) string { return p.Decision.Decision }},
		{"verification", Verifications, func(v string) map[string]any { return map[string]any{"verification": v} }, func(p Parsed) string { return p.Verification }},
		{"retrograde.outcome", Outcomes, func(v string) map[string]any {
			return map[string]any{"retrograde": map[string]any{"previous_id": "iter-6-1", "outcome": v}}
		}, func(p Parsed) string { return p.Retrograde.Outcome }},
	}
	for _, f := range fields {
		for _, v := range f.allowed {
			t.Run(f.field+"="+v, func(t *testing.T) {
				p, _, bad := ParseDecision(recordWith(t, f.set(v)))
				if bad != nil {
					t.Fatalf("ParseDecision(%s %q) rejected: %s", f.field, v, bad.Message)
				}
				if got := f.get(p); got != v {
					t.Errorf("ParseDecision(%s %q): %s = %q; want %q", f.field, v, f.field, got, v)
				}
			})
		}
		for _, v := range []string{"", "UNKNOWN", flipCase(f.allowed[0]), " " + f.allowed[0]} {
			t.Run(f.field+"="+v, func(t *testing.T) {
				_, _, bad := ParseDecision(recordWith(t, f.set(v)))
				if bad == nil {
					t.Fatalf("ParseDecision(%s %q) accepted; want it rejected", f.field, v)
				}
				if bad.Code != CodeEnum || bad.Severity != SevError {
					t.Errorf("ParseDecision(%s %q) code = %s %q; want error %q", f.field, v, bad.Severity, bad.Code, CodeEnum)
				}
				want := f.field + " \"" + v + "\" is not allowed (allowed: " + strings.Join(f.allowed, ", ") + ")"
				if !strings.Contains(bad.Message, want) {
					t.Errorf("ParseDecision(%s %q) message = %q; want it to contain %q", f.field, v, bad.Message, want)
				}
			})
		}
	}
}

func TestParseDecisionRejects(t *testing.T) {
	deep := `{"id":"x","nested":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`
	deepObj := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	tests := []struct {
		name    string
		text    []byte
		code    string
		message string // a part of the message
	}{
		{"missing id", recordWith(t, map[string]any{"id": absent}), CodeMissing, "missing required field: id"},
		{"empty id", recordWith(t, map[string]any{"id": ""}), CodeMissing, "missing required field: id"},
		{"null id", recordWith(t, map[string]any{"id": nil}), CodeMissing, "missing required field: id"},
		{"missing iteration", recordWith(t, map[string]any{"iteration": absent}), CodeMissing, "missing required field: iteration"},
		{"missing tier", recordWith(t, map[string]any{"tier": absent}), CodeMissing, "missing required field: tier"},
		{"missing depth", recordWith(t, map[string]any{"depth": absent}), CodeMissing, "missing required field: depth"},
		{"missing category", recordWith(t, map[string]any{"category": absent}), CodeMissing, "missing required field: category"},
		{"missing input", recordWith(t, map[string]any{"input": absent}), CodeMissing, "missing required field: input"},
		{"missing decision", recordWith(t, map[string]any{"decision": absent}), CodeMissing, "missing required field: decision"},
		{"null decision", recordWith(t, map[string]any{"decision": nil}), CodeMissing, "missing required field: decision"},
		{"missing retrograde outcome", recordWith(t, map[string]any{"retrograde": map[string]any{"previous_id": "iter-1-1"}}), CodeMissing, "missing required field: retrograde.outcome"},
		{"several missing", []byte(`{"reason":"r"}`), CodeMissing, "missing required fields: id, iteration, tier, depth, category, input, decision"},
		{"iteration as string", recordWith(t, map[string]any{"iteration": "3"}), CodeType, "iteration: want integer, got string"},
		{"iteration as fraction", recordWith(t, map[string]any{"iteration": raw("7.5")}), CodeType, "iteration: want integer, got number 7.5"},
		{"iteration with exponent", recordWith(t, map[string]any{"iteration": raw("1e2")}), CodeType, "iteration: want integer, got number 1e2"},
		{"iteration overflows int64", recordWith(t, map[string]any{"iteration": raw("9223372036854775808")}), CodeType, "iteration: want integer, got number 9223372036854775808"},
		{"iteration as boolean", recordWith(t, map[string]any{"iteration": true}), CodeType, "iteration: want integer, got boolean"},
		{"id as number", recordWith(t, map[string]any{"id": 5}), CodeType, "id: want string, got number 5"},
		{"input as array", recordWith(t, map[string]any{"input": raw(`["a"]`)}), CodeType, "input: want string, got array"},
		{"confidence as word", recordWith(t, map[string]any{"confidence": "high"}), CodeType, "confidence: want number, got string"},
		{"confidence overflows", recordWith(t, map[string]any{"confidence": raw("1e400")}), CodeType, "confidence: want number, got number 1e400"},
		{"retrograde as string", recordWith(t, map[string]any{"retrograde": "x"}), CodeType, "retrograde: want object, got string"},
		{"retrograde previous_id as number", recordWith(t, map[string]any{"retrograde": raw(`{"previous_id":6,"outcome":"CORRECT"}`)}), CodeType, "retrograde.previous_id: want string, got number 6"},
		{"confidence above 1", recordWith(t, map[string]any{"confidence": 1.5}), CodeRange, "confidence 1.5 is outside 0..1"},
		{"confidence below 0", recordWith(t, map[string]any{"confidence": -0.1}), CodeRange, "confidence -0.1 is outside 0..1"},
		{"negative iteration", recordWith(t, map[string]any{"iteration": -1}), CodeRange, "iteration -1 is negative"},
		{"id with a control character", recordWith(t, map[string]any{"id": "iter\t1"}), CodeRange, "contains a control character"},
		{"id too long", recordWith(t, map[string]any{"id": strings.Repeat("x", maxIDLen+1)}), CodeRange, "longer than 256"},
		{"two bad values", recordWith(t, map[string]any{"tier": "x", "depth": "y"}), CodeEnum, `tier "x" is not allowed (allowed: auto_approve, quick_review, deep_think, escalate); depth "y" is not allowed`},
		{"array", []byte(`[1,2]`), CodeNotObject, "record is a JSON array, not an object"},
		{"string", []byte(`"iter-1-1"`), CodeNotObject, "record is a JSON string, not an object"},
		{"number", []byte(`42`), CodeNotObject, "record is a JSON number, not an object"},
		{"null", []byte(`null`), CodeNotObject, "record is a JSON null, not an object"},
		{"boolean", []byte(` true `), CodeNotObject, "record is a JSON boolean, not an object"},
		// \v is not JSON whitespace: this is not a JSON value at all.
		{"array after a vertical tab", []byte("\v[1]"), CodeJSON, "invalid JSON"},
		{"trailing garbage", append(recordWith(t, nil), " x"...), CodeJSON, "invalid JSON: invalid character 'x' after top-level value"},
		{"two objects", append(recordWith(t, nil), "{}"...), CodeJSON, "after top-level value"},
		{"syntax error after a type error", []byte(`{"iteration":"3",}`), CodeJSON, "invalid JSON"},
		{"truncated", []byte(`{"id":"a","iter`), CodeJSON, "unexpected end of JSON input"},
		{"empty", []byte(``), CodeJSON, "unexpected end of JSON input"},
		{"bare word", []byte(`nope`), CodeJSON, "invalid JSON"},
		{"nested arrays 20000 deep", []byte(deep), CodeJSON, "exceeded max depth"},
		{"nested objects 20000 deep", []byte(deepObj), CodeJSON, "exceeded max depth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, warns, bad := ParseDecision(tt.text)
			if bad == nil {
				t.Fatalf("ParseDecision(%.80s) accepted (warnings %q); want %s", tt.text, remarkCodes(warns), tt.code)
			}
			if bad.Code != tt.code || bad.Severity != SevError {
				t.Errorf("ParseDecision(%.80s) = %s %q: %s; want error %q", tt.text, bad.Severity, bad.Code, bad.Message, tt.code)
			}
			if !strings.Contains(bad.Message, tt.message) {
				t.Errorf("ParseDecision(%.80s) message = %q; want it to contain %q", tt.text, bad.Message, tt.message)
			}
		})
	}
}

func TestParseDecisionAccepts(t *testing.T) {
	tests := []struct {
		name  string
		text  []byte
		warns string // remark codes, comma-separated
		check func(t *testing.T, p Parsed)
	}{
		{
			name: "seed record",
			text: recordWith(t, nil),
			check: func(t *testing.T, p Parsed) {
				if p.ID != "iter-7-1" || p.Iteration != 7 || p.Tier != "auto_approve" || p.Input != "Add ESLint auto-fix to CI pipeline" ||
					p.Reason != "Low risk, high alignment." || p.NextAction != "Commit and move to next task." || p.Confidence == nil || *p.Confidence != 0.98 {
					t.Errorf("ParseDecision = %+v", p.Decision)
				}
				if p.TSTime.Format("2006-01-02T15:04:05Z07:00") != "2026-03-08T10:15:00Z" || p.Event {
					t.Errorf("TSTime = %v, Event = %v; want 2026-03-08T10:15:00Z, false", p.TSTime, p.Event)
				}
			},
		},
		{
			name:  "ts placeholder of the seed document",
			text:  recordWith(t, map[string]any{"ts": "ISO-8601"}),
			warns: CodeTS,
			check: func(t *testing.T, p Parsed) {
				if p.TS != "ISO-8601" || !p.TSTime.IsZero() {
					t.Errorf("TS = %q, TSTime = %v; want ISO-8601 kept and no time", p.TS, p.TSTime)
				}
			},
		},
		{name: "missing ts", text: recordWith(t, map[string]any{"ts": absent}), warns: CodeTS},
		{name: "null ts", text: recordWith(t, map[string]any{"ts": nil}), warns: CodeTS},
		{
			name: "ts with fraction and offset",
			text: recordWith(t, map[string]any{"ts": "2026-03-08T11:15:00.5+01:00"}),
			check: func(t *testing.T, p Parsed) {
				if got := p.TSTime.UTC().Format("15:04:05.0"); got != "10:15:00.5" {
					t.Errorf("TSTime = %s; want 10:15:00.5 UTC", got)
				}
			},
		},
		{
			name: "retrograde verdict on an earlier decision",
			text: recordWith(t, map[string]any{"retrograde": map[string]any{"previous_id": "iter-6-2", "outcome": "CORRECT"}}),
			check: func(t *testing.T, p Parsed) {
				if !p.Event || p.Retrograde.PreviousID == nil || *p.Retrograde.PreviousID != "iter-6-2" || p.Retrograde.Outcome != "CORRECT" {
					t.Errorf("Event = %v, Retrograde = %+v; want an event for iter-6-2 CORRECT", p.Event, p.Retrograde)
				}
			},
		},
		{
			name:  "retrograde verdict without previous_id",
			text:  recordWith(t, map[string]any{"retrograde": map[string]any{"previous_id": nil, "outcome": "CORRECT"}}),
			warns: CodeOrphan,
			check: func(t *testing.T, p Parsed) {
				if p.Event {
					t.Error("Event = true; want false")
				}
			},
		},
		{
			name:  "retrograde INCORRECT with empty previous_id",
			text:  recordWith(t, map[string]any{"retrograde": map[string]any{"previous_id": "", "outcome": "INCORRECT"}}),
			warns: CodeOrphan,
		},
		{
			name: "retrograde PENDING without previous_id",
			text: recordWith(t, map[string]any{"retrograde": map[string]any{"outcome": "PENDING"}}),
		},
		{
			name: "unknown extra fields",
			text: recordWith(t, map[string]any{"impact": "high", "reversible": true, "extra": raw(`{"nested":[1,{"a":null}]}`)}),
		},
		{
			name: "nulls are absent",
			text: recordWith(t, map[string]any{"reason": nil, "next_action": nil, "verification": nil, "confidence": nil, "retrograde": nil}),
			check: func(t *testing.T, p Parsed) {
				if p.Reason != "" || p.NextAction != "" || p.Verification != "PENDING" || p.Confidence != nil || p.Retrograde.Outcome != OutcomeNA || p.Retrograde.PreviousID != nil {
					t.Errorf("ParseDecision = %+v; want defaults", p.Decision)
				}
			},
		},
		{
			name: "optional fields absent",
			text: recordWith(t, map[string]any{"reason": absent, "next_action": absent, "verification": absent, "confidence": absent, "retrograde": absent}),
			check: func(t *testing.T, p Parsed) {
				if p.Verification != "PENDING" || p.Confidence != nil || p.Retrograde.Outcome != OutcomeNA {
					t.Errorf("ParseDecision = %+v; want defaults", p.Decision)
				}
			},
		},
		{
			name: "confidence bounds",
			text: recordWith(t, map[string]any{"confidence": 0}),
		},
		{
			name: "confidence 1 and iteration 0",
			text: recordWith(t, map[string]any{"confidence": 1, "iteration": 0}),
		},
		{
			name: "iteration minus zero",
			text: recordWith(t, map[string]any{"iteration": raw("-0")}),
			check: func(t *testing.T, p Parsed) {
				if p.Iteration != 0 {
					t.Errorf("Iteration = %d; want 0", p.Iteration)
				}
			},
		},
		{
			name: "requestor and context kept",
			text: recordWith(t, map[string]any{"requestor": "forge:builder", "description": "Should we?", "context": "Polling adds latency."}),
			check: func(t *testing.T, p Parsed) {
				if p.Requestor != "forge:builder" || p.Context != "Should we?\nPolling adds latency." {
					t.Errorf("Requestor = %q, Context = %q", p.Requestor, p.Context)
				}
			},
		},
		{
			name: "non-string requestor ignored",
			text: recordWith(t, map[string]any{"requestor": raw(`{"name":"x"}`), "context": 3}),
			check: func(t *testing.T, p Parsed) {
				if p.Requestor != "" || p.Context != "" {
					t.Errorf("Requestor = %q, Context = %q; want both empty", p.Requestor, p.Context)
				}
			},
		},
		{
			name: "escapes",
			text: []byte(`{"id":"caf\u00e9-\ud83d\ude00","iteration":1,"ts":"2026-03-08T10:15:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"a\"b\\c\/d\n\t","decision":"APPROVED"}`),
			check: func(t *testing.T, p Parsed) {
				if p.ID != "café-😀" || p.Input != "a\"b\\c/d\n\t" {
					t.Errorf("ID = %q, Input = %q", p.ID, p.Input)
				}
			},
		},
		{
			name: "whitespace around tokens",
			text: []byte(" {\t\"id\" : \"a\" ,\r\n \"iteration\" : 1 , \"ts\":\"2026-03-08T10:15:00Z\",\"tier\":\"escalate\",\"depth\":\"heavy\",\"category\":\"deploy\",\"input\":\"i\",\"decision\":\"REJECTED\" } \n"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, warns, bad := ParseDecision(tt.text)
			if bad != nil {
				t.Fatalf("ParseDecision(%s) rejected: %s %s", tt.text, bad.Code, bad.Message)
			}
			if got := remarkCodes(warns); got != tt.warns {
				t.Errorf("ParseDecision(%s) warnings = %q; want %q", tt.text, got, tt.warns)
			}
			for _, w := range warns {
				if w.Severity != SevWarning {
					t.Errorf("remark %q has severity %s; want warning", w.Message, w.Severity)
				}
			}
			if tt.check != nil {
				tt.check(t, p)
			}
		})
	}
}

func TestParseDecisionSeedExample(t *testing.T) {
	b := readTestdata(t, "doc-example.ceo-loop-decisions.jsonl")
	p, warns, bad := ParseDecision([]byte(strings.TrimSuffix(b, "\n")))
	if bad != nil {
		t.Fatalf("seed example rejected: %s", bad.Message)
	}
	if p.ID != "iter-7-1" || p.Decision.Decision != "APPROVED" || *p.Confidence != 0.95 {
		t.Errorf("seed example = %+v", p.Decision)
	}
	if got := remarkCodes(warns); got != CodeTS {
		t.Errorf("warnings = %q; want %q (its ts is the placeholder ISO-8601)", got, CodeTS)
	}
}

func TestParseOutcome(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		code    string // rejection code, "" when accepted
		message string
		warns   string
		want    OutcomeRecord
	}{
		{name: "complete", text: `{"ts":"2026-03-08T10:20:00Z","decision_id":"iter-7-1","outcome":"INCORRECT","evidence":"reverted"}`,
			want: OutcomeRecord{TS: "2026-03-08T10:20:00Z", DecisionID: "iter-7-1", Outcome: "INCORRECT", Evidence: "reverted"}},
		{name: "CORRECT", text: `{"ts":"2026-03-08T10:20:00Z","decision_id":"a","outcome":"CORRECT"}`, want: OutcomeRecord{TS: "2026-03-08T10:20:00Z", DecisionID: "a", Outcome: "CORRECT"}},
		{name: "PENDING", text: `{"ts":"2026-03-08T10:20:00Z","decision_id":"a","outcome":"PENDING"}`, want: OutcomeRecord{TS: "2026-03-08T10:20:00Z", DecisionID: "a", Outcome: "PENDING"}},
		{name: "N/A", text: `{"ts":"2026-03-08T10:20:00Z","decision_id":"a","outcome":"N/A"}`, want: OutcomeRecord{TS: "2026-03-08T10:20:00Z", DecisionID: "a", Outcome: "N/A"}},
		{name: "no ts", text: `{"decision_id":"a","outcome":"CORRECT","extra":[1]}`, warns: CodeTS, want: OutcomeRecord{DecisionID: "a", Outcome: "CORRECT"}},
		{name: "ts not RFC 3339", text: `{"ts":"yesterday","decision_id":"a","outcome":"CORRECT"}`, warns: CodeTS, want: OutcomeRecord{TS: "yesterday", DecisionID: "a", Outcome: "CORRECT"}},
		{name: "unknown outcome", text: `{"decision_id":"a","outcome":"correct"}`, code: CodeEnum, message: `outcome "correct" is not allowed (allowed: CORRECT, INCORRECT, PENDING, N/A)`},
		{name: "missing decision_id", text: `{"outcome":"CORRECT"}`, code: CodeMissing, message: "missing required field: decision_id"},
		{name: "empty decision_id", text: `{"decision_id":"","outcome":"CORRECT"}`, code: CodeMissing, message: "missing required field: decision_id"},
		{name: "missing both", text: `{"evidence":"x"}`, code: CodeMissing, message: "missing required fields: decision_id, outcome"},
		{name: "null outcome", text: `{"decision_id":"a","outcome":null}`, code: CodeMissing, message: "missing required field: outcome"},
		{name: "decision_id as number", text: `{"decision_id":7,"outcome":"CORRECT"}`, code: CodeType, message: "decision_id: want string, got number 7"},
		{name: "decision_id with control character", text: `{"decision_id":"a\u0007","outcome":"CORRECT"}`, code: CodeRange, message: "decision_id"},
		{name: "array", text: `[{"decision_id":"a","outcome":"CORRECT"}]`, code: CodeNotObject, message: "record is a JSON array, not an object"},
		{name: "trailing garbage", text: `{"decision_id":"a","outcome":"CORRECT"}]`, code: CodeJSON, message: "after top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, warns, bad := ParseOutcome([]byte(tt.text))
			if tt.code != "" {
				if bad == nil {
					t.Fatalf("ParseOutcome(%s) accepted; want %s", tt.text, tt.code)
				}
				if bad.Code != tt.code || !strings.Contains(bad.Message, tt.message) {
					t.Errorf("ParseOutcome(%s) = %q: %s; want %q containing %q", tt.text, bad.Code, bad.Message, tt.code, tt.message)
				}
				return
			}
			if bad != nil {
				t.Fatalf("ParseOutcome(%s) rejected: %s", tt.text, bad.Message)
			}
			if p.OutcomeRecord != tt.want {
				t.Errorf("ParseOutcome(%s) = %+v; want %+v", tt.text, p.OutcomeRecord, tt.want)
			}
			if got := remarkCodes(warns); got != tt.warns {
				t.Errorf("ParseOutcome(%s) warnings = %q; want %q", tt.text, got, tt.warns)
			}
		})
	}
}

func TestProblemError(t *testing.T) {
	tests := []struct {
		p      Problem
		want   string
		benign bool
	}{
		{Problem{File: "j.jsonl", Line: 3, LineEnd: 3, Severity: SevError, Code: CodeEnum, Message: "bad"}, "j.jsonl:3: bad", false},
		{Problem{File: "j.jsonl", Line: 3, LineEnd: 9, Severity: SevError, Code: CodeJSON, Message: "bad"}, "j.jsonl:3-9: bad", false},
		{Problem{File: "j.jsonl", Line: 2, LineEnd: 2, Severity: SevWarning, Code: CodeTS, Message: "no ts"}, "j.jsonl:2: warning: no ts", true},
		// A torn fragment is a warning, listed and counted as one.
		{Problem{File: "j.jsonl", Line: 4, LineEnd: 4, Severity: SevWarning, Code: CodeTorn, Message: "torn"}, "j.jsonl:4: warning: torn", true},
		// One that import rejects is an error like any other.
		{Problem{File: "src.jsonl", Line: 4, LineEnd: 4, Severity: SevError, Code: CodeTorn, Message: "torn"}, "src.jsonl:4: torn", false},
	}
	for _, tt := range tests {
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("%+v.Error() = %q; want %q", tt.p, got, tt.want)
		}
		if got := tt.p.Benign(); got != tt.benign {
			t.Errorf("%+v.Benign() = %v; want %v", tt.p, got, tt.benign)
		}
	}
}
