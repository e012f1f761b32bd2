package trust_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/trust"
)

func TestNewWindow(t *testing.T) {
	tests := []struct {
		name               string
		correct, incorrect int
		want               trust.Window
	}{
		{"empty", 0, 0, trust.Window{}},
		{"all correct", 3, 0, trust.Window{N: 3, Correct: 3, Accuracy: 1}},
		{"all incorrect", 0, 4, trust.Window{N: 4, Incorrect: 4, Accuracy: 0}},
		{"mixed", 3, 1, trust.Window{N: 4, Correct: 3, Incorrect: 1, Accuracy: 0.75}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := trust.NewWindow(tt.correct, tt.incorrect); got != tt.want {
				t.Errorf("NewWindow(%d, %d) = %+v; want %+v", tt.correct, tt.incorrect, got, tt.want)
			}
		})
	}
}

// TestLevelFor holds seed 000's rules: elevated on the overall accuracy
// (correct / (correct + incorrect)) after 20 decisions, demoted on the last
// 20; a demotion wins over an elevation; a last-20 window that rests on
// fewer than 20 recorded decisions (after an adopted baseline) demotes
// only when the missing ones could not save it.
func TestLevelFor(t *testing.T) {
	tests := []struct {
		name    string
		scored  int
		overall [2]int // correct, incorrect
		last20  [2]int
		want    trust.Level
	}{
		{"none scored", 0, [2]int{0, 0}, [2]int{0, 0}, trust.Standard},
		{"19 scored all correct", 19, [2]int{19, 0}, [2]int{19, 0}, trust.Standard},
		{"19 scored all incorrect", 19, [2]int{0, 19}, [2]int{0, 19}, trust.Standard},
		{"20 scored all correct", 20, [2]int{20, 0}, [2]int{20, 0}, trust.Elevated},
		{"20 scored 19/20 = 95%", 20, [2]int{19, 1}, [2]int{19, 1}, trust.Elevated},
		{"exactly 90% is not above 90%", 20, [2]int{18, 2}, [2]int{18, 2}, trust.Standard},
		{"85%", 20, [2]int{17, 3}, [2]int{17, 3}, trust.Standard},
		{"exactly 80% is not below 80%", 20, [2]int{16, 4}, [2]int{16, 4}, trust.Standard},
		{"75% demotes", 20, [2]int{15, 5}, [2]int{15, 5}, trust.Demoted},
		{"all incorrect demotes", 20, [2]int{0, 20}, [2]int{0, 20}, trust.Demoted},
		// The seed elevates on overall accuracy, not on the last 20.
		{"overall 95%, last 20 at 85%", 500, [2]int{475, 25}, [2]int{17, 3}, trust.Elevated},
		{"overall 88%, last 20 at 100%", 500, [2]int{440, 60}, [2]int{20, 0}, trust.Standard},
		{"overall 95%, last 20 at 75%: demoted wins", 500, [2]int{475, 25}, [2]int{15, 5}, trust.Demoted},
		{"many scored, last 20 at 80%", 500, [2]int{400, 100}, [2]int{16, 4}, trust.Standard},
		// A baseline of 47/49 and few outcomes recorded since: the window
		// holds fewer than 20.
		{"baseline, nothing recorded since", 49, [2]int{47, 2}, [2]int{0, 0}, trust.Elevated},
		{"baseline, 1 of 1 recorded since incorrect", 50, [2]int{47, 3}, [2]int{0, 1}, trust.Elevated},
		{"baseline, 4 incorrect since: 16/20 at best, overall 88.7%", 53, [2]int{47, 6}, [2]int{0, 4}, trust.Standard},
		{"baseline, 5 incorrect since: at most 15/20", 54, [2]int{47, 7}, [2]int{0, 5}, trust.Demoted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			overall := trust.NewWindow(tt.overall[0], tt.overall[1])
			w := trust.NewWindow(tt.last20[0], tt.last20[1])
			w.Need = trust.Last20Size
			if got := trust.LevelFor(tt.scored, overall, w); got != tt.want {
				t.Errorf("LevelFor(%d, overall %d/%d, last 20 %d/%d) = %q; want %q", tt.scored, overall.Correct, overall.N, tt.last20[0], w.N, got, tt.want)
			}
		})
	}
}

func TestAlertFor(t *testing.T) {
	tests := []struct {
		name               string
		scored             int
		correct, incorrect int // the last-10 window
		want               bool
	}{
		{"none scored", 0, 0, 0, false},
		{"9 scored all incorrect", 9, 0, 9, false},
		{"10 scored all incorrect", 10, 0, 10, true},
		{"10 scored 50%", 10, 5, 5, true},
		{"exactly 60% is not below 60%", 10, 6, 4, false},
		{"70%", 10, 7, 3, false},
		{"many scored, last 10 at 50%", 300, 5, 5, true},
		{"many scored, last 10 at 60%", 300, 6, 4, false},
		// After a baseline: 4 recorded since, all incorrect, could still be
		// 6/10; 5 could not.
		{"baseline, 4 incorrect since", 53, 0, 4, false},
		{"baseline, 5 incorrect since", 54, 0, 5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := trust.NewWindow(tt.correct, tt.incorrect)
			w.Need = trust.Last10Size
			if got := trust.AlertFor(tt.scored, w); got != tt.want {
				t.Errorf("AlertFor(%d, %d/%d) = %v; want %v", tt.scored, tt.correct, w.N, got, tt.want)
			}
		})
	}
}

func TestAlertText(t *testing.T) {
	h := trust.Headline{Last10: trust.NewWindow(4, 6)}
	got := h.AlertText()
	for _, want := range []string{"TRUST CALIBRATION ALERT", "40%", "last 10 decisions", "Elevated caution mode active", "Surface this to the human now"} {
		if !strings.Contains(got, want) {
			t.Errorf("AlertText() = %q; want it to contain %q", got, want)
		}
	}
}

// TestWarning: seed 000 shows its TRUST CALIBRATION ALERT whenever trust is
// demoted (with the last-20 accuracy), not only when the last 10 fall
// below 60%.
func TestWarning(t *testing.T) {
	demoted := trust.Headline{Level: trust.Demoted, Last20: trust.NewWindow(15, 5), Last10: trust.NewWindow(8, 2)}
	if got := demoted.Warning(); !strings.Contains(got, "TRUST CALIBRATION ALERT: Decision accuracy at 75% (last 20 decisions)") {
		t.Errorf("demoted Warning() = %q; want the seed's alert at 75%% over the last 20", got)
	}
	alert := trust.Headline{Level: trust.Demoted, Alert: true, Last20: trust.NewWindow(10, 10), Last10: trust.NewWindow(4, 6)}
	if got := alert.Warning(); !strings.Contains(got, "40% (last 10 decisions)") || !strings.Contains(got, "human now") {
		t.Errorf("alert Warning() = %q; want the last-10 alert, surfaced to the human", got)
	}
	if got := (trust.Headline{Level: trust.Standard}).Warning(); got != "" {
		t.Errorf("standard Warning() = %q; want none", got)
	}
}

// TestAccuracyText: with an adopted baseline, the overall accuracy says
// what came from before orbit and what was recorded since.
func TestAccuracyText(t *testing.T) {
	h := trust.Headline{Correct: 50, Incorrect: 3, Baseline: trust.NewWindow(47, 2)}
	if got, want := h.AccuracyText(), "47/49 from before orbit + 3/4 recorded since = 50/53 = 94.3%"; got != want {
		t.Errorf("AccuracyText() = %q; want %q", got, want)
	}
	h = trust.Headline{Correct: 3, Incorrect: 1}
	if got, want := h.AccuracyText(), "3/4 = 75.0%"; got != want {
		t.Errorf("AccuracyText() = %q; want %q", got, want)
	}
	w := trust.NewWindow(3, 1)
	w.Need = 20
	if got, want := w.Text(), "3/4 = 75.0% (only 4 of the 20 it needs)"; got != want {
		t.Errorf("Text() = %q; want %q", got, want)
	}
}

func TestHeadlineScored(t *testing.T) {
	h := trust.Headline{Correct: 7, Incorrect: 3}
	if got := h.Scored(); got != 10 {
		t.Errorf("Headline{7, 3}.Scored() = %d; want 10", got)
	}
}

// fakeSource is a Source over a fixed list of outcomes in journal order.
type fakeSource struct {
	outcomes []bool // journal order, oldest first
	err      error
	asked    []int
}

func (f *fakeSource) OutcomeTotals(context.Context) (int, int, error) {
	var c, i int
	for _, ok := range f.outcomes {
		if ok {
			c++
		} else {
			i++
		}
	}
	return c, i, f.err
}

func (f *fakeSource) LatestScored(_ context.Context, n int) ([]bool, error) {
	f.asked = append(f.asked, n)
	var out []bool
	for k := len(f.outcomes) - 1; k >= 0 && len(out) < n; k-- {
		out = append(out, f.outcomes[k])
	}
	return out, nil
}

func need(w trust.Window, n int) trust.Window {
	w.Need = n
	return w
}

func repeat(ok bool, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = ok
	}
	return out
}

func TestCurrentWindows(t *testing.T) {
	tests := []struct {
		name     string
		outcomes []bool
		want     trust.Headline
	}{
		{"empty", nil, trust.Headline{Level: trust.Standard}},
		{"one correct", []bool{true}, trust.Headline{Correct: 1, Accuracy: 1, Last20: trust.NewWindow(1, 0), Last10: trust.NewWindow(1, 0), Level: trust.Standard}},
		{
			// 20 incorrect long ago, then 20 correct: the windows see only
			// the recent run, and the overall accuracy (50%) does not
			// elevate.
			"old failures fall out of the windows",
			append(repeat(false, 20), repeat(true, 20)...),
			trust.Headline{Correct: 20, Incorrect: 20, Accuracy: 0.5, Last20: need(trust.NewWindow(20, 0), 20), Last10: need(trust.NewWindow(10, 0), 10), Level: trust.Standard},
		},
		{
			"recent failures alert",
			append(repeat(true, 30), repeat(false, 5)...),
			trust.Headline{Correct: 30, Incorrect: 5, Accuracy: 30.0 / 35, Last20: need(trust.NewWindow(15, 5), 20), Last10: need(trust.NewWindow(5, 5), 10), Level: trust.Demoted, Alert: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{outcomes: tt.outcomes}
			got, err := trust.Current(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Current() =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestCurrentError(t *testing.T) {
	boom := errors.New("boom")
	_, err := trust.Current(context.Background(), &fakeSource{err: boom})
	if !errors.Is(err, boom) {
		t.Errorf("Current() error = %v; want %v", err, boom)
	}
}

// baselineSource is a fakeSource with counters adopted from before orbit.
type baselineSource struct {
	fakeSource
	correct, incorrect int
}

func (b *baselineSource) Baseline(context.Context) (int, int, error) {
	return b.correct, b.incorrect, nil
}

// TestCurrentBaseline: counters adopted from before orbit count in the
// totals and the overall accuracy (so 47/49 elevates at once), never in
// the rolling windows, which say they hold fewer than they need.
func TestCurrentBaseline(t *testing.T) {
	src := &baselineSource{fakeSource: fakeSource{outcomes: []bool{true, false, true}}, correct: 47, incorrect: 2}
	got, err := trust.Current(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	want := trust.Headline{Correct: 49, Incorrect: 3, Accuracy: 49.0 / 52, Baseline: trust.NewWindow(47, 2),
		Last20: need(trust.NewWindow(2, 1), 20), Last10: need(trust.NewWindow(2, 1), 10), Level: trust.Elevated}
	if got != want {
		t.Errorf("Current() =\n%+v\nwant\n%+v", got, want)
	}
	if !got.Last20.Partial() {
		t.Errorf("Last20 %+v is not partial", got.Last20)
	}
	if r := got.Recorded(); r != trust.NewWindow(2, 1) {
		t.Errorf("Recorded() = %+v; want 2/3", r)
	}
}
