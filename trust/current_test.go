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

// index is a project in a temporary directory with its index open.
type index struct {
	ctx   context.Context
	proj  project.Project
	store *db.Store
	ix    *journal.Index
}

func newIndex(tb testing.TB) *index {
	tb.Helper()
	p := projecttest.New(tb)
	ix := projecttest.Open(tb, p, time.Time{})
	return &index{ctx: context.Background(), proj: p, store: ix.Store, ix: ix}
}

// appendLine appends one record to a project file.
func (x *index) appendLine(tb testing.TB, rel string, rec any) {
	tb.Helper()
	line, err := journal.Marshal(rec)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := os.OpenFile(x.proj.Path(rel), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(line); err != nil {
		tb.Fatal(err)
	}
}

func (x *index) sync(tb testing.TB) {
	tb.Helper()
	rep, err := x.ix.Sync(x.ctx, journal.SyncOptions{})
	if err != nil {
		tb.Fatalf("Sync: %v", err)
	}
	if n := rep.Errors(); n > 0 {
		tb.Fatalf("Sync rejected %d lines: %v", n, rep.Problems)
	}
}

func (x *index) current(tb testing.TB) trust.Headline {
	tb.Helper()
	h, err := trust.Current(x.ctx, x.store)
	if err != nil {
		tb.Fatalf("trust.Current: %v", err)
	}
	return h
}

func decisionLine(id string, ts string) journal.Decision {
	return journal.Decision{
		ID: id, Iteration: 1, TS: ts, Tier: "auto_approve", Depth: "trivial", Category: "quality",
		Input: "item " + id, Decision: "APPROVED", Reason: "r", Verification: "PENDING",
		Retrograde: journal.Retrograde{Outcome: journal.OutcomeNA},
	}
}

// reference is the trust rules computed directly from a model of the
// journal: decisions in journal order, and for each the latest outcome
// event in (event time, source rank, line) order.
type reference struct {
	order   []string // decision ids in journal order
	written map[string]bool
	current map[string]refEvent
	// lastTS is the last valid ts seen in each file (unix ns, 0 if none).
	lastTS map[string]int64
	lines  map[string]int64
}

type refEvent struct {
	at, rank, line int64
	outcome        string
}

func (e refEvent) after(o refEvent) bool {
	if e.at != o.at {
		return e.at > o.at
	}
	if e.rank != o.rank {
		return e.rank > o.rank
	}
	return e.line > o.line
}

func newReference() *reference {
	return &reference{written: map[string]bool{}, current: map[string]refEvent{}, lastTS: map[string]int64{}, lines: map[string]int64{}}
}

// line accounts for a line appended to file with ts (0: none) and returns
// its line number and event time.
func (r *reference) line(file string, ts int64) (line, at int64) {
	r.lines[file]++
	if ts != 0 {
		r.lastTS[file] = ts
	}
	return r.lines[file], r.lastTS[file]
}

func (r *reference) event(id, outcome string, at, rank, line int64) {
	e := refEvent{at: at, rank: rank, line: line, outcome: outcome}
	if cur, ok := r.current[id]; !ok || e.after(cur) {
		r.current[id] = e
	}
}

// headline computes what trust.Current must say, with integer arithmetic
// only (no shared code with the package under test).
func (r *reference) headline() (correct, incorrect int, last20, last10 [2]int, level trust.Level, alert bool) {
	var scored []bool
	for _, id := range r.order {
		switch r.current[id].outcome {
		case journal.OutcomeCorrect:
			scored = append(scored, true)
		case journal.OutcomeIncorrect:
			scored = append(scored, false)
		}
	}
	window := func(n int) [2]int {
		var w [2]int
		for _, ok := range scored[max(len(scored)-n, 0):] {
			if ok {
				w[0]++
			} else {
				w[1]++
			}
		}
		return w
	}
	w := window(len(scored))
	correct, incorrect = w[0], w[1]
	last20, last10 = window(20), window(10)
	n20 := last20[0] + last20[1]
	switch {
	case len(scored) < 20:
		level = trust.Standard
	case last20[0]*10 < 8*n20: // last 20 < 80%
		level = trust.Demoted
	case correct*10 > 9*(correct+incorrect): // overall > 90%
		level = trust.Elevated
	default:
		level = trust.Standard
	}
	alert = len(scored) >= 10 && last10[0]*10 < 6*(last10[0]+last10[1])
	return
}

func (r *reference) check(tb testing.TB, got trust.Headline, where string) {
	tb.Helper()
	c, i, l20, l10, level, alert := r.headline()
	win := func(w trust.Window) [2]int { return [2]int{w.Correct, w.Incorrect} }
	if got.Correct != c || got.Incorrect != i || win(got.Last20) != l20 || win(got.Last10) != l10 || got.Level != level || got.Alert != alert {
		tb.Fatalf("%s: Current() = correct %d incorrect %d last20 %v last10 %v level %s alert %v; want correct %d incorrect %d last20 %v last10 %v level %s alert %v",
			where, got.Correct, got.Incorrect, win(got.Last20), win(got.Last10), got.Level, got.Alert, c, i, l20, l10, level, alert)
	}
	if got.Last20.N != l20[0]+l20[1] || got.Last10.N != l10[0]+l10[1] {
		tb.Fatalf("%s: window sizes %d, %d do not add up", where, got.Last20.N, got.Last10.N)
	}
	wantAcc := 0.0
	if c+i > 0 {
		wantAcc = float64(c) / float64(c+i)
	}
	if math.Abs(got.Accuracy-wantAcc) > 1e-12 {
		tb.Fatalf("%s: Accuracy = %v; want %v", where, got.Accuracy, wantAcc)
	}
}

// TestCurrentMatchesReference feeds random journals (decisions in random
// order, outcome events in both the retrograde journal and decision lines'
// retrograde field, later events correcting earlier ones, lines without a
// ts, outcomes recorded before their decision) through a real index, and
// compares trust.Current after every sync with a direct computation.
func TestCurrentMatchesReference(t *testing.T) {
	const trials = 30
	base := time.Date(2026, 3, 8, 10, 0, 0, 0, time.UTC)
	outcomes := []string{journal.OutcomeCorrect, journal.OutcomeIncorrect, journal.OutcomePending, journal.OutcomeNA}
	// seen makes sure the random journals reach every level and the alert,
	// so that the comparison is not vacuous.
	seen := map[string]bool{}
	for trial := range trials {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(trial), 0x0b17))
			x := newIndex(t)
			ref := newReference()
			nDec := rng.IntN(46)
			perm := rng.Perm(nDec)
			pCorrect := 0.5 + rng.Float64()/2
			ids := make([]string, nDec)
			for k := range ids {
				ids[k] = fmt.Sprintf("d-%d", k)
			}
			// ts returns a time near the clock (sometimes before the last
			// one, sometimes equal), or 0 for a line without ts.
			clock := int64(0)
			ts := func() (string, int64) {
				if rng.IntN(7) == 0 {
					return "", 0
				}
				clock += int64(rng.IntN(3))
				at := base.Add(time.Duration(clock-int64(rng.IntN(3))) * time.Second)
				return at.Format(time.RFC3339), at.UnixNano()
			}
			outcome := func() string {
				switch k := rng.IntN(20); {
				case k == 0:
					return outcomes[2+rng.IntN(2)]
				case float64(k)/20 < pCorrect:
					return journal.OutcomeCorrect
				default:
					return journal.OutcomeIncorrect
				}
			}
			nextDec := 0
			steps := nDec * 3
			for step := 0; step < steps || nextDec < nDec; step++ {
				switch k := rng.IntN(10); {
				case k < 4 && nextDec < nDec, step >= steps && nextDec < nDec:
					id := ids[perm[nextDec]]
					nextDec++
					s, at := ts()
					d := decisionLine(id, s)
					line, evAt := ref.line(project.DecisionsFile, at)
					if nDec > 0 && rng.IntN(3) == 0 {
						prev := ids[rng.IntN(nDec)]
						o := outcome()
						d.Retrograde = journal.Retrograde{PreviousID: &prev, Outcome: o}
						ref.event(prev, o, evAt, 0, line)
					}
					x.appendLine(t, project.DecisionsFile, &d)
					ref.order = append(ref.order, id)
				case k < 8 && nDec > 0:
					id := ids[rng.IntN(nDec)]
					o := outcome()
					s, at := ts()
					line, evAt := ref.line(project.RetroFile, at)
					x.appendLine(t, project.RetroFile, &journal.OutcomeRecord{TS: s, DecisionID: id, Outcome: o})
					ref.event(id, o, evAt, 1, line)
				default:
					x.sync(t)
					ref.check(t, x.current(t), fmt.Sprintf("step %d", step))
				}
			}
			x.sync(t)
			h := x.current(t)
			ref.check(t, h, "end")
			seen[string(h.Level)] = true
			seen[fmt.Sprint("alert=", h.Alert)] = true
		})
	}
	for _, k := range []string{"standard", "elevated", "demoted", "alert=true", "alert=false"} {
		if !seen[k] {
			t.Errorf("no random journal ended with %s; widen the generator", k)
		}
	}
}

// TestCurrentSmallJournals pins the empty and tiny cases through a real
// index.
func TestCurrentSmallJournals(t *testing.T) {
	ts := "2026-03-08T10:00:00Z"
	tests := []struct {
		name  string
		write func(t *testing.T, x *index)
		want  trust.Headline
	}{
		{"no journal", func(*testing.T, *index) {}, trust.Headline{Level: trust.Standard}},
		{"one pending decision", func(t *testing.T, x *index) {
			d := decisionLine("a", ts)
			x.appendLine(t, project.DecisionsFile, &d)
		}, trust.Headline{Level: trust.Standard}},
		{"one correct decision", func(t *testing.T, x *index) {
			d := decisionLine("a", ts)
			x.appendLine(t, project.DecisionsFile, &d)
			x.appendLine(t, project.RetroFile, &journal.OutcomeRecord{TS: ts, DecisionID: "a", Outcome: "CORRECT"})
		}, trust.Headline{Correct: 1, Accuracy: 1, Last20: trust.NewWindow(1, 0), Last10: trust.NewWindow(1, 0), Level: trust.Standard}},
		{"an outcome for a decision not in the journal does not count", func(t *testing.T, x *index) {
			x.appendLine(t, project.RetroFile, &journal.OutcomeRecord{TS: ts, DecisionID: "ghost", Outcome: "INCORRECT"})
		}, trust.Headline{Level: trust.Standard}},
		{"a correction back to PENDING unscores", func(t *testing.T, x *index) {
			d := decisionLine("a", ts)
			x.appendLine(t, project.DecisionsFile, &d)
			x.appendLine(t, project.RetroFile, &journal.OutcomeRecord{TS: ts, DecisionID: "a", Outcome: "INCORRECT"})
			x.appendLine(t, project.RetroFile, &journal.OutcomeRecord{TS: "2026-03-08T10:00:01Z", DecisionID: "a", Outcome: "PENDING"})
		}, trust.Headline{Level: trust.Standard}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := newIndex(t)
			tt.write(t, x)
			x.sync(t)
			if got := x.current(t); got != tt.want {
				t.Errorf("Current() =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// TestCurrentAlertThroughIndex: ten scored decisions, five of them wrong,
// raise the alert with the seed's text.
func TestCurrentAlertThroughIndex(t *testing.T) {
	x := newIndex(t)
	for k := range 10 {
		id := fmt.Sprintf("iter-1-%d", k+1)
		d := decisionLine(id, "2026-03-08T10:00:00Z")
		x.appendLine(t, project.DecisionsFile, &d)
		o := journal.OutcomeCorrect
		if k%2 == 1 {
			o = journal.OutcomeIncorrect
		}
		x.appendLine(t, project.RetroFile, &journal.OutcomeRecord{TS: "2026-03-08T11:00:00Z", DecisionID: id, Outcome: o})
	}
	x.sync(t)
	h := x.current(t)
	if !h.Alert {
		t.Fatalf("Current() Alert = false with 5/10 correct; want true (%+v)", h)
	}
	if got := h.AlertText(); !strings.Contains(got, "TRUST CALIBRATION ALERT: Decision accuracy at 50%") {
		t.Errorf("AlertText() = %q; want the seed's alert at 50%%", got)
	}
}
