package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/project"
)

// hookStopTarget: orbit's median over the script's, at most (the Stop
// hook issue: "no slower than the script").
const hookStopTarget = 1.0

// hookStopMinRuns is the fewest interleaved timed runs of each command.
const hookStopMinRuns = 30

// hookStopScript is seed 000's ceo-loop-stop.sh reproduced with jq and
// python3, relative to the module root.
var hookStopScript = filepath.Join("testdata", "hooks", "ceo-loop-stop.sh")

// hookStopQueue keeps the queue non-empty, so that orbit never tears the
// loop down for want of work: both hooks take the continue path.
const hookStopQueue = `[
  {"id": "req-001", "submitted_at": "2026-03-08T10:01:00Z", "requestor": "forge:builder", "category": "architecture",
   "title": "WebSocket vs polling for agent communication", "impact": "medium", "reversible": true},
  {"id": "req-002", "submitted_at": "2026-03-08T10:02:00Z", "requestor": "forge:guardian", "category": "quality",
   "title": "Add ESLint rule eqeqeq", "impact": "low", "reversible": true},
  {"id": "req-003", "submitted_at": "2026-03-08T10:03:00Z", "requestor": "forge:planner", "category": "deploy",
   "title": "Ship v2 behind a flag", "impact": "high", "reversible": false}
]
`

// hookStopProgress is seed 000's progress file example.
const hookStopProgress = `# CEO-LOOP Progress — Iteration 7 of 20

**Started**: 2026-03-08T10:00:00Z | **Current**: 2026-03-08T10:15:00Z
**Trust level**: standard | **Accuracy**: 47/49 = 95.9%

## Last Iteration Summary
- Processed 3 trivial decisions in batch (all APPROVED)
- Deep focus: ESLint auto-fix architecture (APPROVED, reason: ...)
- Retrograde check: iter-6 decisions all CONFIRMED correct

## Queue Status
- Pending: 2 decisions remaining
- Next depth target: light (1 pending light item)

## Active since: 2026-03-08T10:00:00Z | Iterations: 7/20
`

// hookStopState is the state both hooks start from on every run: seed
// 000's example with orbit's fields at iteration it (the journal's last,
// which orbit would otherwise go on from) of it+13, started now with a
// limit neither reaches.
func hookStopState(started time.Time, decisions, it int) []byte {
	return fmt.Appendf(nil, `{
  "active": true,
  "iteration": %d,
  "max_iterations": %d,
  "time_limit_minutes": 600,
  "started_at": %q,
  "trust_level": "standard",
  "depth_escalation_counter": 0,
  "correct_decisions": 47,
  "incorrect_decisions": 2,
  "completion_sentinel": "<promise>ORBIT COMPLETE</promise>",
  "budget_tokens": 0,
  "tokens_used": 0,
  "last_stop_decisions": %d
}
`, it, it+13, started.UTC().Format(time.RFC3339), decisions)
}

// runHookStop times one Stop hook call as Claude Code makes it, a whole
// process reading the hook's JSON on stdin: `orbit hook stop` against the
// bash hook it replaces, on the same project and the same state (reset
// before every run, so that both always take the continue path: from the
// journal's last iteration to the next and a block with the re-fed prompt).
func runHookStop(ctx context.Context, e *Env) (string, error) {
	var notes []string
	script := ""
	if e.Root != "" {
		script = filepath.Join(e.Root, hookStopScript)
	}
	bash, _ := exec.LookPath("bash")
	python3, _ := exec.LookPath("python3")
	switch {
	case script == "":
		notes = append(notes, "**The module root is unknown, so ceo-loop-stop.sh was not found and the comparison was skipped.** Run the suite with orbit-bench.")
	case bash == "":
		notes = append(notes, MissingTool("bash"))
		script = ""
	case e.JQ == "":
		notes = append(notes, MissingTool("jq"))
		script = ""
	case python3 == "":
		notes = append(notes, MissingPackage("python3", "python3")+" Without it the script skips its time-limit check (gotcha 2), so it is timed doing less.")
	}

	sizes := []int{1000}
	big := 1_000_000
	if _, err := os.Stat(filepath.Join(e.Cache, fmt.Sprintf("decisions-%s-seed%d.jsonl", SizeLabel(big), JournalSeed))); err == nil {
		sizes = append(sizes, big)
	} else {
		notes = append(notes, fmt.Sprintf("The %s-decision journal is not cached in %s, so only the %s-decision project was measured (any suite run with `-sizes 1k,%s` caches it).",
			SizeLabel(big), e.Cache, SizeLabel(sizes[0]), SizeLabel(big)))
	}

	type pair struct {
		n             int
		orbit, script *contender
	}
	var pairs []pair
	var cs []*contender
	started := time.Now()
	for _, n := range sizes {
		hp, err := e.newHookStopProject(n, started)
		if err != nil {
			return "", err
		}
		pr := pair{n: n}
		pr.orbit = &contender{name: fmt.Sprintf("`orbit hook stop`, %s-decision journal", SizeLabel(n)), run: hp.run(e.Orbit, nil)}
		cs = append(cs, pr.orbit)
		if script != "" {
			pr.script = &contender{name: fmt.Sprintf("`bash ceo-loop-stop.sh`, %s-decision journal", SizeLabel(n)), run: func(int) (Sample, error) {
				if err := hp.reset(); err != nil {
					return Sample{}, err
				}
				cmd := e.Command(hp.dir, bash, script)
				cmd.Stdin = bytes.NewReader(hp.input)
				s, err := Measure(cmd)
				if err == nil {
					err = hp.checkBlock(s.Stdout, "CEO-LOOP")
				}
				return s, err
			}}
			cs = append(cs, pr.script)
		}
		pairs = append(pairs, pr)
	}

	runs := max(e.Runs.Small, hookStopMinRuns)
	e.Logf("hookstop: %d rounds of %d commands", runs, len(cs))
	if err := rounds(ctx, runs, cs); err != nil {
		return "", err
	}

	t := Table{Header: []string{"command", "median", "p90", "min", "max", "CPU (median)", "peak RSS", "output"}}
	for _, c := range cs {
		st := Summarize(c.samples)
		t.Add(c.name, Dur(st.Median), Dur(st.P90), Dur(st.Min), Dur(st.Max), Dur(st.MedianCPU), MB(st.MedianRSSKB),
			fmt.Sprintf("%d B", len(c.samples[len(c.samples)-1].Stdout)))
	}
	r := Table{Header: []string{"ratio", "value", "target", ""}}
	for _, pr := range pairs {
		if pr.script == nil {
			continue
		}
		o, s := Summarize(pr.orbit.samples), Summarize(pr.script.samples)
		v := float64(o.Median) / float64(s.Median)
		r.Add(fmt.Sprintf("orbit ÷ script, %s decisions, medians", SizeLabel(pr.n)), fmt.Sprintf("%.2f", v), fmt.Sprintf("≤ %.1f", hookStopTarget), met(v <= hookStopTarget))
		r.Add(fmt.Sprintf("orbit ÷ script, %s decisions, p90", SizeLabel(pr.n)), fmt.Sprintf("%.2f", float64(o.P90)/float64(s.P90)), "", "")
	}

	var b strings.Builder
	fmt.Fprintf(&b, "One Stop hook call as Claude Code makes it: a whole process reading the hook's JSON on stdin, in a project whose ORBIT loop is active at the journal's last iteration, 13 before its limit, with 3 requests queued. "+
		"`orbit hook stop` finds the project from the input's cwd, takes the loop's lock, syncs the index, checks the sentinel, the limits and the queue, moves the state to the next iteration and prints the re-fed prompt "+
		"(queue, retrograde results, accuracy and trust from the index, stale decisions, the top of the progress file). "+
		"The script is seed 000's `ceo-loop-stop.sh` reproduced from its description (`%s`: one jq read of the state, python3 for the elapsed time, jq to write the next iteration, `head -30` of the progress file, `tail -1` of the journal, jq -n to print). "+
		"The state file is reset before every run, so both always take the continue path. %d rounds, the commands interleaved, after %d untimed rounds.\n\n",
		hookStopScript, runs, warmups)
	b.WriteString(t.String())
	b.WriteString("\n")
	if len(r.Rows) > 0 {
		b.WriteString(r.String())
		b.WriteString("\n")
	}
	b.WriteString("Commands (in the project's directory):\n\n```sh\norbit hook stop < input.json\n")
	if script != "" {
		b.WriteString("bash testdata/hooks/ceo-loop-stop.sh < input.json\n")
	}
	b.WriteString("```\n\n")
	for _, note := range notes {
		b.WriteString(note + "\n\n")
	}
	return b.String(), nil
}

// hookStopProject is a project whose ORBIT loop is active at its
// journal's last iteration with 3 requests queued, and the Stop hook's
// input for it.
type hookStopProject struct {
	e         *Env
	dir       string
	iter      int // the state's iteration: the journal's last
	input     []byte
	state     []byte
	statePath string
}

// newHookStopProject imports the journal of n decisions into a new project
// and sets its loop up.
func (e *Env) newHookStopProject(n int, started time.Time) (*hookStopProject, error) {
	e.Logf("hookstop: preparing a project of %s decisions with an active loop", SizeLabel(n))
	_, dir, err := e.ImportOrbit(n, true)
	if err != nil {
		return nil, err
	}
	it, err := lastIteration(JournalPath(dir))
	if err != nil {
		return nil, err
	}
	hp := &hookStopProject{e: e, dir: dir, iter: max(it, 7), statePath: filepath.Join(dir, project.StateFile)}
	hp.state = hookStopState(started, n, hp.iter)
	for rel, data := range map[string][]byte{
		project.StateFile:    hp.state,
		project.PendingFile:  []byte(hookStopQueue),
		project.ProgressFile: []byte(hookStopProgress),
	} {
		if err := os.WriteFile(filepath.Join(dir, rel), data, 0o644); err != nil {
			return nil, err
		}
	}
	hp.input, err = json.Marshal(map[string]any{
		"session_id": "bench-session", "transcript_path": filepath.Join(dir, "transcript.jsonl"), "cwd": dir,
		"permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": true,
		"last_assistant_message": "Iteration 7 done: 2 decisions recorded, 3 requests left.",
	})
	if err != nil {
		return nil, err
	}
	return hp, os.WriteFile(filepath.Join(dir, "input.json"), append(hp.input, '\n'), 0o644)
}

// reset puts the state back at its iteration, so that every run takes
// the continue path.
func (hp *hookStopProject) reset() error { return os.WriteFile(hp.statePath, hp.state, 0o644) }

// run returns a contender's run of `bin hook stop` on the project; before
// each, prepare (when set) runs untimed after the state's reset.
func (hp *hookStopProject) run(bin string, prepare func(round int) error) func(int) (Sample, error) {
	return func(round int) (Sample, error) {
		if err := hp.reset(); err != nil {
			return Sample{}, err
		}
		if prepare != nil {
			if err := prepare(round); err != nil {
				return Sample{}, err
			}
		}
		cmd := hp.e.Command(hp.dir, bin, "hook", "stop")
		cmd.Stdin = bytes.NewReader(hp.input)
		s, err := Measure(cmd)
		if err == nil {
			err = hp.checkBlock(s.Stdout, "ORBIT loop —")
		}
		return s, err
	}
}

// lastIteration is the highest iteration of the decisions in journal.
func lastIteration(journal string) (int, error) {
	f, err := os.Open(journal)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	it := 0
	dec := json.NewDecoder(f)
	for {
		var d struct {
			Iteration int `json:"iteration"`
		}
		if err := dec.Decode(&d); err == io.EOF {
			return it, nil
		} else if err != nil {
			return 0, fmt.Errorf("%s: %w", journal, err)
		}
		it = max(it, d.Iteration)
	}
}

// checkBlock makes sure a hook took the continue path: a block whose
// reason starts with name and "iteration N of M.", the next iteration, and
// the state file's iteration at N.
func (hp *hookStopProject) checkBlock(stdout []byte, name string) error {
	next := hp.iter + 1
	prefix := fmt.Sprintf("%s iteration %d of %d.", name, next, hp.iter+13)
	var o struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	if err := json.Unmarshal(stdout, &o); err != nil {
		return fmt.Errorf("hook printed %q: %w", tail(string(stdout), 300), err)
	}
	if o.Decision != "block" || !strings.HasPrefix(o.Reason, prefix) {
		return fmt.Errorf("hook did not continue: %s", tail(string(stdout), 300))
	}
	data, err := os.ReadFile(hp.statePath)
	if err != nil {
		return err
	}
	var st struct {
		Iteration int `json:"iteration"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	if st.Iteration != next {
		return fmt.Errorf("hook left the iteration at %d; want %d", st.Iteration, next)
	}
	return nil
}
