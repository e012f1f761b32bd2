package journal

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/db"
)

// voidLine is a void line of the retrograde journal (void false takes a
// void back).
func voidLine(minute int, id string, void bool, why string) string {
	return fmt.Sprintf(`{"ts":%q,"decision_id":%q,"void":%t,"evidence":%q}`, ts(minute), id, void, why)
}

// totals is every trust figure the index keeps, as rows of text.
func (e *testEnv) totals() []string {
	e.tb.Helper()
	var out []string
	for _, q := range []string{
		`SELECT outcome || '=' || n FROM outcome_totals ORDER BY outcome`,
		`SELECT category || '/' || tier || '/' || depth || '/' || requestor || ' ' || correct || ':' || incorrect FROM trust_cells WHERE correct + incorrect > 0 ORDER BY 1`,
		`SELECT iteration || ' ' || correct || ':' || incorrect FROM trust_iterations WHERE correct + incorrect > 0 ORDER BY 1`,
		`SELECT bucket || ' ' || n || ' ' || correct || ' ' || conf_u || ' ' || conf2_u2 || ' ' || conf_correct_u FROM trust_calibration WHERE n > 0 ORDER BY 1`,
	} {
		var rows []string
		if err := e.store.DB.SelectContext(e.ctx, &rows, q); err != nil {
			e.tb.Fatal(err)
		}
		out = append(out, strings.Join(rows, "; "))
	}
	return out
}

func (e *testEnv) counted() (correct, incorrect int64) {
	e.tb.Helper()
	c, err := e.store.Counts(e.ctx)
	if err != nil {
		e.tb.Fatal(err)
	}
	return c.Correct, c.Incorrect
}

// TestSyncVoids: a void line takes its decision out of every trust figure,
// the unverified list and precedent text, and says why; a later void false
// puts it back; the latest void by the files' order wins; a void that
// arrives before its decision applies when the decision does; and a fresh
// index of the same files gives the same answers.
func TestSyncVoids(t *testing.T) {
	e := newTestEnv(t)
	e.write(decFile, lines(dec("iter-1-1", 1, 0), dec("iter-1-2", 1, 1), dec("iter-1-3", 1, 2)))
	e.write(retroFile, lines(
		retroLine(10, "iter-1-1", OutcomeCorrect),
		retroLine(11, "iter-1-2", OutcomeIncorrect),
		voidLine(12, "iter-1-2", true, "recorded twice by a retried hook"),
		voidLine(13, "iter-2-1", true, "a test run"), // before its decision
	))
	rep := e.sync()
	if rep.Events != 2 || len(rep.Problems) != 1 || rep.Problems[0].Code != CodeUnknownID || rep.Problems[0].Line != 4 {
		t.Fatalf("sync = %d events, problems %q; want 2 outcome events and one unknown-decision warning at line 4", rep.Events, problemSummary(rep.Problems))
	}
	d := e.decision("iter-1-2")
	if !d.Voided || d.VoidReason != "recorded twice by a retried hook" || d.Outcome != OutcomeIncorrect {
		t.Errorf("iter-1-2 = voided %v (%q), outcome %s; want voided with its reason, its outcome kept", d.Voided, d.VoidReason, d.Outcome)
	}
	if c, i := e.counted(); c != 1 || i != 0 {
		t.Errorf("counts = %d correct, %d incorrect; want 1, 0: a voided decision's verdict counts nowhere", c, i)
	}
	if got := e.totals(); strings.Contains(got[1], ":1") || got[2] != "1 1:0" {
		t.Errorf("trust tables = %q; want iter-1-2's INCORRECT in none", got)
	}
	texts, err := e.store.Candidates(e.ctx, []int64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 2 || texts[0].Seq == 2 || texts[1].Seq == 2 {
		t.Errorf("Candidates = %+v; want iter-1-2, voided, left out of precedent search", texts)
	}

	// The decision the early void names arrives: voided at once, never
	// stale; the other unverified one is.
	e.appendRaw(decFile, lines(dec("iter-2-1", 2, 20)))
	e.sync()
	if d := e.decision("iter-2-1"); !d.Voided || d.VoidReason != "a test run" {
		t.Errorf("iter-2-1 = voided %v (%q); want voided by the line that came first", d.Voided, d.VoidReason)
	}
	unverified, n, err := e.store.Unverified(e.ctx, db.StaleFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || len(unverified) != 1 || unverified[0].ID != "iter-1-3" {
		t.Errorf("Unverified = %d: %v; want iter-1-3 alone (iter-2-1 is voided)", n, unverified)
	}

	// Taken back: the verdict counts again. A void false written later but
	// dated earlier than the void loses to it (event time decides).
	e.appendRaw(retroFile, lines(voidLine(30, "iter-1-2", false, "voided the wrong decision"), voidLine(5, "iter-2-1", false, "dated before the void")))
	e.sync()
	if d := e.decision("iter-1-2"); d.Voided || d.VoidReason != "" {
		t.Errorf("iter-1-2 after void false = voided %v (%q); want counted again", d.Voided, d.VoidReason)
	}
	if !e.decision("iter-2-1").Voided {
		t.Errorf("iter-2-1 un-voided by a line dated before its void; want the later void to stand")
	}
	if c, i := e.counted(); c != 1 || i != 1 {
		t.Errorf("counts after void false = %d correct, %d incorrect; want 1, 1", c, i)
	}
	// Voided again, then judged again while voided: still out.
	e.appendRaw(retroFile, lines(voidLine(40, "iter-1-2", true, "it was a duplicate after all"), retroLine(41, "iter-1-2", OutcomeCorrect)))
	e.sync()
	if c, i := e.counted(); c != 1 || i != 0 {
		t.Errorf("counts after a verdict on a voided decision = %d correct, %d incorrect; want 1, 0", c, i)
	}

	before, beforeTotals := e.snapshot(), e.totals()
	vr, err := e.ix.Verify(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !vr.OK() {
		t.Errorf("verify: %+v; want the void lines to agree with the index", vr.Findings)
	}
	e.rebuild()
	e.sync()
	if after := e.snapshot(); !reflect.DeepEqual(before, after) {
		t.Errorf("rebuilt index differs from the incremental one:\n%s", diffSnapshots(before, after))
	}
	if after := e.totals(); !reflect.DeepEqual(beforeTotals, after) {
		t.Errorf("trust tables after rebuild = %q; want %q", after, beforeTotals)
	}
}

// TestSyncVoidLinesRejected: a void line without why, with an outcome too,
// or whose void is not a boolean is rejected with its line, and kept in the
// file.
func TestSyncVoidLinesRejected(t *testing.T) {
	e := newTestEnv(t)
	e.write(decFile, lines(dec("iter-1-1", 1, 0)))
	e.write(retroFile, lines(
		`{"ts":"2026-03-08T10:01:00Z","decision_id":"iter-1-1","void":true}`,
		`{"ts":"2026-03-08T10:01:00Z","decision_id":"iter-1-1","void":true,"evidence":"  "}`,
		`{"ts":"2026-03-08T10:01:00Z","decision_id":"iter-1-1","void":true,"outcome":"CORRECT","evidence":"x"}`,
		`{"ts":"2026-03-08T10:01:00Z","decision_id":"iter-1-1","void":"yes","evidence":"x"}`,
	))
	rep := e.sync()
	want := []string{"missing required field: evidence", "missing required field: evidence", "not both", "void: want boolean, got string"}
	if len(rep.Problems) != len(want) {
		t.Fatalf("problems = %q; want %d rejected lines", problemSummary(rep.Problems), len(want))
	}
	for i, p := range rep.Problems {
		if p.Severity != SevError || p.Line != i+1 || !strings.Contains(p.Message, want[i]) {
			t.Errorf("problem %d = %+v; want an error at line %d containing %q", i, p, i+1, want[i])
		}
	}
	if e.decision("iter-1-1").Voided {
		t.Errorf("iter-1-1 voided by a rejected line")
	}
}
