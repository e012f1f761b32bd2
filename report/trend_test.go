package report

import (
	"testing"

	"github.com/orbit-loop/orbit/trust"
)

// TestTrendShowsGaps: iterations without a verified decision are drawn as
// gaps, never joined to their neighbours.
func TestTrendShowsGaps(t *testing.T) {
	at := func(iter int64, acc float64) trust.IterationStat {
		return trust.IterationStat{Iteration: iter, Stat: trust.Stat{Accuracy: acc}}
	}
	for _, tt := range []struct {
		name string
		its  []trust.IterationStat
		want string
	}{
		{"none", nil, "no iteration has a verified decision yet"},
		{"consecutive", []trust.IterationStat{at(1, 0), at(2, 0.5), at(3, 1)}, "iterations 1–3  ▁▅█"},
		{"a gap of two", []trust.IterationStat{at(1, 0), at(4, 1)}, "iterations 1–4  ▁··█  (· an iteration without a verified decision)"},
		{"a long gap", []trust.IterationStat{at(2, 1), at(3, 1), at(20, 0)}, "iterations 2–20  ██·…16…·▁  (· an iteration without a verified decision)"},
	} {
		if got := trend(tt.its); got != tt.want {
			t.Errorf("%s: trend = %q; want %q", tt.name, got, tt.want)
		}
	}
}
