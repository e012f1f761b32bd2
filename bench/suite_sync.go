package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// syncTarget is the most `orbit sync` of one new line may cost on the large
// journal, relative to the small one.
const syncTarget = 1.2

// warmups are untimed rounds before the timed ones.
const warmups = 3

// runSync times `orbit sync` after one line is appended to a large and a
// small journal: sync must cost O(new bytes), not O(journal).
func runSync(ctx context.Context, e *Env) (string, error) {
	sizes := []int{e.Large(), e.Small()}
	var cs []*contender
	for _, n := range sizes {
		dir, err := e.Project(ctx, n)
		if err != nil {
			return "", err
		}
		path := JournalPath(dir)
		cs = append(cs, &contender{name: fmt.Sprintf("`orbit sync`, %s-decision journal", SizeLabel(n)), run: func(round int) (Sample, error) {
			id := fmt.Sprintf("bench-sync-%d-%d", time.Now().UnixNano(), round)
			if err := AppendLine(path, DecisionLine(id, 1_000_000)); err != nil {
				return Sample{}, err
			}
			s, err := Measure(e.OrbitCmd(dir, "sync"))
			if err == nil && !strings.Contains(string(s.Stdout), "+1 decision,") {
				err = fmt.Errorf("orbit sync in %s did not index the appended line:\n%s", dir, s.Stdout)
			}
			return s, err
		}})
	}
	e.Logf("sync: %d rounds of append + `orbit sync` on %s and %s decisions", e.Runs.Small, SizeLabel(sizes[0]), SizeLabel(sizes[1]))
	if err := rounds(ctx, e.Runs.Small, cs); err != nil {
		return "", err
	}

	small := Summarize(cs[1].samples)
	t := Table{Header: []string{"command", "median", "p90", "min", "max", "CPU (median)", "÷ small journal"}}
	for _, c := range cs {
		st := Summarize(c.samples)
		t.Add(c.name, Dur(st.Median), Dur(st.P90), Dur(st.Min), Dur(st.Max), Dur(st.MedianCPU), Ratio(st.Median, small.Median))
	}
	large := Summarize(cs[0].samples)
	ratio := float64(large.Median) / float64(small.Median)

	var b strings.Builder
	fmt.Fprintf(&b, "Each round appends one valid decision line with a new id to the project's journal (one `O_APPEND` write from the harness, as `echo >>` does), then times `orbit sync` in the project; %d rounds, the two journals interleaved, after %d untimed rounds. Both projects were filled once with `orbit import`.\n\n",
		e.Runs.Small, warmups)
	b.WriteString(t.String())
	b.WriteString("\n")
	fmt.Fprintf(&b, "Ratio %s / %s: **%.2f** (target at most %.1f: %s).\n", SizeLabel(sizes[0]), SizeLabel(sizes[1]), ratio, syncTarget, met(ratio <= syncTarget))
	return b.String(), nil
}

// rounds runs warm-up rounds, then n timed rounds of every contender in
// turn, so that they share the machine's noise.
func rounds(ctx context.Context, n int, cs []*contender) error {
	for round := range warmups + n {
		for _, c := range cs {
			if err := ctx.Err(); err != nil {
				return err
			}
			s, err := c.run(round)
			if err != nil {
				return err
			}
			if round >= warmups {
				c.samples = append(c.samples, s)
			}
		}
	}
	return nil
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}
