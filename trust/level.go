package trust

import (
	"context"
	"fmt"
)

// Level is a trust level of seed 000.
type Level string

// Trust levels.
const (
	Standard Level = "standard"
	Elevated Level = "elevated"
	Demoted  Level = "demoted"
)

// Levels are the trust levels, in the seed's order.
var Levels = []Level{Standard, Elevated, Demoted}

// Window is accuracy over a run of scored decisions.
type Window struct {
	N         int     `json:"n"`
	Correct   int     `json:"correct"`
	Incorrect int     `json:"incorrect"`
	Accuracy  float64 `json:"accuracy"`
}

// UnknownFields: with nothing in the window, its accuracy is unknown.
func (w Window) UnknownFields() []string { return unknownIf(w.N == 0, "accuracy") }

// unknownIf is names when cond holds: what a type's UnknownFields says.
func unknownIf(cond bool, names ...string) []string {
	if cond {
		return names
	}
	return nil
}

// NewWindow counts a window.
func NewWindow(correct, incorrect int) Window {
	w := Window{N: correct + incorrect, Correct: correct, Incorrect: incorrect}
	if w.N > 0 {
		w.Accuracy = float64(correct) / float64(w.N)
	}
	return w
}

// Rules are seed 000's trust calibration rules, made exact.
const (
	// MinScored is how many scored decisions a level other than standard
	// needs.
	MinScored = 20
	// ElevatedAbove: last-20 accuracy strictly above this elevates.
	ElevatedAbove = 0.90
	// DemotedBelow: last-20 accuracy strictly below this demotes.
	DemotedBelow = 0.80
	// AlertMinScored and AlertBelow: with at least 10 scored decisions, a
	// last-10 accuracy strictly below 0.60 raises the alert.
	AlertMinScored = 10
	AlertBelow     = 0.60
)

// LevelFor applies the rules to the number of scored decisions and the
// last-20 window.
func LevelFor(scored int, last20 Window) Level {
	switch {
	case scored < MinScored:
		return Standard
	case last20.Accuracy > ElevatedAbove:
		return Elevated
	case last20.Accuracy < DemotedBelow:
		return Demoted
	default:
		return Standard
	}
}

// AlertFor applies the alert rule.
func AlertFor(scored int, last10 Window) bool {
	return scored >= AlertMinScored && last10.Accuracy < AlertBelow
}

// Headline is what a hook needs before the next decision: totals, the two
// windows, the level and the alert.
type Headline struct {
	Correct   int     `json:"correct"`
	Incorrect int     `json:"incorrect"`
	Accuracy  float64 `json:"accuracy"`
	Last20    Window  `json:"last20"`
	Last10    Window  `json:"last10"`
	Level     Level   `json:"level"`
	Alert     bool    `json:"alert"`
}

// UnknownFields: with nothing scored, the accuracy is unknown.
func (h Headline) UnknownFields() []string { return unknownIf(h.Scored() == 0, "accuracy") }

// String is "correct/n = accuracy%", or "n/a" for an empty window.
func (w Window) String() string {
	if w.N == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%d/%d = %.1f%%", w.Correct, w.N, w.Accuracy*100)
}

// Summary is the headline in one line: the accuracy over every scored
// decision, the last 20 and the last 10, and the trust level.
func (h Headline) Summary() string {
	return fmt.Sprintf("Accuracy: %s | last 20: %s | last 10: %s | trust level: %s", NewWindow(h.Correct, h.Incorrect), h.Last20, h.Last10, h.Level)
}

// Scored returns correct + incorrect.
func (h Headline) Scored() int { return h.Correct + h.Incorrect }

// AlertText is seed 000's alert, with the last-10 accuracy.
func (h Headline) AlertText() string {
	return fmt.Sprintf("⚠️ TRUST CALIBRATION ALERT: Decision accuracy at %.0f%% (last %d decisions).\nElevated caution mode active. Escalating medium-tier decisions to human review.",
		h.Last10.Accuracy*100, h.Last10.N)
}

// Source is what the headline is read from: the index's totals and its
// latest scored outcomes (true for CORRECT), newest first.
type Source interface {
	OutcomeTotals(ctx context.Context) (correct, incorrect int, err error)
	LatestScored(ctx context.Context, n int) ([]bool, error)
}

// Current computes the headline from the index without scanning it: two
// reads of derived tables, cheap enough for every hook call.
func Current(ctx context.Context, src Source) (Headline, error) {
	c, i, err := src.OutcomeTotals(ctx)
	if err != nil {
		return Headline{}, err
	}
	latest, err := src.LatestScored(ctx, 20)
	if err != nil {
		return Headline{}, err
	}
	return headline(c, i, latest), nil
}

func headline(correct, incorrect int, latestNewestFirst []bool) Headline {
	h := Headline{Correct: correct, Incorrect: incorrect}
	h.Accuracy = NewWindow(correct, incorrect).Accuracy
	count := func(n int) Window {
		var c, i int
		for k, ok := range latestNewestFirst {
			if k == n {
				break
			}
			if ok {
				c++
			} else {
				i++
			}
		}
		return NewWindow(c, i)
	}
	h.Last20, h.Last10 = count(20), count(10)
	h.Level = LevelFor(h.Scored(), h.Last20)
	h.Alert = AlertFor(h.Scored(), h.Last10)
	return h
}
