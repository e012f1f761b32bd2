package ceo_test

import (
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// A state file that cannot be read must not turn a durably written record
// into a reported failure: the caller would write it again.
func TestStateFailureAfterWriteIsAWarning(t *testing.T) {
	e := newEnv(t)
	e.write(project.StateFile, `{"active": true, "iteration": 5,`)
	in := ceo.Input{Title: "Pin the linter version", Category: "quality", Impact: "low", Reversible: boolp(true), Iteration: int64p(9)}
	res, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0))
	if err != nil {
		t.Fatalf("Decide with a broken state file: %v; want the decision recorded and a warning", err)
	}
	if !res.Written || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], project.StateFile) {
		t.Fatalf("Decide: Written %v, Warnings %q; want written with one warning naming %s", res.Written, res.Warnings, project.StateFile)
	}
	if got := len(e.lines(project.DecisionsFile)); got != 1 {
		t.Fatalf("%s has %d lines; want 1", project.DecisionsFile, got)
	}
	rr, err := ceo.Retro(e.ctx, e.ix, res.Decision.ID, "CORRECT", "tests pass", fixed(t0))
	if err != nil {
		t.Fatalf("Retro with a broken state file: %v; want the outcome recorded and a warning", err)
	}
	if len(rr.Warnings) != 1 || len(e.lines(project.RetroFile)) != 1 {
		t.Fatalf("Retro: Warnings %q, %d retro lines; want one warning and one line", rr.Warnings, len(e.lines(project.RetroFile)))
	}
	if got := e.mustRead(project.StateFile); got != `{"active": true, "iteration": 5,` {
		t.Errorf("state file changed to %q; a file orbit cannot parse must be left as it is", got)
	}

	// Without an iteration the state file is where it comes from: an
	// error, and nothing written.
	in.Iteration = nil
	if _, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0)); err == nil {
		t.Error("Decide without --iteration and a broken state file: no error; want one naming the file")
	}
	if got := len(e.lines(project.DecisionsFile)); got != 1 {
		t.Errorf("%s has %d lines after a failed decide; want still 1", project.DecisionsFile, got)
	}
}

// A record longer than a journal line may be is refused before anything is
// written: appended, every sync would reject it, and its id would be handed
// out again.
func TestRecordLongerThanALineIsRefused(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("x", journal.MaxLineBytes)
	in := ceo.Input{Title: "Pin the linter version", Category: "quality", Impact: "low", Reversible: boolp(true), Context: long}
	_, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0))
	inputError(t, err, "context is 1048576 bytes long; at most 65536")
	// Fields each within bounds whose escapes (a control byte is six) make
	// the line too long.
	ctl := strings.Repeat("\x01", journal.MaxFieldBytes-1)
	in.Context, in.Reason, in.NextAction, in.Decision = ctl, ctl, ctl, "APPROVED"
	_, err = ceo.Decide(e.ctx, e.ix, in, fixed(t0))
	inputError(t, err, "byte limit")
	if _, ok := e.read(project.DecisionsFile); ok && len(e.lines(project.DecisionsFile)) != 0 {
		t.Fatalf("a refused decision was appended")
	}

	in.Context, in.Reason, in.NextAction, in.Decision = "", "", "", ""
	res, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ceo.Retro(e.ctx, e.ix, res.Decision.ID, "CORRECT", long+"y", fixed(t0))
	inputError(t, err, "byte limit")
	if _, ok := e.read(project.RetroFile); ok && len(e.lines(project.RetroFile)) != 0 {
		t.Fatalf("a refused outcome was appended")
	}

	// In a batch, the long one is refused and the others recorded.
	ins := []ceo.Input{
		{Title: "Add eqeqeq", Category: "quality", Impact: "low", Reversible: boolp(true)},
		{Title: "Add a long one", Category: "quality", Impact: "low", Reversible: boolp(true), Context: ctl, Reason: ctl, NextAction: ctl, Decision: "APPROVED"},
	}
	rs, errs, err := ceo.DecideBatch(e.ctx, e.ix, ins, fixed(t0))
	if err != nil {
		t.Fatal(err)
	}
	if !rs[0].Written || errs[0] != nil {
		t.Errorf("batch item 0: written %v, err %v; want written", rs[0].Written, errs[0])
	}
	inputError(t, errs[1], "byte limit")
	if got := len(e.lines(project.DecisionsFile)); got != 2 {
		t.Errorf("%s has %d lines; want 2", project.DecisionsFile, got)
	}
}
