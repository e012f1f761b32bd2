package bench

import (
	"context"
	"fmt"
	"strings"
)

// decideContender times `orbit decide` with decideArgs plus extra flags in
// the project at dir, through `sh -c` as a hook runs it.
func (e *Env) decideContender(name, dir, extra string) *contender {
	args := decideArgs
	if extra != "" {
		args += " " + extra
	}
	return &contender{name: name, run: func(int) (Sample, error) {
		s, err := Measure(e.Command(dir, "sh", "-c", ShellQuote(e.Orbit)+" "+args))
		if err == nil && !strings.Contains(string(s.Stdout), "Id: iter-99999-") {
			err = fmt.Errorf("orbit %s in %s printed no decision id:\n%s", args, dir, s.Stdout)
		}
		return s, err
	}}
}

// runDecidePrecedents splits the hook path's cost: `orbit decide` as it runs
// by default (it also searches the 3 most similar past decisions) against
// `--precedents 0` on the large project, with jq appending the same line and
// `--precedents 0` on the small project for scale.
func runDecidePrecedents(ctx context.Context, e *Env) (string, error) {
	large, small := e.Large(), e.Small()
	dirL, err := e.Project(ctx, large)
	if err != nil {
		return "", err
	}
	dirS, err := e.Project(ctx, small)
	if err != nil {
		return "", err
	}
	L, S := SizeLabel(large), SizeLabel(small)
	def := e.decideContender(fmt.Sprintf("`orbit decide` (default: `--precedents 3`), %s-decision project", L), dirL, "")
	p0 := e.decideContender(fmt.Sprintf("`orbit decide --precedents 0`, %s-decision project", L), dirL, "--precedents 0")
	p0s := e.decideContender(fmt.Sprintf("`orbit decide --precedents 0`, %s-decision project", S), dirS, "--precedents 0")
	defS := e.decideContender(fmt.Sprintf("`orbit decide` (default: `--precedents 3`), %s-decision project", S), dirS, "")
	jq, jqLine, err := e.jqAppendContender(ctx, large, small)
	if err != nil {
		return "", err
	}
	var notes []string
	cs := []*contender{def, p0}
	if jq == nil {
		notes = append(notes, MissingTool("jq"))
	} else {
		cs = append(cs, jq)
	}
	cs = append(cs, defS, p0s)
	e.Logf("decide-precedents: %d rounds of %d commands", e.Runs.Small, len(cs))
	if err := rounds(ctx, e.Runs.Small, cs); err != nil {
		return "", err
	}

	stats := map[*contender]Stats{}
	t := Table{Header: []string{"command", "median", "p90", "min", "max", "CPU (median)", "peak RSS"}}
	for _, c := range cs {
		st := Summarize(c.samples)
		stats[c] = st
		t.Add(c.name, Dur(st.Median), Dur(st.P90), Dur(st.Min), Dur(st.Max), Dur(st.MedianCPU), PeakRSS(st.MedianRSSKB, st.ParentRSSKB))
	}
	r := Table{Header: []string{"ratio (medians)", "value", "target", ""}}
	added := stats[def].Median - stats[p0].Median
	r.Add(fmt.Sprintf("default ÷ `--precedents 0` (%s)", L), Ratio(stats[def].Median, stats[p0].Median), "", fmt.Sprintf("search adds %s", Dur(added)))
	r.Add(fmt.Sprintf("default ÷ `--precedents 0` (%s)", S), Ratio(stats[defS].Median, stats[p0s].Median), "",
		fmt.Sprintf("search adds %s", Dur(stats[defS].Median-stats[p0s].Median)))
	if jq != nil {
		for _, c := range []*contender{def, p0} {
			v := float64(stats[c].Median) / float64(stats[jq].Median)
			label := "default"
			if c == p0 {
				label = "`--precedents 0`"
			}
			target := hookVsJQTarget
			if c == def {
				target = decideVsJQTarget
			}
			r.Add(fmt.Sprintf("orbit %s (%s) ÷ jq", label, L), fmt.Sprintf("%.2f", v), fmt.Sprintf("≤ %.1f", target), met(v <= target))
		}
	}
	v := float64(stats[p0].Median) / float64(stats[p0s].Median)
	r.Add(fmt.Sprintf("`--precedents 0`: orbit (%s) ÷ orbit (%s)", L, S), fmt.Sprintf("%.2f", v), fmt.Sprintf("≤ %.1f", hookGrowthTarget), met(v <= hookGrowthTarget))
	v = float64(stats[def].Median) / float64(stats[defS].Median)
	r.Add(fmt.Sprintf("default: orbit (%s) ÷ orbit (%s)", L, S), fmt.Sprintf("%.2f", v), fmt.Sprintf("≤ %.1f", hookGrowthTarget), met(v <= hookGrowthTarget))

	var b strings.Builder
	fmt.Fprintf(&b, "What precedent search adds to the hook path. `orbit decide` searches the 3 most similar past decisions by default (`--precedents 3`: the decision's input and context as the query, its category boosted; it asks for 4 hits and drops the decision itself) and prints them under the decision; `--precedents 0` skips the search. Same decision, same projects and same whole-process measurement as the previous section (through `sh -c`, in the project's directory), %d rounds, the commands interleaved, after %d untimed rounds. Every run appends a decision, so the query's own words (`Add ESLint rule eqeqeq`) are in more and more recent lines as the rounds go, as they would be for a loop repeating itself.\n\n",
		e.Runs.Small, warmups)
	b.WriteString(t.String())
	b.WriteString("\n")
	if strings.Contains(t.String(), "| ≤ ") {
		b.WriteString(rssNote + "\n\n")
	}
	b.WriteString(r.String())
	b.WriteString("\n")
	fmt.Fprintf(&b, "Commands:\n\n```sh\norbit %s\norbit %s --precedents 0\n", decideArgs, decideArgs)
	if jqLine != "" {
		b.WriteString(jqLine + "\n")
	}
	b.WriteString("```\n\n")
	for _, note := range notes {
		b.WriteString(note + "\n\n")
	}
	return b.String(), nil
}

// decideVsJQTarget: `orbit decide` with its default precedents over the jq
// line it replaces, at most (issue 21).
const decideVsJQTarget = 0.9
