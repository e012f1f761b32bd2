package server_test

import (
	"strings"
	"testing"

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
