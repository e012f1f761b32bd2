package ceo_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// staleBase is when iteration 0 would have started: iteration k's
// decisions are at staleBase + k hours.
var staleBase = time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC)

// staleJournal writes decisions iter-k-1 and iter-k-2 for iterations 1..6
// (plus iter-2-3 without a ts) and outcomes for some of them:
//
//	iter-1-1 CORRECT, iter-2-2 INCORRECT, iter-3-1 CORRECT then PENDING
//	again, iter-5-1 CORRECT, iter-6-1 INCORRECT.
func staleJournal(e *env) {
	e.tb.Helper()
	var ds []any
	for k := int64(1); k <= 6; k++ {
		for n := 1; n <= 2; n++ {
			d := past(fmt.Sprintf("iter-%d-%d", k, n), k, staleBase.Add(time.Duration(k)*time.Hour).Format(time.RFC3339))
			ds = append(ds, &d)
			if k == 2 && n == 2 {
				nots := past("iter-2-3", 2, "")
				ds = append(ds, &nots)
			}
		}
	}
	e.appendRecords(project.DecisionsFile, ds...)
	at := staleBase.Add(7 * time.Hour).Format(time.RFC3339)
	later := staleBase.Add(8 * time.Hour).Format(time.RFC3339)
	e.appendRecords(project.RetroFile,
		&journal.OutcomeRecord{TS: at, DecisionID: "iter-1-1", Outcome: "CORRECT"},
		&journal.OutcomeRecord{TS: at, DecisionID: "iter-2-2", Outcome: "INCORRECT"},
		&journal.OutcomeRecord{TS: at, DecisionID: "iter-3-1", Outcome: "CORRECT"},
		&journal.OutcomeRecord{TS: later, DecisionID: "iter-3-1", Outcome: "PENDING"},
		&journal.OutcomeRecord{TS: at, DecisionID: "iter-5-1", Outcome: "CORRECT"},
		&journal.OutcomeRecord{TS: at, DecisionID: "iter-6-1", Outcome: "INCORRECT"},
	)
	e.sync()
}

func TestStaleDecisions(t *testing.T) {
	now := staleBase.Add(6*time.Hour + 30*time.Minute)
	tests := []struct {
		name      string
		state     string // state file content; "" for none
		opts      ceo.StaleOptions
		wantCur   int64
		wantIDs   []string
		wantAges  []int64
		wantTotal int64
	}{
		{
			name:    "seed rule: more than 2 iterations before iteration 6",
			state:   `{"active": true, "iteration": 6}`,
			opts:    ceo.StaleOptions{Iterations: 2},
			wantCur: 6, wantIDs: []string{"iter-1-2", "iter-2-1", "iter-2-3", "iter-3-1", "iter-3-2"},
			wantAges: []int64{5, 4, 4, 3, 3}, wantTotal: 5,
		},
		{
			name:    "no state file: the journal's highest iteration",
			opts:    ceo.StaleOptions{Iterations: ceo.DefaultStaleIterations},
			wantCur: 6, wantIDs: []string{"iter-1-2", "iter-2-1", "iter-2-3", "iter-3-1", "iter-3-2"},
			wantAges: []int64{5, 4, 4, 3, 3}, wantTotal: 5,
		},
		{
			name:    "state iteration beyond the journal",
			state:   `{"iteration": 8}`,
			opts:    ceo.StaleOptions{Iterations: 2},
			wantCur: 8, wantIDs: []string{"iter-1-2", "iter-2-1", "iter-2-3", "iter-3-1", "iter-3-2", "iter-4-1", "iter-4-2", "iter-5-2"},
			wantAges: []int64{7, 6, 6, 5, 5, 4, 4, 3}, wantTotal: 8,
		},
		{
			name:    "limit keeps the oldest, total counts them all",
			state:   `{"iteration": 6}`,
			opts:    ceo.StaleOptions{Iterations: 2, Limit: 2},
			wantCur: 6, wantIDs: []string{"iter-1-2", "iter-2-1"}, wantAges: []int64{5, 4}, wantTotal: 5,
		},
		{
			name:    "one iteration",
			state:   `{"iteration": 6}`,
			opts:    ceo.StaleOptions{Iterations: 1},
			wantCur: 6, wantIDs: []string{"iter-1-2", "iter-2-1", "iter-2-3", "iter-3-1", "iter-3-2", "iter-4-1", "iter-4-2"},
			wantAges: []int64{5, 4, 4, 3, 3, 2, 2}, wantTotal: 7,
		},
		{
			name:    "as many iterations as there are: nothing is stale",
			state:   `{"iteration": 6}`,
			opts:    ceo.StaleOptions{Iterations: 6},
			wantCur: 6, wantIDs: []string{}, wantTotal: 0,
		},
		{
			name:    "more iterations than there are",
			state:   `{"iteration": 6}`,
			opts:    ceo.StaleOptions{Iterations: 10},
			wantCur: 6, wantIDs: []string{}, wantTotal: 0,
		},
		{
			name:    "older than 3h at 06:30: ts before 03:30",
			state:   `{"iteration": 6}`,
			opts:    ceo.StaleOptions{OlderThan: 3 * time.Hour},
			wantCur: 6, wantIDs: []string{"iter-1-2", "iter-2-1", "iter-3-1", "iter-3-2"},
			wantAges: []int64{5, 4, 3, 3}, wantTotal: 4,
		},
		{
			name:    "older than replaces iterations",
			state:   `{"iteration": 6}`,
			opts:    ceo.StaleOptions{Iterations: 5, OlderThan: 90 * time.Minute, Limit: 3},
			wantCur: 6, wantIDs: []string{"iter-1-2", "iter-2-1", "iter-3-1"},
			wantAges: []int64{5, 4, 3}, wantTotal: 6,
		},
		{
			name:    "older than everything",
			state:   `{"iteration": 6}`,
			opts:    ceo.StaleOptions{OlderThan: 24 * time.Hour},
			wantCur: 6, wantIDs: []string{}, wantTotal: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.state != "" {
				e.write(project.StateFile, tt.state)
			}
			staleJournal(e)
			rep, err := ceo.StaleDecisions(e.ctx, e.ix, tt.opts, now)
			if err != nil {
				t.Fatalf("StaleDecisions: %v", err)
			}
			ids, ages := []string{}, []int64{}
			for _, d := range rep.Decisions {
				ids = append(ids, d.ID)
				ages = append(ages, d.AgeIterations)
			}
			if tt.wantAges == nil {
				tt.wantAges = []int64{}
			}
			if rep.Current != tt.wantCur || rep.Total != tt.wantTotal || !reflect.DeepEqual(ids, tt.wantIDs) || !reflect.DeepEqual(ages, tt.wantAges) {
				t.Errorf("StaleDecisions(%+v) = current %d total %d ids %v ages %v; want %d %d %v %v",
					tt.opts, rep.Current, rep.Total, ids, ages, tt.wantCur, tt.wantTotal, tt.wantIDs, tt.wantAges)
			}
		})
	}
}

func TestStaleDecisionFields(t *testing.T) {
	e := newEnv(t)
	e.write(project.StateFile, `{"iteration": 6}`)
	staleJournal(e)
	now := staleBase.Add(6*time.Hour + 30*time.Minute)
	rep, err := ceo.StaleDecisions(e.ctx, e.ix, ceo.StaleOptions{Iterations: 2}, now)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]ceo.StaleDecision{}
	for _, d := range rep.Decisions {
		byID[d.ID] = d
	}
	first := byID["iter-1-2"]
	age := int64(5*3600 + 30*60)
	want := ceo.StaleDecision{ID: "iter-1-2", Iteration: 1, AgeIterations: 5, Category: "quality", Input: "past decision iter-1-2",
		TS: "2026-03-08T01:00:00Z", AgeSeconds: &age}
	if !reflect.DeepEqual(first, want) {
		t.Errorf("stale iter-1-2 = %+v (age %v); want %+v (age %d)", first, deref(first.AgeSeconds), want, age)
	}
	if noTS := byID["iter-2-3"]; noTS.ID == "" || noTS.AgeSeconds != nil || noTS.TS != "" {
		t.Errorf("stale iter-2-3 = %+v; want it listed without an age in seconds", noTS)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestStaleDecisionsEmpty(t *testing.T) {
	e := newEnv(t)
	rep, err := ceo.StaleDecisions(e.ctx, e.ix, ceo.StaleOptions{Iterations: 2}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Current != 0 || rep.Total != 0 || rep.Decisions == nil || len(rep.Decisions) != 0 {
		t.Errorf("StaleDecisions on an empty project = %+v; want current 0, total 0, an empty (non-nil) list", rep)
	}
}
