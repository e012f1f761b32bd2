package journal

import (
	"bytes"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/db"
)

// A decision line written as orbit writes it is its fields again: the index
// keeps no second copy of it, and gives back its exact bytes from the fields.
// Any other line keeps its own text. Export, verify and a rewritten past's
// recovery file read the text either way.
func TestRawKeptOnlyWhenNotCanonical(t *testing.T) {
	e := newTestEnv(t)
	conf := func(f float64) *float64 { return &f }
	prev := "iter-1-1"
	canonical := []Decision{
		{ID: "iter-1-1", Iteration: 1, TS: ts(0), Tier: "auto_approve", Depth: "trivial", Category: "quality", Input: "plain", Decision: "APPROVED",
			Reason: "low risk", NextAction: "commit", Verification: "PENDING", Retrograde: Retrograde{Outcome: "N/A"}, Confidence: conf(0.98)},
		// Escapes, HTML characters, control characters, non-ASCII text and
		// every optional field.
		{ID: "iter-1-2", Iteration: 1, TS: ts(1), Tier: "deep_think", Depth: "heavy", Category: "architecture",
			Input: "quote \" backslash \\ tab \t newline \n bell \a <b>&amp;</b> é 日本 🚀", Decision: "REJECTED",
			Reason: "", NextAction: "", Verification: "PENDING", Retrograde: Retrograde{PreviousID: &prev, Outcome: "CORRECT"},
			Confidence: conf(0.5), Requestor: "ci", Context: "ctx \x01 \x1f", RequestID: "req-1"},
		{ID: "iter-2-1", Iteration: 2, TS: ts(2), Tier: "auto_approve", Depth: "trivial", Category: "quality", Input: "no confidence",
			Decision: "APPROVED", Reason: "r", NextAction: "n", Verification: "PENDING", Retrograde: Retrograde{Outcome: "N/A"}},
		{ID: "iter-2-2", Iteration: 2, TS: ts(3), Tier: "auto_approve", Depth: "trivial", Category: "quality", Input: "whole confidence",
			Decision: "APPROVED", Reason: "r", NextAction: "n", Verification: "PENDING", Retrograde: Retrograde{Outcome: "N/A"}, Confidence: conf(1)},
	}
	var text strings.Builder
	for _, d := range canonical {
		line, err := Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		text.Write(line)
	}
	kept := []string{
		// Another field order, spacing, an unknown field, Go's HTML escape,
		// a float written otherwise, U+2028 (SQLite leaves it unescaped).
		`{"iteration":3,"id":"iter-3-1","ts":"` + ts(4) + `","tier":"auto_approve","depth":"trivial","category":"quality","input":"x","decision":"APPROVED","reason":"r","next_action":"n","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"}}`,
		`{"id": "iter-3-2", "iteration": 3, "ts": "` + ts(5) + `", "tier": "auto_approve", "depth": "trivial", "category": "quality", "input": "x", "decision": "APPROVED", "reason": "r", "next_action": "n", "verification": "PENDING", "retrograde": {"previous_id": null, "outcome": "N/A"}}`,
		`{"id":"iter-3-3","iteration":3,"ts":"` + ts(6) + `","tier":"auto_approve","depth":"trivial","category":"quality","input":"x","decision":"APPROVED","reason":"r","next_action":"n","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"},"extra":{"kept":true}}`,
		`{"id":"iter-3-4","iteration":3,"ts":"` + ts(7) + `","tier":"auto_approve","depth":"trivial","category":"quality","input":"a \u003c b","decision":"APPROVED","reason":"r","next_action":"n","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"}}`,
		`{"id":"iter-3-5","iteration":3,"ts":"` + ts(8) + `","tier":"auto_approve","depth":"trivial","category":"quality","input":"x","decision":"APPROVED","reason":"r","next_action":"n","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"},"confidence":0.980}`,
		`{"id":"iter-3-6","iteration":3,"ts":"` + ts(9) + `","tier":"auto_approve","depth":"trivial","category":"quality","input":"line\u2028separator","decision":"APPROVED","reason":"r","next_action":"n","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"}}`,
	}
	text.WriteString(lines(kept...))
	e.write(decFile, text.String())
	if rep := e.sync(); rep.Decisions != len(canonical)+len(kept) || len(rep.Problems) != 0 {
		t.Fatalf("sync: %d decisions, problems %s; want %d, none", rep.Decisions, problemSummary(rep.Problems), len(canonical)+len(kept))
	}

	var stored []struct {
		ID  string `db:"id"`
		Raw string `db:"raw"`
	}
	if err := e.store.DB.Select(&stored, `SELECT id, raw FROM decisions ORDER BY seq`); err != nil {
		t.Fatal(err)
	}
	for i, s := range stored {
		if i < len(canonical) && s.Raw != "" {
			t.Errorf("%s: stored raw %q; want none (the line is its fields in orbit's form)", s.ID, s.Raw)
		}
		if i >= len(canonical) && s.Raw != kept[i-len(canonical)] {
			t.Errorf("%s: stored raw %q; want the line as it is in the file", s.ID, s.Raw)
		}
	}

	// Export gives back the file byte for byte, and verify finds the index
	// and the file alike.
	var out bytes.Buffer
	if _, err := ExportJSONL(e.ctx, e.store, db.DecisionFilter{}, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != text.String() {
		t.Errorf("export:\n%s\nwant the journal:\n%s", out.String(), text.String())
	}
	vr, err := e.ix.Verify(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(vr.Findings) != 0 {
		t.Errorf("verify: %s; want no problem", problemSummary(vr.Findings))
	}

	// A rewritten past: the recovery file holds the lines the index had,
	// exactly, the canonical ones rendered from their fields.
	all := strings.SplitAfter(text.String(), "\n")
	e.rewrite(decFile, all[0])
	rep := e.sync()
	if len(rep.Recovered) != 1 {
		t.Fatalf("Recovered = %q; want one file", rep.Recovered)
	}
	if got, want := e.read(rep.Recovered[0]), strings.Join(all[1:], ""); got != want {
		t.Errorf("recovery file:\n%s\nwant:\n%s", got, want)
	}
}
