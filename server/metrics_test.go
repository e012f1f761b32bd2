package server_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/server"
)

func TestMetrics(t *testing.T) {
	e := newEnv(t, synthJournal(t, 300), server.Config{}).handler()
	wantStatus(t, "GET trust", e.get("/api/v1/trust"), 200)
	wantStatus(t, "GET decisions/none", e.get("/api/v1/decisions/none"), 404)
	r := e.get("/metrics")
	wantStatus(t, "GET /metrics", r, 200)
	text := string(r.body)
	for _, want := range []string{
		`orbit_accuracy{window="all"}`,
		`orbit_accuracy{window="last20"}`,
		`orbit_accuracy{window="last10"}`,
		`orbit_trust_level{level="standard"}`,
		`orbit_trust_level{level="demoted"}`,
		`orbit_trust_level{level="elevated"}`,
		"orbit_trust_alert ",
		"orbit_stale_decisions ",
		"orbit_decisions{",
		`orbit_scored_decisions{outcome="CORRECT"}`,
		"orbit_sync_age_seconds ",
		`orbit_sync_lag_bytes{file=".claude/ceo-loop-decisions.jsonl"} 0`,
		`orbit_http_request_duration_seconds_count{method="GET",route="/api/v1/trust",status="200"} 1`,
		`orbit_http_request_duration_seconds_count{method="GET",route="/api/v1/decisions/{id}",status="404"} 1`,
		"orbit_decision_commit_batch_size_count 0",
		"go_goroutines ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// Exactly one trust level is in force.
	level := 0.0
	for _, l := range []string{"standard", "demoted", "elevated"} {
		level += metricValue(t, r.body, `orbit_trust_level{level="`+l+`"}`)
	}
	if level != 1 {
		t.Errorf("orbit_trust_level sums to %v; want 1", level)
	}
	if v := metricValue(t, r.body, "orbit_stale_decisions"); v <= 0 {
		t.Errorf("orbit_stale_decisions = %v; want > 0 for a synthetic journal", v)
	}
}

// TestMetricsDecisionTally: orbit_decisions, kept between scrapes and
// brought up to date with only what is new, sums to the decisions in the
// index after appends, and after a rewrite of the journal's past that
// drops decisions (counted again in full).
func TestMetricsDecisionTally(t *testing.T) {
	e := newEnv(t, synthJournal(t, 200), server.Config{})
	e.serve()
	sum := func() float64 {
		t.Helper()
		r := e.get("/metrics")
		wantStatus(t, "GET /metrics", r, 200)
		total := 0.0
		for _, l := range strings.Split(string(r.body), "\n") {
			if name, v, ok := strings.Cut(l, " "); ok && strings.HasPrefix(name, "orbit_decisions{") {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatal(l)
				}
				total += f
			}
		}
		return total
	}
	indexed := func() float64 {
		t.Helper()
		c, err := e.store.Counts(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return float64(c.Decisions)
	}
	if got := sum(); got != 200 {
		t.Fatalf("orbit_decisions sums to %v; want 200", got)
	}
	e.appendRecords(project.DecisionsFile, ptr(fixedDecision("iter-900-1", 900, "quality")), ptr(fixedDecision("iter-900-2", 900, "architecture")))
	if !eventually(func() bool { return e.indexed("iter-900-2") }) {
		t.Fatal("appended decisions not indexed")
	}
	wantStatus(t, "POST decisions", e.post("/api/v1/decisions", validDecision), 201)
	if !eventually(func() bool { return sum() == indexed() }) || indexed() != 203 {
		t.Fatalf("after appends orbit_decisions sums to %v; index holds %v (want 203)", sum(), indexed())
	}
	// Rewrite the past: the first 50 lines gone.
	data, err := os.ReadFile(e.proj.Path(project.DecisionsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(e.proj.Path(project.DecisionsFile), []byte(strings.Join(lines[50:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { return indexed() == 153 }) {
		t.Fatalf("after the rewrite the index holds %v decisions; want 153", indexed())
	}
	// The index holds 153 as soon as the rebuild commits, a moment before
	// the sync that made it tells the collectors (the generation).
	if !eventually(func() bool { return sum() == 153 }) {
		t.Errorf("after the rewrite orbit_decisions sums to %v; want 153", sum())
	}
}
