package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/orbit-loop/orbit/trust"
)

func ci(i trust.Interval) string {
	return fmt.Sprintf("%.1f–%.1f%%", i.Low*100, i.High*100)
}

// statText is "c/n = p% [lo–hi%]", or "n/a" for an empty set; a rolling
// window that holds fewer decisions than it needs says so.
func statText(s trust.Stat) string {
	w := trust.Window{N: s.N, Correct: s.Correct, Incorrect: s.Incorrect, Accuracy: s.Accuracy, Need: s.Need}
	if s.N == 0 {
		return w.Text()
	}
	t := fmt.Sprintf("%d/%d = %.1f%% [%s]", s.Correct, s.N, s.Accuracy*100, ci(s.CI95))
	if w.Partial() {
		t += fmt.Sprintf(" (only %d of the %d it needs)", s.N, s.Need)
	}
	return t
}

// accuracyText is the report's overall accuracy, and with an adopted
// baseline what came from before orbit and what was recorded since.
func accuracyText(r trust.Report) string {
	t := statText(overall(r))
	if r.Baseline.N > 0 {
		rec := trust.NewWindow(r.Correct-r.Baseline.Correct, r.Incorrect-r.Baseline.Incorrect)
		t += fmt.Sprintf(" — %d/%d from before orbit (adopted from %s) + %d/%d recorded since",
			r.Baseline.Correct, r.Baseline.N, "ceo-loop-state.json", rec.Correct, rec.N)
	}
	return t
}

func groupTable(name string, gs []trust.Group) *Table {
	t := &Table{Header: []string{name, "N", "CORRECT", "INCORRECT", "ACCURACY", "95% CI"}}
	for _, g := range gs {
		t.Append(g.Value, strconv.Itoa(g.N), strconv.Itoa(g.Correct), strconv.Itoa(g.Incorrect),
			fmt.Sprintf("%.1f%%", g.Accuracy*100), ci(g.CI95))
	}
	return t
}

func reliabilityTable(c trust.Calibration) *Table {
	t := &Table{Header: []string{"CONFIDENCE", "N", "MEAN CONFIDENCE", "ACCURACY", "95% CI", "GAP"}}
	for _, b := range c.Bins {
		if b.N == 0 {
			continue
		}
		t.Append(fmt.Sprintf("%.2f–%.2f", b.Low, b.High), strconv.Itoa(b.N), fmt.Sprintf("%.3f", b.MeanConfidence),
			fmt.Sprintf("%.1f%%", b.Accuracy*100), ci(b.CI95), fmt.Sprintf("%+.1f", (b.Accuracy-b.MeanConfidence)*100))
	}
	return t
}

// trend is the per-iteration accuracy as a sparkline with its range. An
// iteration without a verified decision is a gap, drawn as one · (a run of
// more than maxGapDots as … with its length), so the line never joins
// iterations that were not next to each other.
func trend(its []trust.IterationStat) string {
	if len(its) == 0 {
		return "no iteration has a verified decision yet"
	}
	var b strings.Builder
	gaps := false
	for i, it := range its {
		if i > 0 {
			if k := it.Iteration - its[i-1].Iteration - 1; k > maxGapDots {
				fmt.Fprintf(&b, "·…%d…·", k)
				gaps = true
			} else if k > 0 {
				b.WriteString(strings.Repeat("·", int(k)))
				gaps = true
			}
		}
		b.WriteString(trust.Sparkline([]float64{it.Accuracy}))
	}
	line := fmt.Sprintf("iterations %d–%d  %s", its[0].Iteration, its[len(its)-1].Iteration, b.String())
	if gaps {
		line += "  (· an iteration without a verified decision)"
	}
	return line
}

// maxGapDots is the longest run of iterations without a verified decision
// that trend draws one dot each.
const maxGapDots = 5

func calibrationLine(c trust.Calibration) string {
	if c.N == 0 {
		return "no verified decision states a confidence"
	}
	return fmt.Sprintf("Brier %.3f (reliability %.3f, resolution %.3f, uncertainty %.3f, within bins %.3f); ECE %.3f over %d decisions with a stated confidence",
		c.Brier, c.Reliability, c.Resolution, c.Uncertainty, c.WithinBin, c.ECE, c.N)
}

// TrustText writes the trust report for a terminal (tables) or a pipe
// (the same sections, tables as tab-separated lines).
func TrustText(w io.Writer, r trust.Report, terminal bool) error {
	title := "Trust report"
	if r.Filter != "" {
		title += " (" + r.Filter + ")"
	}
	fmt.Fprintf(w, "%s\n", title)
	fmt.Fprintf(w, "level: %s\n", r.Level)
	fmt.Fprintf(w, "accuracy: %s\n", accuracyText(r))
	fmt.Fprintf(w, "last 20: %s\n", statText(r.Last20))
	fmt.Fprintf(w, "last 10: %s\n", statText(r.Last10))
	fmt.Fprintf(w, "decisions: %d, %d with an outcome\n", r.Decisions, r.WithOutcome)
	if r.AlertText != "" {
		fmt.Fprintf(w, "\n%s\n", r.AlertText)
	}
	for _, sec := range breakdowns(r, strings.ToUpper) {
		if len(sec.t.Rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s\n", sec.title)
		if err := sec.t.Render(w, terminal); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\nAccuracy per iteration\n%s\n", trend(r.Iterations))
	fmt.Fprintf(w, "\nCalibration\n%s\n", calibrationLine(r.Calibration))
	if t := reliabilityTable(r.Calibration); len(t.Rows) > 0 {
		return t.Render(w, terminal)
	}
	return nil
}

// section is one breakdown table of a trust report.
type section struct {
	title string
	t     *Table
}

// breakdowns are the report's tables by category, tier, depth and
// requestor, their first column headed by header("category") and so on.
func breakdowns(r trust.Report, header func(string) string) []section {
	return []section{
		{"By category", groupTable(header("category"), r.ByCategory)},
		{"By tier", groupTable(header("tier"), r.ByTier)},
		{"By depth", groupTable(header("depth"), r.ByDepth)},
		{"By requestor", groupTable(header("requestor"), r.ByRequestor)},
	}
}

// overall is the report's accuracy over every scored decision (an adopted
// baseline included), as a Stat.
func overall(r trust.Report) trust.Stat {
	return trust.Stat{N: r.Correct + r.Incorrect, Correct: r.Correct, Incorrect: r.Incorrect, Accuracy: r.Accuracy, CI95: r.CI95}
}

// TrustMarkdown writes the trust report as markdown, for a pull request or
// the progress file.
func TrustMarkdown(w io.Writer, r trust.Report) error {
	title := "Trust report"
	if r.Filter != "" {
		title += " (" + r.Filter + ")"
	}
	fmt.Fprintf(w, "## %s\n\n", title)
	fmt.Fprintf(w, "- **Level**: %s\n", r.Level)
	fmt.Fprintf(w, "- **Accuracy**: %s\n", accuracyText(r))
	fmt.Fprintf(w, "- **Last 20**: %s\n", statText(r.Last20))
	fmt.Fprintf(w, "- **Last 10**: %s\n", statText(r.Last10))
	fmt.Fprintf(w, "- **Decisions**: %d, %d with an outcome\n", r.Decisions, r.WithOutcome)
	fmt.Fprintf(w, "- **Trend**: %s\n", trend(r.Iterations))
	if r.AlertText != "" {
		fmt.Fprintf(w, "\n> %s\n", strings.ReplaceAll(r.AlertText, "\n", "\n> "))
	}
	for _, sec := range breakdowns(r, strings.ToLower) {
		if len(sec.t.Rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n### %s\n\n", sec.title)
		if err := sec.t.Markdown(w); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\n### Calibration\n\n%s\n", calibrationLine(r.Calibration))
	if t := reliabilityTable(r.Calibration); len(t.Rows) > 0 {
		fmt.Fprintln(w)
		return t.Markdown(w)
	}
	return nil
}
