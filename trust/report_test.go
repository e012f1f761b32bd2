package trust_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/internal/projecttest"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/trust"
)

func TestWilson(t *testing.T) {
	tests := []struct {
		name           string
		correct, n     int
		wantLo, wantHi float64
	}{
		{"empty", 0, 0, 0, 1},
		{"4 of 4 is not certainty", 4, 4, 0.5101, 1},
		{"0 of 4", 0, 4, 0, 0.4899},
		{"81 of 100", 81, 100, 0.7222, 0.8748},
		{"16 of 20", 16, 20, 0.5840, 0.9193},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := trust.Wilson(tt.correct, tt.n)
			if math.Abs(got.Low-tt.wantLo) > 1e-4 || math.Abs(got.High-tt.wantHi) > 1e-4 {
				t.Errorf("Wilson(%d, %d) = [%.4f, %.4f]; want [%.4f, %.4f]", tt.correct, tt.n, got.Low, got.High, tt.wantLo, tt.wantHi)
			}
		})
	}
}

// calibrationReference computes calibration figures directly from (confidence, y)
// pairs, binning each confidence c into min(bins-1, floor(round(100c)*bins/100)).
func calibrationReference(pairs [][2]float64, bins int) (brier, ece, rel, res float64) {
	n := float64(len(pairs))
	var ybar float64
	for _, p := range pairs {
		brier += (p[0] - p[1]) * (p[0] - p[1])
		ybar += p[1]
	}
	brier /= n
	ybar /= n
	type acc struct{ n, sumc, sumy float64 }
	bs := make([]acc, bins)
	for _, p := range pairs {
		b := min(int(math.Round(p[0]*100))*bins/100, bins-1)
		bs[b].n++
		bs[b].sumc += p[0]
		bs[b].sumy += p[1]
	}
	for _, b := range bs {
		if b.n == 0 {
			continue
		}
		f, o := b.sumc/b.n, b.sumy/b.n
		ece += b.n / n * math.Abs(f-o)
		rel += b.n / n * (f - o) * (f - o)
		res += b.n / n * (o - ybar) * (o - ybar)
	}
	return brier, ece, rel, res
}

func TestCalibrateMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		n := 1 + r.IntN(300)
		bins := 1 + r.IntN(12)
		var rows []trust.Scored
		var pairs [][2]float64
		for i := 0; i < n; i++ {
			c := math.Round(r.Float64()*1000) / 1000
			ok := r.Float64() < c
			y := 0.0
			if ok {
				y = 1
			}
			rows = append(rows, trust.Scored{Seq: int64(i + 1), Iteration: int64(i/5 + 1), Category: "quality", Confidence: &c, Correct: ok})
			pairs = append(pairs, [2]float64{c, y})
		}
		got := trust.Build(trust.Aggregate(n, rows), bins, 0).Calibration
		brier, ece, rel, res := calibrationReference(pairs, bins)
		for _, f := range []struct {
			name      string
			got, want float64
		}{{"brier", got.Brier, brier}, {"ece", got.ECE, ece}, {"reliability", got.Reliability, rel}, {"resolution", got.Resolution, res}} {
			if math.Abs(f.got-f.want) > 1e-9 {
				t.Fatalf("trial %d (n=%d, bins=%d): %s = %.12f; want %.12f", trial, n, bins, f.name, f.got, f.want)
			}
		}
		if sum := got.Reliability - got.Resolution + got.Uncertainty + got.WithinBin; math.Abs(sum-got.Brier) > 1e-12 {
			t.Fatalf("decomposition %.12f does not add up to Brier %.12f", sum, got.Brier)
		}
	}
}

func TestSparkline(t *testing.T) {
	if got, want := trust.Sparkline([]float64{0, 0.5, 1}), "▁▅█"; got != want {
		t.Errorf("Sparkline = %q; want %q", got, want)
	}
}

// env is a project with its index.
type env struct {
	t   *testing.T
	ctx context.Context
	p   project.Project
	ix  *journal.Index
}

func newProject(t *testing.T) *env {
	t.Helper()
	p := projecttest.New(t)
	return &env{t: t, ctx: context.Background(), p: p, ix: projecttest.Open(t, p, time.Time{})}
}

func (e *env) appendFile(rel, text string) {
	e.t.Helper()
	f, err := os.OpenFile(e.p.Path(rel), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) sync() {
	e.t.Helper()
	if _, err := e.ix.Sync(e.ctx, journal.SyncOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) load(f trust.Filter) trust.Report {
	e.t.Helper()
	r, err := trust.Load(e.ctx, e.ix.Store, trust.Options{Filter: f, Iterations: -1})
	if err != nil {
		e.t.Fatal(err)
	}
	r.Filter = ""
	return r
}

// randomJournal writes decisions with confidences, categories, tiers,
// requestors, outcomes in decision lines and in the retrograde journal,
// corrections and outcomes recorded before their decision.
func randomJournal(e *env, r *rand.Rand, n int) {
	cats := journal.Categories
	tiers := journal.Tiers
	var dec, retro strings.Builder
	for i := 1; i <= n; i++ {
		conf := ""
		if r.IntN(5) > 0 {
			conf = fmt.Sprintf(`,"confidence":%.3f`, r.Float64())
		}
		rg := `{"previous_id":null,"outcome":"N/A"}`
		if i > 1 && r.IntN(3) == 0 {
			out := []string{"CORRECT", "INCORRECT", "PENDING"}[r.IntN(3)]
			rg = fmt.Sprintf(`{"previous_id":"d%d","outcome":"%s"}`, 1+r.IntN(i-1), out)
		}
		fmt.Fprintf(&dec, `{"id":"d%d","iteration":%d,"ts":"2026-03-08T10:%02d:%02dZ","tier":"%s","depth":"%s","category":"%s","input":"x","decision":"APPROVED","retrograde":%s%s,"requestor":"%s"}`+"\n",
			i, i/7+1, (i/60)%60, i%60, tiers[r.IntN(len(tiers))], journal.Depths[r.IntN(4)], cats[r.IntN(len(cats))], rg, conf, []string{"", "forge:builder", "forge:planner"}[r.IntN(3)])
		if r.IntN(4) == 0 {
			fmt.Fprintf(&retro, `{"ts":"2026-03-08T11:%02d:%02dZ","decision_id":"d%d","outcome":"%s"}`+"\n", (i/60)%60, i%60, 1+r.IntN(n+5), []string{"CORRECT", "INCORRECT"}[r.IntN(2)])
		}
	}
	e.appendFile(project.DecisionsFile, dec.String())
	e.appendFile(project.RetroFile, retro.String())
}

// TestTotalsMatchRows: the report from the trigger-kept totals equals the
// one computed from the scored rows, on random journals, synced in pieces,
// after a rewrite of the past, and after a rebuild.
func TestTotalsMatchRows(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 8; trial++ {
		e := newProject(t)
		for piece := 0; piece < 3; piece++ {
			randomJournal(e, r, 40+r.IntN(80))
			e.sync()
			fast, rows := e.load(trust.Filter{}), e.load(trust.Filter{SinceNS: 1})
			if fmt.Sprint(fast) != fmt.Sprint(rows) {
				t.Fatalf("trial %d piece %d: report from totals\n%+v\ndiffers from the report from rows\n%+v", trial, piece, fast, rows)
			}
		}
		// Rewrite the past: the index resets the file and recomputes.
		data, err := os.ReadFile(e.p.Path(project.DecisionsFile))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		if err := os.WriteFile(e.p.Path(project.DecisionsFile), []byte(strings.Join(lines[len(lines)/2:], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		e.sync()
		fast, rows := e.load(trust.Filter{}), e.load(trust.Filter{SinceNS: 1})
		if fmt.Sprint(fast) != fmt.Sprint(rows) {
			t.Fatalf("trial %d after a rewrite: totals\n%+v\nrows\n%+v", trial, fast, rows)
		}
		if err := db.Remove(e.p.DB); err != nil {
			t.Fatal(err)
		}
		e.ix.Store.Close()
		store, err := db.Open(e.ctx, e.p.DB, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e.ix = journal.NewIndex(store, e.p)
		e.sync()
		if rebuilt := e.load(trust.Filter{}); fmt.Sprint(rebuilt) != fmt.Sprint(fast) {
			t.Fatalf("trial %d: rebuilt index gives\n%+v\nwant\n%+v", trial, rebuilt, fast)
		}
		store.Close()
	}
}

func TestFilters(t *testing.T) {
	e := newProject(t)
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		cat := "quality"
		if i%3 == 0 {
			cat = "deploy"
		}
		fmt.Fprintf(&b, `{"id":"d%d","iteration":%d,"ts":"2026-03-%02dT10:00:00Z","tier":"auto_approve","depth":"trivial","category":"%s","input":"x","decision":"APPROVED","confidence":0.9}`+"\n", i, i, i, cat)
	}
	for i := 1; i <= 30; i++ {
		out := "CORRECT"
		if i%5 == 0 {
			out = "INCORRECT"
		}
		fmt.Fprintf(&b, `{"id":"v%d","iteration":31,"ts":"2026-04-01T10:00:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"x","decision":"APPROVED","retrograde":{"previous_id":"d%d","outcome":"%s"}}`+"\n", i, i, out)
	}
	e.appendFile(project.DecisionsFile, b.String())
	e.sync()
	all := e.load(trust.Filter{})
	if all.WithOutcome != 30 || all.Correct != 24 || all.Decisions != 60 {
		t.Fatalf("whole journal: %d scored, %d correct, %d decisions; want 30, 24, 60", all.WithOutcome, all.Correct, all.Decisions)
	}
	deploy := e.load(trust.Filter{Category: "deploy"})
	if deploy.WithOutcome != 10 || deploy.Incorrect != 2 || deploy.Decisions != 10 {
		t.Errorf("--category deploy: %d scored, %d incorrect, %d decisions; want 10, 2, 10", deploy.WithOutcome, deploy.Incorrect, deploy.Decisions)
	}
	window := e.load(trust.Filter{Window: 10})
	if window.WithOutcome != 10 || window.Incorrect != 2 {
		t.Errorf("--window 10: %d scored, %d incorrect; want 10 (d21..d30), 2", window.WithOutcome, window.Incorrect)
	}
	since := e.load(trust.Filter{SinceNS: mustNS(t, "2026-03-21T00:00:00Z")})
	if since.WithOutcome != 10 || since.Decisions != 40 {
		t.Errorf("--since 2026-03-21: %d scored, %d decisions; want 10, 40", since.WithOutcome, since.Decisions)
	}
	// The report says what it is filtered by, the time included.
	for _, tt := range []struct {
		f    trust.Filter
		want string
	}{
		{trust.Filter{SinceNS: mustNS(t, "2026-03-21T00:00:00Z")}, "since 2026-03-21"},
		{trust.Filter{SinceNS: mustNS(t, "2026-03-21T09:30:05Z"), Category: "quality"}, "category quality, since 2026-03-21 09:30:05 UTC"},
	} {
		r, err := trust.Load(e.ctx, e.ix.Store, trust.Options{Filter: tt.f, Iterations: -1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Filter != tt.want {
			t.Errorf("Load(%+v).Filter = %q; want %q", tt.f, r.Filter, tt.want)
		}
	}
}

func mustNS(t *testing.T, s string) int64 {
	t.Helper()
	var y, mo, d, h, mi, se int
	if _, err := fmt.Sscanf(s, "%d-%d-%dT%d:%d:%dZ", &y, &mo, &d, &h, &mi, &se); err != nil {
		t.Fatal(err)
	}
	return timeUTC(y, mo, d, h, mi, se)
}
