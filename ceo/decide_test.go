package ceo_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/policy"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/trust"
)

// autoReason is the reason an auto-approved low, reversible item gets at
// standard trust.
const autoReason = "Auto-approved by the impact x reversibility matrix (low impact, reversible, trust standard)."

func TestStandardReasons(t *testing.T) {
	// The reasons the tests below expect are the policy's.
	if _, r, _ := policy.DefaultDecision(policy.AutoApprove, "low", true, trust.Standard); r != autoReason {
		t.Errorf("auto_approve reason = %q; want %q", r, autoReason)
	}
	want := "Escalated to human review by the impact x reversibility matrix (high impact, irreversible, trust demoted)."
	if _, r, _ := policy.DefaultDecision(policy.Escalate, "high", false, trust.Demoted); r != want {
		t.Errorf("escalate reason = %q; want %q", r, want)
	}
}

// defaultReason is the policy's reason for a tier's default decision.
func defaultReason(tier, impact string, reversible bool, level trust.Level) string {
	_, r, _ := policy.DefaultDecision(tier, impact, reversible, level)
	return r
}

func TestDecideAutoApprove(t *testing.T) {
	e := newEnv(t)
	in := ceo.Input{Title: "Add ESLint rule eqeqeq", Category: "quality", Impact: "low", Reversible: boolp(true)}
	res, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0))
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	want := journal.Decision{
		ID: "iter-1-1", Iteration: 1, TS: "2026-03-08T10:15:00Z", Tier: "auto_approve", Depth: "trivial",
		Category: "quality", Input: "Add ESLint rule eqeqeq", Decision: "APPROVED", Reason: autoReason,
		Verification: "PENDING", Retrograde: journal.Retrograde{Outcome: "N/A"},
	}
	if !reflect.DeepEqual(res.Decision, want) {
		t.Errorf("Decide().Decision =\n%+v\nwant\n%+v", res.Decision, want)
	}
	if !res.Written || res.Level != trust.Standard || res.Impact != "low" || !res.Reversible {
		t.Errorf("Decide() Written %v Level %q Impact %q Reversible %v; want true standard low true", res.Written, res.Level, res.Impact, res.Reversible)
	}
	line, err := journal.Marshal(&want)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.mustRead(project.DecisionsFile); got != string(line) {
		t.Errorf("journal =\n%s\nwant exactly one line\n%s", got, line)
	}
	if got := e.decision("iter-1-1"); got.Outcome != "PENDING" || got.Tier != "auto_approve" {
		t.Errorf("indexed iter-1-1: outcome %q tier %q; want PENDING auto_approve", got.Outcome, got.Tier)
	}
	// No state file: none is created.
	if _, ok := e.read(project.StateFile); ok {
		t.Errorf("Decide created %s; want no state file when the loop has none", project.StateFile)
	}
}

// TestDecideTiers decides one item on every tier path, at the trust level
// the recorded outcomes give.
func TestDecideTiers(t *testing.T) {
	tests := []struct {
		name               string
		correct, incorrect int // scored outcomes recorded first
		impact             string
		reversible         bool
		decision, reason   string
		wantLevel          trust.Level
		wantTier           string
		wantDecision       string
		wantReason         string
		wantDepth          string
	}{
		{"standard low reversible auto-approves", 0, 0, "low", true, "", "", trust.Standard, "auto_approve", "APPROVED", autoReason, "trivial"},
		{"auto-approve keeps an explicit reason", 0, 0, "low", true, "", "lint only", trust.Standard, "auto_approve", "APPROVED", "lint only", "trivial"},
		{"auto-approve tier with an explicit rejection", 0, 0, "low", true, "REJECTED", "not now", trust.Standard, "auto_approve", "REJECTED", "not now", "trivial"},
		{"standard low irreversible with a verdict", 0, 0, "low", false, "APPROVED", "small", trust.Standard, "quick_review", "APPROVED", "small", "light"},
		{"standard medium irreversible with a verdict", 0, 0, "medium", false, "REJECTED", "too risky", trust.Standard, "deep_think", "REJECTED", "too risky", "medium"},
		{"demoted medium reversible escalates", 5, 15, "medium", true, "", "", trust.Demoted, "escalate", "NEEDS_REVIEW", defaultReason("escalate", "medium", true, trust.Demoted), "light"},
		{"demoted high irreversible escalates", 15, 5, "high", false, "", "", trust.Demoted, "escalate", "NEEDS_REVIEW", defaultReason("escalate", "high", false, trust.Demoted), "heavy"},
		{"demoted high reversible escalates", 10, 10, "high", true, "", "", trust.Demoted, "escalate", "NEEDS_REVIEW", defaultReason("escalate", "high", true, trust.Demoted), "medium"},
		{"demoted low reversible still auto-approves", 0, 20, "low", true, "", "", trust.Demoted, "auto_approve", "APPROVED", defaultReason("auto_approve", "low", true, trust.Demoted), "trivial"},
		{"escalate with an agent's verdict", 0, 20, "medium", false, "APPROVED", "human said yes", trust.Demoted, "escalate", "APPROVED", "human said yes", "medium"},
		{"80% is not demoted", 16, 4, "medium", true, "APPROVED", "ok", trust.Standard, "quick_review", "APPROVED", "ok", "light"},
		{"elevated high reversible still needs a verdict", 20, 0, "high", true, "APPROVED", "ok", trust.Elevated, "quick_review", "APPROVED", "ok", "medium"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.correct+tt.incorrect > 0 {
				e.seedOutcomes(tt.correct, tt.incorrect)
			}
			in := ceo.Input{Title: "Item", Category: "feature", Impact: tt.impact, Reversible: boolp(tt.reversible),
				Decision: tt.decision, Reason: tt.reason, Iteration: int64p(2)}
			res, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0))
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			d := res.Decision
			if res.Level != tt.wantLevel || d.Tier != tt.wantTier || d.Decision != tt.wantDecision || d.Reason != tt.wantReason || d.Depth != tt.wantDepth {
				t.Errorf("Decide() = level %q tier %q decision %q reason %q depth %q; want %q %q %q %q %q",
					res.Level, d.Tier, d.Decision, d.Reason, d.Depth, tt.wantLevel, tt.wantTier, tt.wantDecision, tt.wantReason, tt.wantDepth)
			}
			got := e.decision(d.ID)
			if got.Tier != tt.wantTier || got.Decision != tt.wantDecision || got.Reason != tt.wantReason {
				t.Errorf("journaled %s = tier %q decision %q reason %q; want %q %q %q", d.ID, got.Tier, got.Decision, got.Reason, tt.wantTier, tt.wantDecision, tt.wantReason)
			}
		})
	}
}

// TestDecideElevatedAutoApproveReason: at elevated trust a medium-impact
// reversible item is auto-approved; the reason journaled for it must not
// say its impact was low.
func TestDecideElevatedAutoApproveReason(t *testing.T) {
	e := newEnv(t)
	e.seedOutcomes(20, 0)
	in := ceo.Input{Title: "Switch the cache to LRU", Category: "feature", Impact: "medium", Reversible: boolp(true)}
	res, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0))
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	if res.Level != trust.Elevated || res.Decision.Tier != policy.AutoApprove || res.Decision.Decision != "APPROVED" {
		t.Fatalf("Decide() = level %q tier %q decision %q; want elevated auto_approve APPROVED", res.Level, res.Decision.Tier, res.Decision.Decision)
	}
	if strings.Contains(res.Decision.Reason, "low impact") {
		t.Errorf("Decide() journaled reason %q for a medium-impact item; the journal is the only record of why, and it misstates the impact", res.Decision.Reason)
	}
}

func TestDecideInputErrors(t *testing.T) {
	rev := boolp(true)
	valid := ceo.Input{Title: "Item", Category: "feature", Impact: "low", Reversible: rev}
	with := func(f func(*ceo.Input)) ceo.Input { in := valid; f(&in); return in }
	tests := []struct {
		name string
		in   ceo.Input
		want []string
		// dryOK: a dry run classifies it, its decision open.
		dryOK bool
	}{
		{"quick_review without a decision", with(func(in *ceo.Input) { in.Reversible = boolp(false) }), []string{"decision is required", "quick_review"}, true},
		{"deep_think without a decision", with(func(in *ceo.Input) { in.Impact, in.Reversible = "medium", boolp(false) }), []string{"decision is required", "deep_think"}, true},
		{"quick_review high reversible without a decision", with(func(in *ceo.Input) { in.Impact = "high" }), []string{"quick_review"}, true},
		{"a decision without a reason", with(func(in *ceo.Input) { in.Decision = "APPROVED" }), []string{"reason is required"}, false},
		{"a decision with a blank reason", with(func(in *ceo.Input) { in.Decision, in.Reason = "REJECTED", "  " }), []string{"reason is required"}, false},
		{"no title", with(func(in *ceo.Input) { in.Title = " " }), []string{"title is required"}, false},
		{"unknown category", with(func(in *ceo.Input) { in.Category = "marketing" }), []string{"category", `"marketing"`, "not allowed"}, false},
		{"unknown impact", with(func(in *ceo.Input) { in.Impact = "huge" }), []string{"impact", `"huge"`, `did you mean "high"`}, false},
		{"reversibility unsaid", with(func(in *ceo.Input) { in.Reversible = nil }), []string{"--reversible", "--irreversible"}, false},
		{"unknown depth", with(func(in *ceo.Input) { in.Depth = "deep" }), []string{"depth", `"deep"`}, false},
		{"unknown decision", with(func(in *ceo.Input) { in.Decision, in.Reason = "MAYBE", "r" }), []string{"decision", `"MAYBE"`}, false},
		{"confidence above 1", with(func(in *ceo.Input) { in.Confidence = float64p(1.5) }), []string{"confidence"}, false},
		{"confidence below 0", with(func(in *ceo.Input) { in.Confidence = float64p(-0.1) }), []string{"confidence"}, false},
		{"iteration -1", with(func(in *ceo.Input) { in.Iteration = int64p(-1) }), []string{"iteration", "negative"}, false},
		{"retro to an unknown id", with(func(in *ceo.Input) { in.Retro = &ceo.RetroRef{ID: "iter-9-9", Outcome: "CORRECT"} }), []string{`retro "iter-9-9"`, "names no decision"}, false},
	}
	for _, tt := range tests {
		for _, dry := range []bool{false, true} {
			if dry && tt.dryOK {
				continue
			}
			name := tt.name
			if dry {
				name += "/dry run"
			}
			t.Run(name, func(t *testing.T) {
				e := newEnv(t)
				e.write(project.StateFile, explainedState(t))
				d := past("iter-6-1", 6, "2026-03-08T10:00:00Z")
				e.appendRecords(project.DecisionsFile, &d)
				journalBefore := e.mustRead(project.DecisionsFile)
				stateBefore := e.mustRead(project.StateFile)
				opts := fixed(t0)
				opts.DryRun = dry
				res, err := ceo.Decide(e.ctx, e.ix, tt.in, opts)
				inputError(t, err, tt.want...)
				if res.Written {
					t.Errorf("Decide() Written = true with an error")
				}
				if got := e.mustRead(project.DecisionsFile); got != journalBefore {
					t.Errorf("journal changed:\n%s\nwant\n%s", got, journalBefore)
				}
				if got := e.mustRead(project.StateFile); got != stateBefore {
					t.Errorf("state file changed:\n%s\nwant\n%s", got, stateBefore)
				}
				if _, ok := e.read(project.RetroFile); ok {
					t.Errorf("Decide created %s", project.RetroFile)
				}
			})
		}
	}
}

func TestDecideIDs(t *testing.T) {
	e := newEnv(t)
	// Hand-written lines: iter-6-1 filed under iteration 2, and iter-8-5 in
	// its own iteration.
	h1, h2 := past("iter-6-1", 2, "2026-03-08T09:00:00Z"), past("iter-8-5", 8, "2026-03-08T09:00:00Z")
	e.appendRecords(project.DecisionsFile, &h1, &h2)
	steps := []struct {
		iteration int64
		want      string
	}{
		{4, "iter-4-1"},
		{4, "iter-4-2"},
		{5, "iter-5-1"},
		{4, "iter-4-3"},
		{6, "iter-6-2"}, // iter-6-1 is taken by a line of iteration 2
		{6, "iter-6-3"},
		{8, "iter-8-6"}, // after the highest number in the iteration
		{2, "iter-2-1"}, // iteration 2 holds only iter-6-1
	}
	for i, s := range steps {
		in := ceo.Input{Title: "Item", Category: "quality", Impact: "low", Reversible: boolp(true), Iteration: int64p(s.iteration)}
		res, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0))
		if err != nil {
			t.Fatalf("step %d: Decide: %v", i, err)
		}
		if res.Decision.ID != s.want || res.Decision.Iteration != s.iteration {
			t.Errorf("step %d: Decide(iteration %d) id %q iteration %d; want %q", i, s.iteration, res.Decision.ID, res.Decision.Iteration, s.want)
		}
	}
	var ids []string
	for _, m := range e.lines(project.DecisionsFile) {
		ids = append(ids, m["id"].(string))
	}
	want := []string{"iter-6-1", "iter-8-5", "iter-4-1", "iter-4-2", "iter-5-1", "iter-4-3", "iter-6-2", "iter-6-3", "iter-8-6", "iter-2-1"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("journal ids = %v; want %v", ids, want)
	}
}

func TestDecideDefaultIteration(t *testing.T) {
	tests := []struct {
		name    string
		state   string // "" for no state file
		journal []int64
		wantID  string
	}{
		{"state file", "seed", []int64{12}, "iter-7-1"},
		{"state file, journal already has the iteration", "seed", []int64{7, 7}, "iter-7-3"},
		{"state iteration 0 falls back to the journal", "initial", []int64{3, 12, 5}, "iter-12-1"},
		{"state without iteration falls back to the journal", `{"active": true}`, []int64{4}, "iter-4-1"},
		{"state iteration null falls back to the journal", `{"iteration": null}`, []int64{4}, "iter-4-1"},
		{"no state, journal max", "", []int64{3, 12, 5}, "iter-12-1"},
		{"no state, empty journal", "", nil, "iter-1-1"},
		{"no state, journal of iteration 0", "", []int64{0}, "iter-1-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			switch tt.state {
			case "":
			case "seed":
				e.write(project.StateFile, explainedState(t))
			case "initial":
				e.copyIn("testdata/doc-example.initial.ceo-loop-state.json", project.StateFile)
			default:
				e.write(project.StateFile, tt.state)
			}
			for k, it := range tt.journal {
				d := past("hand-"+string(rune('a'+k)), it, "2026-03-08T09:00:00Z")
				if it == 7 {
					d.ID = "iter-7-" + string(rune('1'+k))
				}
				e.appendRecords(project.DecisionsFile, &d)
			}
			in := ceo.Input{Title: "Item", Category: "quality", Impact: "low", Reversible: boolp(true)}
			res, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0))
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if res.Decision.ID != tt.wantID {
				t.Errorf("Decide() id = %q; want %q", res.Decision.ID, tt.wantID)
			}
		})
	}
}

func TestDecideBadStateIteration(t *testing.T) {
	e := newEnv(t)
	e.write(project.StateFile, `{"iteration": "seven"}`)
	in := ceo.Input{Title: "Item", Category: "quality", Impact: "low", Reversible: boolp(true)}
	_, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0))
	if err == nil || !strings.Contains(err.Error(), "iteration") || !strings.Contains(err.Error(), project.StateFile) {
		t.Fatalf("Decide with iteration \"seven\" in the state file: %v; want an error naming the file and the key", err)
	}
	if s, ok := e.read(project.DecisionsFile); ok && s != "" {
		t.Errorf("journal = %q; want nothing written", s)
	}
}

func TestDecideRetro(t *testing.T) {
	e := newEnv(t)
	e.write(project.StateFile, explainedState(t))
	d := past("iter-6-2", 6, "2026-03-08T10:00:00Z")
	e.appendRecords(project.DecisionsFile, &d)
	in := ceo.Input{
		Title: "SQLite vs Postgres for state storage", Category: "architecture", Impact: "medium", Reversible: boolp(true),
		Decision: "APPROVED", Reason: "single user, reversible", NextAction: "implement on SQLite behind an interface",
		Confidence: float64p(0.8), Retro: &ceo.RetroRef{ID: "iter-6-2", Outcome: journal.OutcomeCorrect},
	}
	res, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0))
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	want := journal.Decision{
		ID: "iter-7-1", Iteration: 7, TS: "2026-03-08T10:15:00Z", Tier: "quick_review", Depth: "medium", Category: "architecture",
		Input: "SQLite vs Postgres for state storage", Decision: "APPROVED", Reason: "single user, reversible",
		NextAction: "implement on SQLite behind an interface", Verification: "PENDING",
		Retrograde: journal.Retrograde{PreviousID: strp("iter-6-2"), Outcome: "CORRECT"}, Confidence: float64p(0.8),
	}
	if !reflect.DeepEqual(res.Decision, want) {
		t.Errorf("Decide().Decision =\n%+v\nwant\n%+v", res.Decision, want)
	}
	lines := e.lines(project.DecisionsFile)
	if len(lines) != 2 {
		t.Fatalf("journal has %d lines; want 2", len(lines))
	}
	retro, _ := lines[1]["retrograde"].(map[string]any)
	if retro["previous_id"] != "iter-6-2" || retro["outcome"] != "CORRECT" {
		t.Errorf("journaled retrograde = %v; want previous_id iter-6-2, outcome CORRECT", retro)
	}
	if got := e.decision("iter-6-2").Outcome; got != "CORRECT" {
		t.Errorf("iter-6-2 outcome = %q; want CORRECT", got)
	}
	if got := e.decision("iter-7-1").Outcome; got != "PENDING" {
		t.Errorf("iter-7-1 outcome = %q; want PENDING", got)
	}
	// The state file follows the outcome events.
	if got, want := e.mustRead(project.StateFile), replaceState(t, 1, 0, "standard"); got != want {
		t.Errorf("state file =\n%s\nwant\n%s", got, want)
	}
	// A later verdict carried by another decision line supersedes it.
	in2 := ceo.Input{Title: "Next", Category: "quality", Impact: "low", Reversible: boolp(true),
		Retro: &ceo.RetroRef{ID: "iter-6-2", Outcome: journal.OutcomeIncorrect}}
	if _, err := ceo.Decide(e.ctx, e.ix, in2, fixed(t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if got := e.decision("iter-6-2").Outcome; got != "INCORRECT" {
		t.Errorf("iter-6-2 outcome after a later verdict = %q; want INCORRECT", got)
	}
	if got, want := e.mustRead(project.StateFile), replaceState(t, 0, 1, "standard"); got != want {
		t.Errorf("state file =\n%s\nwant\n%s", got, want)
	}
}

func TestParseOutcome(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"CORRECT", "CORRECT", true},
		{"INCORRECT", "INCORRECT", true},
		{"CONFIRMED", "CORRECT", true},
		{"FAILED", "INCORRECT", true},
		{"confirmed", "CORRECT", true},
		{" failed ", "INCORRECT", true},
		{"Correct", "CORRECT", true},
		{"PENDING", "", false},
		{"N/A", "", false},
		{"", "", false},
		{"yes", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ceo.ParseOutcome(tt.in)
			if tt.ok {
				if err != nil || got != tt.want {
					t.Errorf("ParseOutcome(%q) = %q, %v; want %q, nil", tt.in, got, err, tt.want)
				}
				return
			}
			inputError(t, err, "not allowed")
		})
	}
}

func TestDecideDryRun(t *testing.T) {
	e := newEnv(t)
	e.write(project.StateFile, explainedState(t))
	d := past("iter-7-1", 7, "2026-03-08T10:00:00Z")
	e.appendRecords(project.DecisionsFile, &d)
	e.appendRecords(project.RetroFile, &journal.OutcomeRecord{TS: "2026-03-08T10:01:00Z", DecisionID: "iter-7-1", Outcome: "CORRECT"})
	journalBefore, stateBefore := e.mustRead(project.DecisionsFile), e.mustRead(project.StateFile)
	opts := fixed(t0)
	opts.DryRun = true
	in := ceo.Input{Title: "Add ESLint rule eqeqeq", Category: "quality", Impact: "low", Reversible: boolp(true),
		Retro: &ceo.RetroRef{ID: "iter-7-1", Outcome: "INCORRECT"}}
	res, err := ceo.Decide(e.ctx, e.ix, in, opts)
	if err != nil {
		t.Fatalf("Decide(dry run): %v", err)
	}
	if res.Written {
		t.Errorf("Decide(dry run) Written = true")
	}
	if res.Decision.Tier != "auto_approve" || res.Decision.Decision != "APPROVED" || res.Decision.Iteration != 7 || res.ID != "" || res.NextID != "iter-7-2" {
		t.Errorf("Decide(dry run) = %+v, next id %q; want the auto-approved decision of iteration 7, no id, iter-7-2 as the id it would take", res.Decision, res.NextID)
	}
	if got := e.mustRead(project.DecisionsFile); got != journalBefore {
		t.Errorf("journal changed by a dry run:\n%s", got)
	}
	if got := e.mustRead(project.StateFile); got != stateBefore {
		t.Errorf("state file changed by a dry run:\n%s", got)
	}
	if got := e.decision("iter-7-1").Outcome; got != "CORRECT" {
		t.Errorf("iter-7-1 outcome after a dry run = %q; want CORRECT", got)
	}
	if n := len(e.lines(project.RetroFile)); n != 1 {
		t.Errorf("retrograde journal has %d lines after a dry run; want 1", n)
	}
}

func TestDecideDryRunWithoutJournal(t *testing.T) {
	e := newEnv(t)
	opts := fixed(t0)
	opts.DryRun = true
	in := ceo.Input{Title: "x", Category: "quality", Impact: "low", Reversible: boolp(true)}
	if _, err := ceo.Decide(e.ctx, e.ix, in, opts); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{project.DecisionsFile, project.RetroFile, project.StateFile} {
		if _, ok := e.read(f); ok {
			t.Errorf("a dry run created %s", f)
		}
	}
}

// TestDecideStateFile: after each decision the state file's counters and
// trust level are what the outcome events say, and every other field is
// as the seed wrote it.
func TestDecideStateFile(t *testing.T) {
	tests := []struct {
		name               string
		correct, incorrect int
		wantLevel          string
	}{
		{"no outcomes yet", 0, 0, "standard"},
		{"a few outcomes", 3, 1, "standard"},
		{"elevated", 20, 0, "elevated"},
		{"demoted", 14, 6, "demoted"},
		{"exactly 80%", 16, 4, "standard"},
		{"exactly 90%", 18, 2, "standard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.write(project.StateFile, explainedState(t))
			if tt.correct+tt.incorrect > 0 {
				e.seedOutcomes(tt.correct, tt.incorrect)
			}
			in := ceo.Input{Title: "Item", Category: "quality", Impact: "low", Reversible: boolp(true)}
			if _, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0)); err != nil {
				t.Fatalf("Decide: %v", err)
			}
			want := replaceState(t, tt.correct, tt.incorrect, tt.wantLevel)
			if got := e.mustRead(project.StateFile); got != want {
				t.Errorf("state file =\n%s\nwant\n%s", got, want)
			}
			st, err := loop.ReadState("", e.path(project.StateFile))
			if err != nil {
				t.Fatalf("the written state does not read: %v", err)
			}
			if lv, _, _ := st.String("trust_level"); lv != tt.wantLevel {
				t.Errorf("trust_level = %q; want %q", lv, tt.wantLevel)
			}
		})
	}
}

func TestSyncState(t *testing.T) {
	t.Run("no state file", func(t *testing.T) {
		e := newEnv(t)
		e.seedOutcomes(2, 1)
		if err := ceo.SyncState(e.ctx, e.ix, time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, ok := e.read(project.StateFile); ok {
			t.Errorf("SyncState created %s", project.StateFile)
		}
	})
	t.Run("unknown fields and layout kept", func(t *testing.T) {
		e := newEnv(t)
		e.write(project.StateFile, "{\n  \"active\": false,\n  \"custom\": {\n    \"x\": 1.50\n  },\n  \"incorrect_decisions\": 9\n}\n")
		e.seedOutcomes(2, 1)
		if err := ceo.SyncState(e.ctx, e.ix, time.Now()); err != nil {
			t.Fatal(err)
		}
		// The 8 incorrect decisions no outcome explains are adopted.
		want := "{\n  \"active\": false,\n  \"custom\": {\n    \"x\": 1.50\n  },\n  \"incorrect_decisions\": 9,\n  \"correct_decisions\": 2,\n  \"trust_level\": \"standard\"\n}\n"
		if got := e.mustRead(project.StateFile); got != want {
			t.Errorf("state file =\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("malformed state file", func(t *testing.T) {
		e := newEnv(t)
		e.write(project.StateFile, "{\"active\": tru")
		err := ceo.SyncState(e.ctx, e.ix, time.Now())
		if err == nil || !strings.Contains(err.Error(), project.StateFile) {
			t.Errorf("SyncState on a malformed state file: %v; want an error naming it", err)
		}
		if got := e.mustRead(project.StateFile); got != "{\"active\": tru" {
			t.Errorf("malformed state file rewritten to %q", got)
		}
	})
	t.Run("unchanged values leave the file alone", func(t *testing.T) {
		e := newEnv(t)
		// Not orbit's layout: rewritten only if a value changed.
		content := `{"correct_decisions":0,"incorrect_decisions":0,"trust_level":"standard"}`
		e.write(project.StateFile, content)
		if err := ceo.SyncState(e.ctx, e.ix, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got := e.mustRead(project.StateFile); got != content {
			t.Errorf("state file rewritten to %q; want it untouched", got)
		}
	})
}

func TestInputErrorIsError(t *testing.T) {
	var err error = &ceo.InputError{Msg: "--title is required"}
	var ie *ceo.InputError
	if !errors.As(err, &ie) || err.Error() != "--title is required" {
		t.Errorf("InputError.Error() = %q", err.Error())
	}
}

// TestDecideNaNConfidence: pflag's Float64Var accepts "NaN"; the range check
// must refuse it as an input error (exit 2), not fail later encoding the
// line.
func TestDecideNaNConfidence(t *testing.T) {
	e := newEnv(t)
	in := ceo.Input{Title: "Item", Category: "quality", Impact: "low", Reversible: boolp(true), Confidence: float64p(math.NaN())}
	res, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0))
	if err == nil {
		t.Fatalf("Decide(confidence NaN) = %+v, nil; want an error", res.Decision)
	}
	inputError(t, err, "confidence")
	if s, ok := e.read(project.DecisionsFile); ok && s != "" {
		t.Errorf("journal = %q; want nothing written", s)
	}
}

// TestDecideRetroOutcomeVocabulary: the verdict a decision line carries is
// an outcome of the journal's vocabulary; the seed's CONFIRMED / FAILED
// (which ParseOutcome accepts) must never reach the journal as a line the
// index then rejects.
func TestDecideRetroOutcomeVocabulary(t *testing.T) {
	for _, outcome := range []string{"CONFIRMED", "FAILED", "correct", "MAYBE"} {
		t.Run(outcome, func(t *testing.T) {
			e := newEnv(t)
			d := past("iter-6-2", 6, "2026-03-08T10:00:00Z")
			e.appendRecords(project.DecisionsFile, &d)
			in := ceo.Input{Title: "Item", Category: "quality", Impact: "low", Reversible: boolp(true),
				Retro: &ceo.RetroRef{ID: "iter-6-2", Outcome: outcome}}
			res, err := ceo.Decide(e.ctx, e.ix, in, fixed(t0))
			if err != nil {
				// Refusing it is fine, as an input error with nothing written.
				inputError(t, err)
				if n := len(e.lines(project.DecisionsFile)); n != 1 {
					t.Errorf("journal has %d lines after a refused decision; want 1", n)
				}
				return
			}
			if res.Sync.Errors() > 0 {
				t.Errorf("Decide(retro %s) wrote a line the index rejects: %v", outcome, res.Sync.Problems)
			}
			if _, found, _ := e.store.Decision(e.ctx, res.Decision.ID); !found {
				t.Errorf("Decide(retro %s) reported %s written, but it is not in the index", outcome, res.Decision.ID)
			}
		})
	}
}
