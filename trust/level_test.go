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

func TestLevelFor(t *testing.T) {
	tests := []struct {
		name               string
		scored             int
		correct, incorrect int // the last-20 window
		want               trust.Level
	}{
		{"none scored", 0, 0, 0, trust.Standard},
		{"19 scored all correct", 19, 19, 0, trust.Standard},
		{"19 scored all incorrect", 19, 0, 19, trust.Standard},
		{"20 scored all correct", 20, 20, 0, trust.Elevated},
		{"20 scored 19/20 = 95%", 20, 19, 1, trust.Elevated},
		{"exactly 90% is not above 90%", 20, 18, 2, trust.Standard},
		{"85%", 20, 17, 3, trust.Standard},
		{"exactly 80% is not below 80%", 20, 16, 4, trust.Standard},
		{"75% demotes", 20, 15, 5, trust.Demoted},
		{"all incorrect demotes", 20, 0, 20, trust.Demoted},
		{"many scored, last 20 at 95%", 500, 19, 1, trust.Elevated},
		{"many scored, last 20 at 90%", 500, 18, 2, trust.Standard},
		{"many scored, last 20 at 80%", 500, 16, 4, trust.Standard},
		{"many scored, last 20 at 75%", 500, 15, 5, trust.Demoted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := trust.NewWindow(tt.correct, tt.incorrect)
			if got := trust.LevelFor(tt.scored, w); got != tt.want {
				t.Errorf("LevelFor(%d, %d/%d) = %q; want %q", tt.scored, tt.correct, w.N, got, tt.want)
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := trust.NewWindow(tt.correct, tt.incorrect)
			if got := trust.AlertFor(tt.scored, w); got != tt.want {
				t.Errorf("AlertFor(%d, %d/%d) = %v; want %v", tt.scored, tt.correct, w.N, got, tt.want)
			}
		})
	}
}

func TestAlertText(t *testing.T) {
	h := trust.Headline{Last10: trust.NewWindow(4, 6)}
	got := h.AlertText()
	for _, want := range []string{"TRUST CALIBRATION ALERT", "40%", "last 10 decisions", "Elevated caution mode active"} {
		if !strings.Contains(got, want) {
			t.Errorf("AlertText() = %q; want it to contain %q", got, want)
		}
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
			// the recent run.
			"old failures fall out of the windows",
			append(repeat(false, 20), repeat(true, 20)...),
			trust.Headline{Correct: 20, Incorrect: 20, Accuracy: 0.5, Last20: trust.NewWindow(20, 0), Last10: trust.NewWindow(10, 0), Level: trust.Elevated},
		},
		{
			"recent failures alert",
			append(repeat(true, 30), repeat(false, 5)...),
			trust.Headline{Correct: 30, Incorrect: 5, Accuracy: 30.0 / 35, Last20: trust.NewWindow(15, 5), Last10: trust.NewWindow(5, 5), Level: trust.Demoted, Alert: true},
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
