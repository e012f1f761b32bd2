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

// Window is accuracy over a run of scored decisions. Need, for a rolling
// window (the last 20, the last 10) whose rule applies (the loop has that
// many scored decisions, an adopted baseline included), is how many
// decisions it is meant to hold: one that holds fewer rests on fewer
// decisions than its rule needs (the baseline's have no order).
type Window struct {
	N         int     `json:"n"`
	Correct   int     `json:"correct"`
	Incorrect int     `json:"incorrect"`
	Accuracy  float64 `json:"accuracy"`
	Need      int     `json:"need,omitempty"`
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

// Partial reports whether a rolling window holds fewer decisions than it
// needs.
func (w Window) Partial() bool { return w.Need > 0 && w.N < w.Need }

// Text is "correct/n = p%", "n/a" when the window is empty, and for a
// rolling window that holds fewer decisions than it needs, says so.
func (w Window) Text() string {
	if w.N == 0 {
		if w.Need > 0 {
			return fmt.Sprintf("n/a (none of the %d it needs)", w.Need)
		}
		return "n/a"
	}
	t := fmt.Sprintf("%d/%d = %.1f%%", w.Correct, w.N, w.Accuracy*100)
	if w.Partial() {
		t += fmt.Sprintf(" (only %d of the %d it needs)", w.N, w.Need)
	}
	return t
}

// surelyBelow reports whether the window's accuracy is below threshold
// whatever the decisions it lacks were: they are counted as correct. A
// full window is judged on its own accuracy; one that rests on fewer
// decisions than it needs (after an adopted baseline, whose decisions have
// no order) moves a level only when the missing ones could not change the
// verdict.
func (w Window) surelyBelow(threshold float64) bool {
	if w.N == 0 {
		return false
	}
	size := max(w.N, w.Need)
	return float64(w.Correct+size-w.N) < threshold*float64(size)
}

// Rules are seed 000's trust calibration rules, made exact.
const (
	// MinScored is how many scored decisions a level other than standard
	// needs.
	MinScored = 20
	// ElevatedAbove: overall accuracy strictly above this elevates (seed
	// 000: "accuracy > 90%: elevated (after 20+ decisions)", accuracy
	// being correct / (correct + incorrect)).
	ElevatedAbove = 0.90
	// DemotedBelow: last-20 accuracy strictly below this demotes (seed
	// 000: "accuracy < 80% (last 20 decisions)").
	DemotedBelow = 0.80
	// AlertMinScored and AlertBelow: with at least 10 scored decisions, a
	// last-10 accuracy strictly below 0.60 raises the alert.
	AlertMinScored = 10
	AlertBelow     = 0.60
	// Window sizes of the rules.
	Last20Size = 20
	Last10Size = 10
)

// LevelFor applies the rules to the number of scored decisions, the
// overall accuracy and the last-20 window. Demoted is checked first: a
// loop accurate overall that has gone wrong lately is demoted, not
// elevated (the seed's table lists both without saying which wins).
func LevelFor(scored int, overall, last20 Window) Level {
	switch {
	case scored < MinScored:
		return Standard
	case last20.surelyBelow(DemotedBelow):
		return Demoted
	case overall.Accuracy > ElevatedAbove:
		return Elevated
	default:
		return Standard
	}
}

// AlertFor applies the alert rule.
func AlertFor(scored int, last10 Window) bool {
	return scored >= AlertMinScored && last10.surelyBelow(AlertBelow)
}

// Headline is what a hook needs before the next decision: totals, the two
// windows, the level and the alert. Correct and Incorrect are the loop's
// totals: the Baseline adopted from before orbit (zero when none) plus the
// outcomes recorded since. The windows hold recorded outcomes only (the
// baseline has no order).
type Headline struct {
	Correct   int     `json:"correct"`
	Incorrect int     `json:"incorrect"`
	Accuracy  float64 `json:"accuracy"`
	Baseline  Window  `json:"baseline"`
	Last20    Window  `json:"last20"`
	Last10    Window  `json:"last10"`
	Level     Level   `json:"level"`
	Alert     bool    `json:"alert"`
}

// UnknownFields: with nothing scored, the accuracy is unknown.
func (h Headline) UnknownFields() []string { return unknownIf(h.Scored() == 0, "accuracy") }

// String is the window's Text.
func (w Window) String() string { return w.Text() }

// Scored returns correct + incorrect.
func (h Headline) Scored() int { return h.Correct + h.Incorrect }

// Recorded is what the outcome events orbit indexed say, without the
// baseline.
func (h Headline) Recorded() Window {
	return NewWindow(h.Correct-h.Baseline.Correct, h.Incorrect-h.Baseline.Incorrect)
}

// AccuracyText is the overall accuracy: "47/49 = 95.9%", and with an
// adopted baseline "47/49 from before orbit + 3/4 recorded since = 50/53 =
// 94.3%".
func (h Headline) AccuracyText() string {
	all := NewWindow(h.Correct, h.Incorrect)
	if h.Baseline.N == 0 {
		return all.Text()
	}
	r := h.Recorded()
	return fmt.Sprintf("%d/%d from before orbit + %d/%d recorded since = %s", h.Baseline.Correct, h.Baseline.N, r.Correct, r.N, all.Text())
}

// Summary is the headline in one line: the accuracy over every scored
// decision (what came from before orbit said apart), the last 20 and the
// last 10, and the trust level.
func (h Headline) Summary() string {
	return fmt.Sprintf("Accuracy: %s | last 20: %s | last 10: %s | trust level: %s", h.AccuracyText(), h.Last20.Text(), h.Last10.Text(), h.Level)
}

// AlertText is seed 000's alert for the alert rule (last 10 below 60%),
// with the last-10 accuracy: surface it to a human now.
func (h Headline) AlertText() string {
	return fmt.Sprintf("⚠️ TRUST CALIBRATION ALERT: Decision accuracy at %.0f%% (last %d decisions).\nElevated caution mode active. Escalating medium-tier decisions to human review. Surface this to the human now.",
		h.Last10.Accuracy*100, h.Last10.N)
}

// DemotedText is what seed 000 says to output at the start of the REASON
// phase while trust is demoted, with the last-20 accuracy.
func (h Headline) DemotedText() string {
	return fmt.Sprintf("⚠️ TRUST CALIBRATION ALERT: Decision accuracy at %.0f%% (last %d decisions).\nElevated caution mode active. Escalating medium-tier decisions to human review.",
		h.Last20.Accuracy*100, h.Last20.N)
}

// Warning is the alert the loop must show now: the alert rule's when it
// fires, else the demoted level's; "" when neither.
func (h Headline) Warning() string {
	switch {
	case h.Alert:
		return h.AlertText()
	case h.Level == Demoted:
		return h.DemotedText()
	}
	return ""
}

// Source is what the headline is read from: the index's totals and its
// latest scored outcomes (true for CORRECT), newest first.
type Source interface {
	OutcomeTotals(ctx context.Context) (correct, incorrect int, err error)
	LatestScored(ctx context.Context, n int) ([]bool, error)
}

// BaselineSource is a Source that also knows the counters adopted from a
// loop that kept its own before orbit came (recorded once, in orbit's loop
// event journal): they count in the totals.
type BaselineSource interface {
	Baseline(ctx context.Context) (correct, incorrect int, err error)
}

// Current computes the headline from the index without scanning it: reads
// of derived tables, cheap enough for every hook call.
func Current(ctx context.Context, src Source) (Headline, error) {
	c, i, err := src.OutcomeTotals(ctx)
	if err != nil {
		return Headline{}, err
	}
	latest, err := src.LatestScored(ctx, Last20Size)
	if err != nil {
		return Headline{}, err
	}
	var base Window
	if bs, ok := src.(BaselineSource); ok {
		bc, bi, err := bs.Baseline(ctx)
		if err != nil {
			return Headline{}, err
		}
		base = NewWindow(bc, bi)
	}
	return headline(c, i, base, latest), nil
}

// headline computes the headline from the recorded totals, the baseline
// and the latest recorded outcomes.
func headline(correct, incorrect int, base Window, latestNewestFirst []bool) Headline {
	h := Headline{Correct: correct + base.Correct, Incorrect: incorrect + base.Incorrect, Baseline: base}
	all := NewWindow(h.Correct, h.Incorrect)
	h.Accuracy = all.Accuracy
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
		w := NewWindow(c, i)
		if correct+incorrect+base.N >= n {
			w.Need = n
		}
		return w
	}
	h.Last20, h.Last10 = count(Last20Size), count(Last10Size)
	h.Level = LevelFor(h.Scored(), all, h.Last20)
	h.Alert = AlertFor(h.Scored(), h.Last10)
	return h
}
