package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/orbit-loop/orbit/project"
)

// Targets of `orbit trust` (the trust report issue).
const (
	// trustVsJQTarget: jq's time over orbit's on the large journal, at least.
	trustVsJQTarget = 20.0
	// trustGrowthTarget: orbit's time on the large journal over the small
	// one, at most.
	trustGrowthTarget = 3.0
	// trustJQRuns is how many times jq is timed on the large journal: it
	// slurps the whole file, so it is slow and needs gigabytes.
	trustJQRuns = 3
	// minTimedRuns is the fewest timed runs of a fast command in the suites
	// that compare whole processes of a few milliseconds.
	minTimedRuns = 15
)

// trustJQ computes the trust report's headline figures the seed's way, with
// `jq -s` over the journal: the current outcome of a decision is the latest
// retrograde event naming it (latest by line order: the synthetic journals'
// ts increase with the line), the scored decisions are those whose current
// outcome is CORRECT or INCORRECT, in journal order, and last20 / last10
// are the accuracy of the last 20 / 10 of them.
const trustJQ = `(reduce (.[] | .retrograde | select(.previous_id != null)) as $r ({}; .[$r.previous_id] = $r.outcome)) as $o
| [.[] | $o[.id] // empty | select(. == "CORRECT" or . == "INCORRECT")] as $s
| def acc(a): if (a | length) == 0 then 0 else ([a[] | select(. == "CORRECT")] | length) / (a | length) end;
  {decisions: length, with_outcome: ($s | length), correct: ([$s[] | select(. == "CORRECT")] | length),
   accuracy: acc($s), last20: acc($s[-20:]), last10: acc($s[-10:])}`

// trustFigures are the headline figures both orbit and jq compute.
type trustFigures struct {
	Decisions, WithOutcome, Correct int
	Accuracy, Last20, Last10        float64
}

func orbitTrustFigures(out []byte) (trustFigures, error) {
	var r struct {
		Decisions   int     `json:"decisions"`
		WithOutcome int     `json:"with_outcome"`
		Correct     int     `json:"correct"`
		Accuracy    float64 `json:"accuracy"`
		Last20      struct {
			Accuracy float64 `json:"accuracy"`
		} `json:"last20"`
		Last10 struct {
			Accuracy float64 `json:"accuracy"`
		} `json:"last10"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return trustFigures{}, fmt.Errorf("orbit trust --json: %w\n%s", err, tail(string(out), 500))
	}
	return trustFigures{r.Decisions, r.WithOutcome, r.Correct, r.Accuracy, r.Last20.Accuracy, r.Last10.Accuracy}, nil
}

func jqTrustFigures(out []byte) (trustFigures, error) {
	var r struct {
		Decisions   int     `json:"decisions"`
		WithOutcome int     `json:"with_outcome"`
		Correct     int     `json:"correct"`
		Accuracy    float64 `json:"accuracy"`
		Last20      float64 `json:"last20"`
		Last10      float64 `json:"last10"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return trustFigures{}, fmt.Errorf("jq trust program: %w\n%s", err, tail(string(out), 500))
	}
	return trustFigures{r.Decisions, r.WithOutcome, r.Correct, r.Accuracy, r.Last20, r.Last10}, nil
}

// sameFigures says whether orbit and jq agree (floats to 1e-12: both divide
// the same integers in float64).
func sameFigures(a, b trustFigures) bool {
	eq := func(x, y float64) bool { return math.Abs(x-y) <= 1e-12 }
	return a.Decisions == b.Decisions && a.WithOutcome == b.WithOutcome && a.Correct == b.Correct &&
		eq(a.Accuracy, b.Accuracy) && eq(a.Last20, b.Last20) && eq(a.Last10, b.Last10)
}

func (f trustFigures) row(name string) []string {
	return []string{name, fmt.Sprint(f.Decisions), fmt.Sprint(f.WithOutcome), fmt.Sprint(f.Correct),
		fmt.Sprintf("%.6f", f.Accuracy), fmt.Sprintf("%.2f", f.Last20), fmt.Sprintf("%.2f", f.Last10)}
}

// runTrust times `orbit trust --json` on the large and the small project
// against jq computing the same headline figures from the large journal.
func runTrust(ctx context.Context, e *Env) (string, error) {
	large, small := e.Large(), e.Small()
	L, S := SizeLabel(large), SizeLabel(small)
	dirs := map[int]string{}
	for _, n := range []int{large, small} {
		dir, err := e.Project(ctx, n)
		if err != nil {
			return "", err
		}
		dirs[n] = dir
	}
	figures := map[int]trustFigures{}
	orbit := func(n int) *contender {
		return &contender{name: fmt.Sprintf("`orbit trust --json`, %s-decision project", SizeLabel(n)), run: func(int) (Sample, error) {
			s, err := Measure(e.OrbitCmd(dirs[n], "trust", "--json"))
			if err != nil {
				return s, err
			}
			f, err := orbitTrustFigures(s.Stdout)
			if err == nil {
				if old, ok := figures[n]; ok && old != f {
					err = fmt.Errorf("orbit trust in %s changed its figures between runs: %+v, then %+v", dirs[n], old, f)
				}
				figures[n] = f
			}
			return s, err
		}}
	}
	cs := []*contender{orbit(large), orbit(small)}

	var notes []string
	var jq *contender
	jqFigures := map[int]trustFigures{}
	jqRun := func(n int) (Sample, error) {
		s, err := Measure(e.Command(dirs[n], e.JQ, "-c", "-s", trustJQ, project.DecisionsFile))
		if err != nil {
			return s, err
		}
		f, err := jqTrustFigures(s.Stdout)
		jqFigures[n] = f
		return s, err
	}
	if e.JQ == "" {
		notes = append(notes, MissingTool("jq"))
	} else {
		jq = &contender{name: fmt.Sprintf("`jq -s` over the JSONL, %s decisions", L), run: func(int) (Sample, error) { return jqRun(large) }}
	}

	runs := max(e.Runs.Small, minTimedRuns)
	e.Logf("trust: %d rounds of `orbit trust --json` on %s and %s, jq on %s in the first %d", runs, L, S, L, trustJQRuns)
	for round := range warmups + runs {
		for _, c := range cs {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			s, err := c.run(round)
			if err != nil {
				return "", err
			}
			if round >= warmups {
				c.samples = append(c.samples, s)
			}
		}
		// jq interleaved with the first timed rounds; no warm-up (the
		// journal is in the page cache already: orbit just read its size,
		// and the harness read it when it imported it).
		if jq != nil && round >= warmups && len(jq.samples) < trustJQRuns {
			s, err := jq.run(round)
			if err != nil {
				return "", err
			}
			e.Logf("  jq on %s: %s, peak RSS %s", L, Dur(s.Wall), MB(s.MaxRSSKB))
			jq.samples = append(jq.samples, s)
		}
	}

	// The check: jq and orbit agree on both journals, or the comparison
	// means nothing.
	fig := Table{Header: []string{"computed by", "decisions", "scored", "correct", "accuracy", "last 20", "last 10"}}
	if jq != nil {
		if _, err := jqRun(small); err != nil {
			return "", err
		}
		for _, n := range []int{large, small} {
			if !sameFigures(figures[n], jqFigures[n]) {
				return "", fmt.Errorf("trust: jq and orbit disagree on the %s-decision journal %s:\n  orbit: %+v\n  jq:    %+v",
					SizeLabel(n), JournalPath(dirs[n]), figures[n], jqFigures[n])
			}
		}
	}
	for _, n := range []int{large, small} {
		fig.Add(figures[n].row(fmt.Sprintf("`orbit trust --json`, %s", SizeLabel(n)))...)
		if jq != nil {
			fig.Add(jqFigures[n].row(fmt.Sprintf("`jq -s`, %s", SizeLabel(n)))...)
		}
	}

	all := cs
	if jq != nil {
		all = []*contender{cs[0], jq, cs[1]}
	}
	stats := map[*contender]Stats{}
	t := Table{Header: []string{"command", "runs", "median", "p90", "min", "max", "CPU (median)", "peak RSS (median)", "peak RSS (max)"}}
	for _, c := range all {
		st := Summarize(c.samples)
		stats[c] = st
		t.Add(c.name, fmt.Sprint(st.N), Dur(st.Median), Dur(st.P90), Dur(st.Min), Dur(st.Max), Dur(st.MedianCPU), PeakRSS(st.MedianRSSKB, st.ParentRSSKB), PeakRSS(st.MaxRSSKB, st.ParentRSSKB))
	}
	r := Table{Header: []string{"ratio (medians)", "value", "target", ""}}
	if jq != nil {
		v := float64(stats[jq].Median) / float64(stats[cs[0]].Median)
		r.Add(fmt.Sprintf("jq ÷ orbit (%s)", L), fmt.Sprintf("%.1f", v), fmt.Sprintf("≥ %.0f", trustVsJQTarget), met(v >= trustVsJQTarget))
	}
	v := float64(stats[cs[0]].Median) / float64(stats[cs[1]].Median)
	r.Add(fmt.Sprintf("orbit (%s) ÷ orbit (%s)", L, S), fmt.Sprintf("%.2f", v), fmt.Sprintf("≤ %.1f", trustGrowthTarget), met(v <= trustGrowthTarget))

	var b strings.Builder
	fmt.Fprintf(&b, "`orbit trust --json`, the whole report (headline, breakdowns, the last 60 iterations' trend, calibration) as a whole process in the project's directory: it syncs (one `stat` of an unchanged journal) and reads the totals the index keeps up to date. The seed's way is to compute the accuracy from the JSONL with `jq -s`: it reads the whole journal into memory, folds the retrograde verdicts into the latest outcome per decision id, then walks the decisions in journal order. orbit on %s and %s decisions: %d rounds, interleaved, after %d untimed rounds; jq on %s: %d runs, one in each of the first timed rounds. Peak RSS is `ru_maxrss`.\n\n",
		L, S, runs, warmups, L, trustJQRuns)
	b.WriteString(t.String())
	b.WriteString("\n")
	if strings.Contains(t.String(), "| ≤ ") {
		b.WriteString(rssNote + "\n\n")
	}
	b.WriteString(r.String())
	b.WriteString("\n")
	if jq != nil {
		b.WriteString("The suite checks that both compute the same figures (it fails otherwise); they did:\n\n")
	} else {
		b.WriteString("orbit's figures:\n\n")
	}
	b.WriteString(fig.String())
	b.WriteString("\n")
	fmt.Fprintf(&b, "Commands, in the project's directory:\n\n```sh\norbit trust --json\njq -c -s %s %s\n```\n\n", ShellQuote(trustJQ), project.DecisionsFile)
	for _, note := range notes {
		b.WriteString(note + "\n\n")
	}
	return b.String(), nil
}
