package ceo_test

import (
	"testing"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

func TestRetroErrors(t *testing.T) {
	tests := []struct {
		name, id, outcome string
		want              []string
	}{
		{"unknown id", "iter-9-9", "CORRECT", []string{`"iter-9-9"`, "no decision"}},
		{"empty id", " ", "CORRECT", []string{"id is required"}},
		{"unknown outcome", "iter-6-1", "MAYBE", []string{`"MAYBE"`, "CONFIRMED, FAILED"}},
		{"PENDING takes a verdict back only with evidence", "iter-6-1", "PENDING", []string{"evidence is required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.write(project.StateFile, explainedState(t))
			d := past("iter-6-1", 6, "2026-03-08T10:00:00Z")
			e.appendRecords(project.DecisionsFile, &d)
			e.sync()
			stateBefore := e.mustRead(project.StateFile)
			_, err := ceo.Retro(e.ctx, e.ix, tt.id, tt.outcome, "", fixed(t0))
			inputError(t, err, tt.want...)
			if _, ok := e.read(project.RetroFile); ok {
				t.Errorf("Retro created %s", project.RetroFile)
			}
			if got := e.mustRead(project.StateFile); got != stateBefore {
				t.Errorf("state file changed:\n%s", got)
			}
		})
	}
}

func TestRetroOutcomes(t *testing.T) {
	tests := []struct {
		outcome string
		want    string
	}{
		{"CORRECT", "CORRECT"},
		{"CONFIRMED", "CORRECT"},
		{"INCORRECT", "INCORRECT"},
		{"FAILED", "INCORRECT"},
		{"failed", "INCORRECT"},
	}
	for _, tt := range tests {
		t.Run(tt.outcome, func(t *testing.T) {
			e := newEnv(t)
			e.write(project.StateFile, explainedState(t))
			d := past("iter-6-1", 6, "2026-03-08T10:00:00Z")
			e.appendRecords(project.DecisionsFile, &d)
			e.sync()
			res, err := ceo.Retro(e.ctx, e.ix, "iter-6-1", tt.outcome, "commit 4f2a91c, CI green", fixed(t0))
			if err != nil {
				t.Fatalf("Retro: %v", err)
			}
			if res.DecisionID != "iter-6-1" || res.Outcome != tt.want || res.Previous != "PENDING" {
				t.Errorf("Retro() = %+v; want iter-6-1 %s, previous PENDING", res, tt.want)
			}
			if got := e.decision("iter-6-1").Outcome; got != tt.want {
				t.Errorf("iter-6-1 outcome = %q; want %q", got, tt.want)
			}
			correct, incorrect := 0, 0
			if tt.want == "CORRECT" {
				correct = 1
			} else {
				incorrect = 1
			}
			if res.Trust.Correct != correct || res.Trust.Incorrect != incorrect {
				t.Errorf("Retro().Trust = %d/%d; want %d/%d", res.Trust.Correct, res.Trust.Incorrect, correct, incorrect)
			}
			lines := e.lines(project.RetroFile)
			want := map[string]any{"ts": "2026-03-08T10:15:00.000000Z", "decision_id": "iter-6-1", "outcome": tt.want, "evidence": "commit 4f2a91c, CI green"}
			if len(lines) != 1 || !equalMaps(lines[0], want) {
				t.Errorf("retrograde journal = %v; want one line %v", lines, want)
			}
			if got, want := e.mustRead(project.StateFile), replaceState(t, correct, incorrect, "standard"); got != want {
				t.Errorf("state file =\n%s\nwant\n%s", got, want)
			}
			// The decision's own line is never edited.
			if got := e.lines(project.DecisionsFile); len(got) != 1 || got[0]["verification"] != "PENDING" {
				t.Errorf("decision journal = %v; want the line untouched", got)
			}
		})
	}
}

func equalMaps(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRetroSupersedes: a later outcome for the same decision is current;
// every outcome stays in the retrograde journal.
func TestRetroSupersedes(t *testing.T) {
	tests := []struct {
		name   string
		second time.Time
	}{
		{"a minute later", t0.Add(time.Minute)},
		{"in the same instant", t0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.write(project.StateFile, explainedState(t))
			d := past("iter-6-1", 6, "2026-03-08T10:00:00Z")
			e.appendRecords(project.DecisionsFile, &d)
			e.sync()
			if _, err := ceo.Retro(e.ctx, e.ix, "iter-6-1", "CONFIRMED", "CI green", fixed(t0)); err != nil {
				t.Fatal(err)
			}
			res, err := ceo.Retro(e.ctx, e.ix, "iter-6-1", "FAILED", "reverted in 9c1d", fixed(tt.second))
			if err != nil {
				t.Fatal(err)
			}
			if res.Previous != "CORRECT" || res.Outcome != "INCORRECT" {
				t.Errorf("second Retro() = previous %q outcome %q; want CORRECT, INCORRECT", res.Previous, res.Outcome)
			}
			if got := e.decision("iter-6-1").Outcome; got != "INCORRECT" {
				t.Errorf("iter-6-1 outcome = %q; want INCORRECT (the later verdict)", got)
			}
			lines := e.lines(project.RetroFile)
			if len(lines) != 2 || lines[0]["outcome"] != "CORRECT" || lines[1]["outcome"] != "INCORRECT" ||
				lines[0]["evidence"] != "CI green" || lines[1]["evidence"] != "reverted in 9c1d" {
				t.Errorf("retrograde journal = %v; want both verdicts in order", lines)
			}
			if got, want := e.mustRead(project.StateFile), replaceState(t, 0, 1, "standard"); got != want {
				t.Errorf("state file =\n%s\nwant\n%s", got, want)
			}
			// Re-reading the files from scratch gives the same answer.
			e.rebuild()
			if got := e.decision("iter-6-1").Outcome; got != "INCORRECT" {
				t.Errorf("iter-6-1 outcome after a rebuild = %q; want INCORRECT", got)
			}
		})
	}
}

func TestRetroDryRun(t *testing.T) {
	e := newEnv(t)
	e.write(project.StateFile, explainedState(t))
	d := past("iter-6-1", 6, "2026-03-08T10:00:00Z")
	e.appendRecords(project.DecisionsFile, &d)
	e.sync()
	stateBefore := e.mustRead(project.StateFile)
	opts := fixed(t0)
	opts.DryRun = true
	res, err := ceo.Retro(e.ctx, e.ix, "iter-6-1", "CONFIRMED", "", opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "CORRECT" || res.Previous != "PENDING" {
		t.Errorf("Retro(dry run) = %+v; want CORRECT from PENDING", res)
	}
	if _, ok := e.read(project.RetroFile); ok {
		t.Errorf("a dry run created %s", project.RetroFile)
	}
	if got := e.decision("iter-6-1").Outcome; got != "PENDING" {
		t.Errorf("outcome after a dry run = %q; want PENDING", got)
	}
	if got := e.mustRead(project.StateFile); got != stateBefore {
		t.Errorf("state file changed by a dry run:\n%s", got)
	}
}

// TestRetroOnDecisionLineVerdict: an outcome first carried by a decision
// line's retrograde field is superseded by a later retro.
func TestRetroOnDecisionLineVerdict(t *testing.T) {
	e := newEnv(t)
	d1 := past("iter-5-1", 5, "2026-03-08T09:00:00Z")
	d2 := past("iter-6-1", 6, "2026-03-08T10:00:00Z")
	prev := "iter-5-1"
	d2.Retrograde = journal.Retrograde{PreviousID: &prev, Outcome: "CORRECT"}
	e.appendRecords(project.DecisionsFile, &d1, &d2)
	e.sync()
	if got := e.decision("iter-5-1").Outcome; got != "CORRECT" {
		t.Fatalf("iter-5-1 outcome = %q; want CORRECT from iter-6-1's retrograde field", got)
	}
	res, err := ceo.Retro(e.ctx, e.ix, "iter-5-1", "INCORRECT", "", fixed(t0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Previous != "CORRECT" {
		t.Errorf("Retro().Previous = %q; want CORRECT", res.Previous)
	}
	if got := e.decision("iter-5-1").Outcome; got != "INCORRECT" {
		t.Errorf("iter-5-1 outcome = %q; want INCORRECT", got)
	}
}
