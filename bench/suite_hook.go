package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orbit-loop/orbit/project"
)

// Targets of the hook path (ARCHITECTURE.md, "Hook path budget").
const (
	hookVsJQTarget   = 1.0
	hookGrowthTarget = 1.2
)

// decideArgs is the auto-approved decision the hook suite records: it needs
// no --decision, so it is what a hook records unattended.
const decideArgs = `decide --title 'Add ESLint rule eqeqeq' --category quality --impact low --reversible --iteration 99999`

// jqFilter builds the same seed-format line orbit writes for decideArgs.
const jqFilter = `{id: $id, iteration: 99999, ts: (now | todate), tier: "auto_approve", depth: "trivial", category: "quality", input: $title, decision: "APPROVED", reason: "Auto-approved: low impact and reversible (impact x reversibility matrix).", next_action: "", verification: "PENDING", retrograde: {previous_id: null, outcome: "N/A"}}`

// runHook times one `orbit decide` on a large and a small project against jq
// appending the same line to a journal, the way a bash hook does it.
func runHook(ctx context.Context, e *Env) (string, error) {
	large, small := e.Large(), e.Small()
	var cs []*contender
	for _, n := range []int{large, small} {
		dir, err := e.Project(ctx, n)
		if err != nil {
			return "", err
		}
		cs = append(cs, &contender{name: fmt.Sprintf("`orbit decide`, %s-decision project", SizeLabel(n)), run: func(int) (Sample, error) {
			s, err := Measure(e.Command(dir, "sh", "-c", ShellQuote(e.Orbit)+" "+decideArgs))
			if err == nil && !strings.Contains(string(s.Stdout), "Id: iter-99999-") {
				err = fmt.Errorf("orbit decide in %s printed no decision id:\n%s", dir, s.Stdout)
			}
			return s, err
		}})
	}
	var notes []string
	jq, jqLine, err := e.jqAppendContender(ctx, large, small)
	if err != nil {
		return "", err
	}
	if jq == nil {
		notes = append(notes, MissingTool("jq"))
	} else {
		// Interleave: orbit (large), jq, orbit (small).
		cs = []*contender{cs[0], jq, cs[1]}
	}
	e.Logf("hook: %d rounds of %d commands", e.Runs.Small, len(cs))
	if err := rounds(ctx, e.Runs.Small, cs); err != nil {
		return "", err
	}

	t := Table{Header: []string{"command", "median", "p90", "min", "max", "CPU (median)", "peak RSS"}}
	stats := map[*contender]Stats{}
	for _, c := range cs {
		st := Summarize(c.samples)
		stats[c] = st
		t.Add(c.name, Dur(st.Median), Dur(st.P90), Dur(st.Min), Dur(st.Max), Dur(st.MedianCPU), PeakRSS(st.MedianRSSKB, st.ParentRSSKB))
	}
	orbitLarge, orbitSmall := stats[cs[0]], stats[cs[len(cs)-1]]

	r := Table{Header: []string{"ratio (medians)", "value", "target", ""}}
	if e.JQ != "" {
		jq := stats[cs[1]]
		v := float64(orbitLarge.Median) / float64(jq.Median)
		r.Add(fmt.Sprintf("orbit (%s) ÷ jq", SizeLabel(large)), fmt.Sprintf("%.2f", v), fmt.Sprintf("≤ %.1f", hookVsJQTarget), met(v <= hookVsJQTarget))
		v = float64(orbitLarge.P90) / float64(jq.P90)
		r.Add(fmt.Sprintf("orbit (%s) ÷ jq, p90", SizeLabel(large)), fmt.Sprintf("%.2f", v), "", "")
	}
	v := float64(orbitLarge.Median) / float64(orbitSmall.Median)
	r.Add(fmt.Sprintf("orbit (%s) ÷ orbit (%s)", SizeLabel(large), SizeLabel(small)), fmt.Sprintf("%.2f", v), fmt.Sprintf("≤ %.1f", hookGrowthTarget), met(v <= hookGrowthTarget))

	var b strings.Builder
	fmt.Fprintf(&b, "One auto-approved decision recorded the way a hook records it, as a whole process run through `sh -c` in the project's directory: orbit finds the project, syncs, classifies, takes the next id under the journal's lock, appends and fsyncs the line, indexes it and updates the state file. The bash-hook way it replaces only formats the line with jq and appends it (no id allocation, no classification, no index). %d rounds, the commands interleaved to share the machine's noise, after %d untimed rounds.\n\n",
		e.Runs.Small, warmups)
	b.WriteString(t.String())
	b.WriteString("\n")
	if strings.Contains(t.String(), "| ≤ ") {
		b.WriteString(rssNote + "\n\n")
	}
	b.WriteString(r.String())
	b.WriteString("\n")
	fmt.Fprintf(&b, "Commands:\n\n```sh\norbit %s\n", decideArgs)
	if jqLine != "" {
		b.WriteString(jqLine + "\n")
	}
	b.WriteString("```\n\n")
	for _, note := range notes {
		b.WriteString(note + "\n\n")
	}
	return b.String(), nil
}

// jqAppendContender is the bash-hook way of recording decideArgs: jq
// formats the line and the shell appends it to a copy of the large journal,
// in a directory of its own. It returns nil when jq is not installed, and
// the command line for the report.
func (e *Env) jqAppendContender(ctx context.Context, large, small int) (*contender, string, error) {
	if e.JQ == "" {
		return nil, "", nil
	}
	dir, err := e.Dir("jq")
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		return nil, "", err
	}
	src, err := e.Journal(large)
	if err != nil {
		return nil, "", err
	}
	if err := CopyFile(filepath.Join(dir, project.DecisionsFile), src); err != nil {
		return nil, "", err
	}
	if err := e.checkJQLine(ctx, dir, small); err != nil {
		return nil, "", err
	}
	jqLine := fmt.Sprintf("jq -nc --arg id iter-99999-N --arg title 'Add ESLint rule eqeqeq' %s >> %s", ShellQuote(jqFilter), project.DecisionsFile)
	return &contender{name: fmt.Sprintf("`jq … >> journal`, %s-decision journal", SizeLabel(large)), run: func(round int) (Sample, error) {
		line := fmt.Sprintf("jq -nc --arg id iter-99999-%d --arg title 'Add ESLint rule eqeqeq' %s >> %s", round+1, ShellQuote(jqFilter), project.DecisionsFile)
		return Measure(e.Command(dir, "sh", "-c", line))
	}}, jqLine, nil
}

// checkJQLine makes sure the jq filter writes a line orbit accepts as a new
// decision: `orbit import --dry-run` of one such line, in the small project.
func (e *Env) checkJQLine(ctx context.Context, dir string, small int) error {
	proj, err := e.Project(ctx, small)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "check.jsonl")
	line := fmt.Sprintf("jq -nc --arg id bench-jq-check --arg title 'Add ESLint rule eqeqeq' %s > %s", ShellQuote(jqFilter), ShellQuote(path))
	if _, err := Measure(e.Command(dir, "sh", "-c", line)); err != nil {
		return err
	}
	s, err := Measure(e.OrbitCmd(proj, "import", "--dry-run", path))
	if err != nil {
		return fmt.Errorf("the jq line is not a valid decision for orbit: %w", err)
	}
	if !strings.Contains(string(s.Stdout), "1 record: 1 would append") {
		return fmt.Errorf("the jq line is not a new decision for orbit: %s", s.Stdout)
	}
	return os.Remove(path)
}
