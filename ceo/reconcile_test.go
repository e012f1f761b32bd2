package ceo_test

import (
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/trust"
)

// TestReconcileAdoptsCounters is issue 15, point 1: a state file written
// before orbit says 47 correct, 2 incorrect. Those counters are adopted as
// a baseline the first time orbit meets them, never zeroed: recorded once,
// in a file (a rebuild of the index keeps them), and counted with what is
// recorded since; a counter moved by hand afterwards is replaced by
// orbit's count, with a note.
func TestReconcileAdoptsCounters(t *testing.T) {
	e := newEnv(t)
	e.copyIn(seedStateFile, project.StateFile) // 47 correct, 2 incorrect, "standard"
	d := past("iter-6-2", 6, "2026-03-08T10:00:00Z")
	e.appendRecords(project.DecisionsFile, &d)
	e.sync()

	in := ceo.Input{Title: "Pin eslint", Category: "quality", Impact: "low", Reversible: boolp(true)}
	if _, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0)); err != nil {
		t.Fatal(err)
	}
	// 47/49 = 95.9% over 49 decisions: elevated by seed 000's rule.
	if got, want := e.mustRead(project.StateFile), replaceState(t, 47, 2, "elevated"); got != want {
		t.Errorf("state file after the first decision =\n%s\nwant\n%s", got, want)
	}
	if _, err := ceo.Retro(e.ctx, e.ix, "iter-6-2", "CORRECT", "commit 4f2a91c", fixed(t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	h, err := trust.Current(e.ctx, e.store)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := h.AccuracyText(), "47/49 from before orbit + 1/1 recorded since = 48/50 = 96.0%"; got != want {
		t.Errorf("AccuracyText() = %q; want %q", got, want)
	}
	if got, want := e.mustRead(project.StateFile), replaceState(t, 48, 2, "elevated"); got != want {
		t.Errorf("state file after a retro =\n%s\nwant\n%s", got, want)
	}

	// Recorded once, in the loop event journal.
	events := e.mustRead(loop.EventsFile)
	if n := strings.Count(events, `"event":"adopt"`); n != 1 {
		t.Errorf("%s holds %d adopt events; want 1:\n%s", loop.EventsFile, n, events)
	}
	if !strings.Contains(events, `"correct_decisions":47`) || !strings.Contains(events, `"incorrect_decisions":2`) {
		t.Errorf("adopt event lacks the baseline:\n%s", events)
	}

	// The index is derived: a rebuild gives the same totals.
	e.rebuild()
	if h2, err := trust.Current(e.ctx, e.store); err != nil || h2 != h {
		t.Errorf("after a rebuild Current() = %+v, %v; want %+v", h2, err, h)
	}

	// The agent bumps the counter by hand (the seed's INSPECT phase does):
	// not adopted again; orbit's count stands, and the note says so.
	e.write(project.StateFile, replaceState(t, 49, 2, "elevated"))
	st, err := loop.ReadState(e.proj.Root, project.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ceo.Reconcile(e.ctx, e.ix, st, t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Adopted || rec.Trust.Correct != 48 {
		t.Errorf("Reconcile after a hand edit: adopted %t, correct %d; want not adopted, 48", rec.Adopted, rec.Trust.Correct)
	}
	if len(rec.Notes) != 1 || !strings.Contains(rec.Notes[0], "said 49 correct, 2 incorrect; orbit counts 48, 2") {
		t.Errorf("notes = %q; want the hand-moved counter named", rec.Notes)
	}
	if n := strings.Count(e.mustRead(loop.EventsFile), `"event":"adopt"`); n != 1 {
		t.Errorf("%d adopt events after a hand edit; want 1", n)
	}
}

// TestReconcileExplainedCounters: counters the journal's outcome events
// explain are not a baseline (the loop wrote its verdicts in the journal
// too); orbit records that it met them (0/0), so that a later correction
// of a verdict is never taken for counters from before orbit.
func TestReconcileExplainedCounters(t *testing.T) {
	e := newEnv(t)
	e.seedOutcomes(3, 1)
	e.write(project.StateFile, replaceState(t, 3, 1, "standard"))
	if err := ceo.SyncState(e.ctx, e.ix, t0); err != nil {
		t.Fatal(err)
	}
	h, err := trust.Current(e.ctx, e.store)
	if err != nil {
		t.Fatal(err)
	}
	if h.Baseline.N != 0 || h.Correct != 3 || h.Incorrect != 1 {
		t.Errorf("Current() = %+v; want 3/4 and no baseline", h)
	}
	if n := strings.Count(e.mustRead(loop.EventsFile), `"event":"adopt"`); n != 1 {
		t.Errorf("%d adopt events; want 1 (0/0: met)", n)
	}
	// A correction: score-4 (CORRECT) proved INCORRECT. The state still
	// says 3/1; orbit now counts 2/2. Nothing is adopted.
	if _, err := ceo.Retro(e.ctx, e.ix, "score-4", "INCORRECT", "reverted", fixed(t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if got, want := e.mustRead(project.StateFile), replaceState(t, 2, 2, "standard"); got != want {
		t.Errorf("state file after a correction =\n%s\nwant\n%s", got, want)
	}
}

// TestReconcileStartedAtPlaceholder is issue 15, point 6: the upstream
// initial state writes "started_at": "$STARTED". orbit records when it
// first saw the loop, the time limit counts from there, and it warns.
func TestReconcileStartedAtPlaceholder(t *testing.T) {
	e := newEnv(t)
	e.copyIn("testdata/doc-example.initial.ceo-loop-state.json", project.StateFile)
	st, err := loop.ReadState(e.proj.Root, project.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ceo.Reconcile(e.ctx, e.ix, st, t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Notes) != 1 || !strings.Contains(rec.Notes[0], `started_at "$STARTED"`) || !strings.Contains(rec.Notes[0], "2026-03-08T10:15:00Z") {
		t.Errorf("notes = %q; want the placeholder named and the first sight", rec.Notes)
	}
	if err := st.Write(); err != nil {
		t.Fatal(err)
	}
	o, _, err := ceo.ReadLoopState(e.proj.Root, project.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	if !o.StartedUnreadable || o.StartedAt != "$STARTED" || !o.Started.Equal(t0) {
		t.Errorf("LoopInfo started %q unreadable %t Started %v; want $STARTED kept, unreadable, Started %v", o.StartedAt, o.StartedUnreadable, o.Started, t0)
	}
	if want := t0.Add(30 * time.Minute); !o.Deadline().Equal(want) {
		t.Errorf("Deadline() = %v; want %v (30 minutes from first sight)", o.Deadline(), want)
	}
	// A second reconcile keeps the first sight.
	st, _ = loop.ReadState(e.proj.Root, project.StateFile)
	if _, err := ceo.Reconcile(e.ctx, e.ix, st, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := st.String(ceo.FirstSeenField); v != "2026-03-08T10:15:00Z" {
		t.Errorf("first_seen_at = %q after a later reconcile; want the first sight kept", v)
	}
}
