package server_test

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

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

// TestMetricsFormat: /metrics parses with Prometheus's own text parser
// (expfmt, test-only), every family has the type it declares, histograms
// are cumulative with a +Inf bucket equal to their count, and the Go and
// process figures scrapers expect are there.
func TestMetricsFormat(t *testing.T) {
	e := newEnv(t, synthJournal(t, 100), server.Config{}).handler()
	for range 3 {
		wantStatus(t, "GET trust", e.get("/api/v1/trust"), 200)
	}
	wantStatus(t, "GET decisions/none", e.get("/api/v1/decisions/none"), 404)
	r := e.get("/metrics")
	wantStatus(t, "GET /metrics", r, 200)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q; want the text format 0.0.4", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("Prometheus's parser refuses /metrics: %v\n%s", err, r.body)
	}
	types := map[string]dto.MetricType{
		"orbit_http_request_duration_seconds": dto.MetricType_HISTOGRAM, "orbit_decision_commit_batch_size": dto.MetricType_HISTOGRAM,
		"orbit_decisions": dto.MetricType_GAUGE, "orbit_accuracy": dto.MetricType_GAUGE, "orbit_trust_level": dto.MetricType_GAUGE,
		"go_goroutines": dto.MetricType_GAUGE, "go_gc_duration_seconds": dto.MetricType_SUMMARY,
		"go_memstats_alloc_bytes_total": dto.MetricType_COUNTER,
	}
	if runtime.GOOS == "linux" {
		types["process_cpu_seconds_total"] = dto.MetricType_COUNTER
		types["process_resident_memory_bytes"] = dto.MetricType_GAUGE
		types["process_open_fds"] = dto.MetricType_GAUGE
	}
	for name, typ := range types {
		f, ok := fams[name]
		if !ok || f.GetType() != typ || len(f.GetMetric()) == 0 {
			t.Errorf("%s: %v; want a %v family with series", name, f, typ)
		}
	}
	requests := fams["orbit_http_request_duration_seconds"]
	for _, m := range requests.GetMetric() {
		h := m.GetHistogram()
		prev := uint64(0)
		for _, b := range h.GetBucket() {
			if b.GetCumulativeCount() < prev {
				t.Errorf("%v: buckets not cumulative", m.GetLabel())
			}
			prev = b.GetCumulativeCount()
		}
		if prev > h.GetSampleCount() {
			t.Errorf("%v: last finite bucket %d above the count %d", m.GetLabel(), prev, h.GetSampleCount())
		}
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["route"] == "/api/v1/trust" && (labels["status"] != "200" || h.GetSampleCount() != 3) {
			t.Errorf("trust requests: %v, %d observations; want status 200, 3", labels, h.GetSampleCount())
		}
	}
	if v := fams["go_goroutines"].GetMetric()[0].GetGauge().GetValue(); v < 1 {
		t.Errorf("go_goroutines = %v", v)
	}
	if runtime.GOOS == "linux" {
		if v := fams["process_resident_memory_bytes"].GetMetric()[0].GetGauge().GetValue(); v < 1<<20 {
			t.Errorf("process_resident_memory_bytes = %v; want at least 1 MB", v)
		}
	}
}
