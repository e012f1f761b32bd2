package citadel

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/report"
)

// runnerStopConditions are the stop conditions of a foreground loop orbit
// runs: Citadel's defaults plus the two ends orbit's runner can also reach
// (a verifier that cannot run, an operator's stop).
var runnerStopConditions = append(DefaultStopConditions(), "verifier-failed", "stopped")

// RunOptions configure a foreground loop (seed 001's loop runner): run the
// action, then the verifier, until the verifier passes or attempts run out.
type RunOptions struct {
	// Action runs first in each attempt ("" runs the verifier alone).
	Action string
	// Verify decides: exit 0 passes.
	Verify      string
	MaxAttempts int
	Backoff     time.Duration
	// Write keeps the contract record under .planning/loops/ and the review
	// artifact, and records the events.
	Write bool
	// Loop runs an existing record (planned from a template, say): its
	// trigger command and verifier command are the defaults.
	Loop string
	// Yes runs commands that come from the record rather than from
	// Action and Verify: a record is a file of the checkout, and its
	// commands are shown first and run only when the user says so.
	Yes bool
	// Artifact is the review artifact's path relative to the root (default
	// .planning/loops/{id}.md, or the record's reviewArtifact).
	Artifact string
	// Output receives the commands' output as they run (nil: discarded).
	Output io.Writer
	// Progress receives one line per step.
	Progress io.Writer
	// TailLines bounds the output kept as evidence (default 20 lines).
	TailLines int
	// Poll is how often a running loop looks for a stop or pause written to
	// its record by another process (default 200ms).
	Poll time.Duration
}

// RunResult is how a foreground loop ended.
type RunResult struct {
	ID             string `json:"id"`
	Path           string `json:"path,omitempty"`
	Status         string `json:"status"`
	StopReason     string `json:"stop_reason"`
	Attempts       int    `json:"attempts"`
	MaxAttempts    int    `json:"max_attempts"`
	Runs           []Run  `json:"runs"`
	ReviewArtifact string `json:"review_artifact,omitempty"`
	// External is true when another process stopped the loop.
	External bool `json:"external"`
	// Spent is the spend of the record's runs (budget.costPerRun per
	// attempt), when its budget has a cost model; MaxSpend its ceiling.
	Spent    *float64 `json:"spent,omitempty"`
	MaxSpend *float64 `json:"max_spend,omitempty"`
}

// Runner runs foreground loops in a project.
type Runner struct {
	Root    string
	History *loop.History
	Now     func() time.Time
}

type runState struct {
	r        *Runner
	opts     RunOptions
	c        Contract
	path     string
	res      RunResult
	progress io.Writer
	// priorAttempts are the attempts the record's runs hold from before
	// this run (a record run again with --loop): they were spent.
	priorAttempts int
}

// Run runs the loop until the verifier passes (verifier-passed), attempts
// run out (attempt-limit), the action fails (blocked), the verifier cannot
// run (verifier-failed), ctx is cancelled (stopped: Ctrl-C), or another
// process stops it through its record. With Write, every run is appended to
// the record as it ends (re-read under its lock, so a concurrent stop is
// never lost) and recorded as an event, and the review artifact is written
// at the end.
func (r *Runner) Run(ctx context.Context, opts RunOptions) (RunResult, error) {
	s := &runState{r: r, opts: opts, progress: opts.Progress}
	if s.progress == nil {
		s.progress = io.Discard
	}
	if s.opts.TailLines <= 0 {
		s.opts.TailLines = 20
	}
	if s.opts.Poll <= 0 {
		s.opts.Poll = 200 * time.Millisecond
	}
	if err := s.prepare(ctx); err != nil {
		return RunResult{}, err
	}
	bg := context.WithoutCancel(ctx)
	status, reason, err := s.loop(ctx)
	if err != nil {
		return s.res, err
	}
	return s.res, s.finish(bg, status, reason)
}

// prepare builds or reads the contract and, with Write, records the start.
func (s *runState) prepare(ctx context.Context) error {
	now := s.r.Now()
	if s.opts.Loop != "" {
		s.opts.Write = true
		if err := s.adopt(ctx, now); err != nil {
			return err
		}
	} else {
		if s.opts.Verify == "" {
			return fmt.Errorf("a foreground loop needs a verifier command")
		}
		maxA := max(s.opts.MaxAttempts, 1)
		c := NewContract(ContractOptions{Type: "foreground-loop", Title: cmp.Or(s.opts.Action, s.opts.Verify),
			Command: s.opts.Action, VerifierCommand: s.opts.Verify, MaxAttempts: maxA,
			Backoff: durationText(s.opts.Backoff), StopConditions: runnerStopConditions, Status: "running"}, now)
		if s.opts.Write {
			art := cmp.Or(s.opts.Artifact, LoopsDir+"/"+c.ID+".md")
			c.ReviewArtifact = &art
		}
		s.c = c
		s.showCommands("")
		if s.opts.Write {
			path, err := CreateContract(ctx, s.r.Root, c)
			if err != nil {
				return err
			}
			s.path = path
		}
	}
	s.res = RunResult{ID: s.c.ID, Status: "running", MaxAttempts: s.c.Budget.MaxAttempts, Runs: []Run{}, MaxSpend: s.c.Budget.MaxSpend}
	if s.c.Budget.CostPerRun != nil {
		s.res.Spent = new(*s.c.Budget.CostPerRun * float64(s.priorAttempts))
	}
	if s.c.ReviewArtifact != nil {
		s.res.ReviewArtifact = *s.c.ReviewArtifact
	}
	if s.opts.Write {
		s.res.Path = loop.Rel(s.r.Root, s.path)
		e := loop.EventFor(s.view(0), loop.EventRun, now)
		e.Detail = fmt.Sprintf("action %s; verifier %s; at most %d attempts", orNone(s.opts.Action), s.opts.Verify, s.c.Budget.MaxAttempts)
		if err := s.record(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// adopt runs an existing record: its commands are the defaults, it must
// not have stopped, and it becomes running.
func (s *runState) adopt(ctx context.Context, now time.Time) error {
	if err := loop.CheckID(s.opts.Loop); err != nil {
		return err
	}
	s.path = RecordPath(s.r.Root, s.opts.Loop)
	return loop.Edit(ctx, s.r.Root, s.path, func(st *loop.State) error {
		status, err := RecordStatus(st)
		if err != nil {
			return err
		}
		if loop.IsStopped(status) || status == "running" {
			return fmt.Errorf("%s is %s: only a planned, waiting or paused loop can be run", loop.Rel(s.r.Root, s.path), status)
		}
		var c Contract
		if err := json.Unmarshal(st.Bytes(), &c); err != nil {
			return fmt.Errorf("%s: not a loop contract: %v", loop.Rel(s.r.Root, s.path), err)
		}
		fromFile := false
		if s.opts.Action == "" && c.Trigger.Command != nil {
			s.opts.Action, fromFile = *c.Trigger.Command, true
		}
		if s.opts.Verify == "" && c.Verifier.Command != nil {
			s.opts.Verify, fromFile = *c.Verifier.Command, true
		}
		if s.opts.Verify == "" {
			return fmt.Errorf("%s has no verifier command (profile %s is not a command): pass --verify", loop.Rel(s.r.Root, s.path), deref(c.Verifier.Profile))
		}
		s.showCommands(loop.Rel(s.r.Root, s.path))
		if fromFile && !s.opts.Yes {
			return fmt.Errorf("%s names the commands above, and a file of the checkout is not you: read them, then run again with --yes (or give --action and --verify)", loop.Rel(s.r.Root, s.path))
		}
		if s.opts.MaxAttempts > 0 {
			c.Budget.MaxAttempts = s.opts.MaxAttempts
		}
		if s.opts.Backoff == 0 && c.Retry.Backoff != nil {
			d, err := ParseBackoff(*c.Retry.Backoff)
			if err != nil {
				return fmt.Errorf("%s: retry.backoff: %v", loop.Rel(s.r.Root, s.path), err)
			}
			s.opts.Backoff = d
		}
		s.priorAttempts = attemptsOf(c.Runs)
		c.Budget.MaxAttempts = max(c.Budget.MaxAttempts, 1)
		art := cmp.Or(s.opts.Artifact, deref(c.ReviewArtifact), LoopsDir+"/"+c.ID+".md")
		c.ReviewArtifact = &art
		s.c = c
		for _, kv := range []struct {
			k string
			v any
		}{{"status", "running"}, {"reviewArtifact", art}, {"updatedAt", loop.ISOTime(now)}} {
			if err := st.Set(kv.k, kv.v); err != nil {
				return err
			}
		}
		return nil
	})
}

// ParseBackoff reads a record's retry.backoff: a duration ("2s", "1m30s")
// or a number of milliseconds, as JavaScript's timers take ("500").
func ParseBackoff(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseFloat(s, 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q: want a duration (2s, 1m30s) or milliseconds (500)", s)
	}
	return d, nil
}

// attemptsOf counts the attempts a record's runs hold: one action run each,
// or one verifier run for an attempt without an action.
func attemptsOf(runs []Run) int {
	n := 0
	for _, r := range runs {
		if r.Verifier == nil || r.Command == nil {
			n++
		}
	}
	return n
}

// overBudget reports, before an attempt, whether its run would pass the
// record's spend ceiling (budget.maxSpend at budget.costPerRun a run), and
// why in words.
func (s *runState) overBudget() (string, bool) {
	b := s.c.Budget
	if b.MaxSpend == nil || b.CostPerRun == nil || s.res.Spent == nil {
		return "", false
	}
	if next := *s.res.Spent + *b.CostPerRun; next > *b.MaxSpend {
		return fmt.Sprintf("spent %v of %v: the next run (%v) would pass budget.maxSpend", *s.res.Spent, *b.MaxSpend, *b.CostPerRun), true
	}
	return "", false
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func orNone(s string) string { return cmp.Or(s, "(none)") }

func durationText(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

// loop runs the attempts and returns the final status and why.
func (s *runState) loop(ctx context.Context) (status, reason string, err error) {
	maxA := s.c.Budget.MaxAttempts
	for attempt := 1; attempt <= maxA; attempt++ {
		if reason, over := s.overBudget(); over {
			return "budget-exhausted", reason, nil
		}
		s.res.Attempts = attempt
		if st, stop := s.control(ctx); stop {
			return st, "", nil
		}
		if s.res.Spent != nil {
			*s.res.Spent += *s.c.Budget.CostPerRun
		}
		if s.opts.Action != "" {
			out := s.exec(ctx, s.opts.Action)
			run := Run{Attempt: attempt, Command: strPtr(s.opts.Action), StartedAt: out.started, CompletedAt: out.completed,
				ExitCode: out.exitCode(), Evidence: out.evidence()}
			switch {
			case out.external != "":
				run.Status, run.Summary = out.external, "action stopped by the operator"
			case out.interrupted(ctx):
				run.Status, run.Summary = "stopped", "action interrupted"
			case out.startErr != nil || out.exit != 0:
				run.Status, run.Summary = "blocked", "action failed ("+out.describe()+")"
			default:
				run.Status, run.Summary = "running", "action completed"
			}
			fmt.Fprintf(s.progress, "attempt %d/%d: %s, %s\n", attempt, maxA, run.Summary, out.dur.Round(time.Millisecond))
			cur, err := s.appendRun(ctx, run, "action")
			if err != nil {
				return "", "", err
			}
			switch {
			case out.external != "":
				s.res.External = true
				return out.external, "", nil
			case out.interrupted(ctx):
				return "stopped", "interrupted", nil
			case run.Status == "blocked":
				return "blocked", run.Summary, nil
			case loop.IsStopped(cur):
				s.res.External = true
				return cur, "", nil
			}
			if st, stop := s.control(ctx); stop {
				return st, "", nil
			}
		}
		out := s.exec(ctx, s.opts.Verify)
		run := Run{Attempt: attempt, Command: strPtr(s.opts.Action), Verifier: strPtr(s.opts.Verify), StartedAt: out.started,
			CompletedAt: out.completed, ExitCode: out.exitCode(), Evidence: out.evidence()}
		switch {
		case out.external != "":
			run.Status, run.Summary = out.external, "verifier stopped by the operator"
		case out.interrupted(ctx):
			run.Status, run.Summary = "stopped", "verifier interrupted"
		case out.startErr != nil || out.exit == 126 || out.exit == 127:
			run.Status, run.Summary = "verifier-failed", "verifier could not run ("+out.describe()+")"
		case out.exit == 0:
			run.Status, run.Summary = "verifier-passed", "verifier passed"
		case attempt == maxA:
			run.Status, run.Summary = "attempt-limit", "verifier failed ("+out.describe()+")"
		default:
			run.Status, run.Summary = "running", "verifier failed ("+out.describe()+")"
		}
		fmt.Fprintf(s.progress, "attempt %d/%d: %s, %s\n", attempt, maxA, run.Summary, out.dur.Round(time.Millisecond))
		cur, err := s.appendRun(ctx, run, "verifier")
		if err != nil {
			return "", "", err
		}
		switch {
		case out.external != "":
			s.res.External = true
			return out.external, "", nil
		case out.interrupted(ctx):
			return "stopped", "interrupted", nil
		case run.Status == "verifier-failed":
			return run.Status, run.Summary, nil
		case run.Status != "running":
			return run.Status, "", nil
		case loop.IsStopped(cur):
			s.res.External = true
			return cur, "", nil
		}
		if s.opts.Backoff > 0 {
			fmt.Fprintf(s.progress, "backing off %s\n", s.opts.Backoff)
			select {
			case <-ctx.Done():
				return "stopped", "interrupted", nil
			case <-time.After(s.opts.Backoff):
			}
		}
	}
	return "attempt-limit", "", nil // not reached: the last attempt returns
}

// control reads the record for a stop or pause another process wrote.
// Paused (or needs-human-review), it waits until resumed or stopped.
func (s *runState) control(ctx context.Context) (status string, stop bool) {
	if !s.opts.Write {
		if ctx.Err() != nil {
			return "stopped", true
		}
		return "", false
	}
	announced := false
	for {
		if ctx.Err() != nil {
			return "stopped", true
		}
		cur := s.currentStatus()
		switch {
		case loop.IsStopped(cur):
			s.res.External = true
			return cur, true
		case cur == "paused" || cur == "needs-human-review" || cur == "waiting" || cur == "planned":
			if !announced {
				fmt.Fprintf(s.progress, "the loop is %s: waiting for `orbit loop resume %s` (or a stop)\n", cur, s.c.ID)
				announced = true
			}
			select {
			case <-ctx.Done():
			case <-time.After(s.opts.Poll):
			}
		default:
			return "", false
		}
	}
}

// currentStatus is the record's status as written now ("" if unreadable).
func (s *runState) currentStatus() string {
	st, err := loop.ReadState(s.r.Root, s.path)
	if err != nil {
		return ""
	}
	status, _, _ := st.String("status")
	return strings.ToLower(status)
}

// appendRun adds run to the record, as Citadel's appendLoopRun does, read
// fresh under the record's lock: the record takes the run's status unless
// another process changed it (a stop or a pause), which is kept and
// returned.
func (s *runState) appendRun(ctx context.Context, run Run, step string) (current string, err error) {
	s.res.Runs = append(s.res.Runs, run)
	if !s.opts.Write {
		return "", nil
	}
	bg := context.WithoutCancel(ctx)
	now := s.r.Now()
	err = loop.Edit(bg, s.r.Root, s.path, func(st *loop.State) error {
		cur, err := RecordStatus(st)
		if err != nil {
			return err
		}
		if raw, ok := st.Raw("runs"); ok && len(raw) > 0 && raw[0] == '[' {
			err = st.AppendAt([]string{"runs"}, run)
		} else if !ok || string(raw) == "null" {
			err = st.Set("runs", []Run{run})
		} else {
			err = fmt.Errorf("%s: runs is not an array", st.Path)
		}
		if err != nil {
			return err
		}
		current = cur
		if cur == "running" {
			current = run.Status
			if err := st.Set("status", run.Status); err != nil {
				return err
			}
		}
		return st.Set("updatedAt", loop.ISOTime(now))
	})
	if err != nil {
		return "", err
	}
	e := loop.EventFor(s.view(run.Attempt), loop.EventAttempt, now)
	e.Status, e.NativeStatus, e.Detail = run.Status, run.Status, fmt.Sprintf("attempt %d %s: %s", run.Attempt, step, run.Summary)
	data := map[string]any{"attempt": run.Attempt, "step": step, "command": cmp.Or(deref(run.Verifier), deref(run.Command)),
		"exit_code": run.ExitCode, "started_at": run.StartedAt, "completed_at": run.CompletedAt}
	if len(run.Evidence) > 0 {
		data["output_tail"] = run.Evidence[0].Text
	}
	e.Data, _ = loop.Marshal(data)
	return current, s.record(bg, e)
}

// finish writes the end into the record (unless another process stopped
// it: its status, stoppedAt and stopReason are kept), the review artifact,
// and the stop event.
func (s *runState) finish(ctx context.Context, status, reason string) error {
	s.res.Status, s.res.StopReason = status, cmp.Or(reason, status)
	fmt.Fprintf(s.progress, "loop %s: %s\n", status, loop.StopMeaning(status))
	if !s.opts.Write {
		return nil
	}
	now := s.r.Now()
	var stoppedAt string
	err := loop.Edit(ctx, s.r.Root, s.path, func(st *loop.State) error {
		cur, err := RecordStatus(st)
		if err != nil {
			return err
		}
		if loop.IsStopped(cur) && s.res.External {
			s.res.Status = cur
			s.res.StopReason = cur
			if n := lastNoteText(st); n != "" {
				s.res.StopReason = n
			}
			stoppedAt, _, _ = st.String("stoppedAt")
			return nil
		}
		stoppedAt = loop.ISOTime(now)
		for _, kv := range []struct {
			k string
			v any
		}{{"status", status}, {"stoppedAt", stoppedAt}, {"stopReason", status}, {"updatedAt", stoppedAt}} {
			if err := st.Set(kv.k, kv.v); err != nil {
				return err
			}
		}
		// The stop word in stopReason (seed 001), why in words a note.
		if s.res.StopReason != status {
			return AddNote(st, stoppedAt, "orbit loop run", s.res.StopReason)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.writeArtifact(stoppedAt); err != nil {
		return err
	}
	if s.res.External {
		return nil // the stop was recorded by whoever stopped it
	}
	e := loop.EventFor(s.view(s.res.Attempts), loop.EventStop, now)
	e.Status, e.NativeStatus, e.From, e.Detail = status, status, "running", s.res.StopReason
	return s.record(ctx, e)
}

// lastNoteText is the text of a record's last note ("" when none).
func lastNoteText(st *loop.State) string {
	raw, ok := st.Raw("notes")
	if !ok {
		return ""
	}
	var notes []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &notes) != nil || len(notes) == 0 {
		return ""
	}
	return notes[len(notes)-1].Text
}

func (s *runState) view(attempt int) loop.View {
	v := s.c.View()
	v.Status, v.NativeStatus, v.Path, v.Iteration = "running", "running", loop.Rel(s.r.Root, s.path), new(int64(attempt))
	return v
}

func (s *runState) record(ctx context.Context, e loop.Event) error {
	if s.r.History == nil {
		return nil
	}
	return s.r.History.Append(ctx, e)
}

// writeArtifact writes the review artifact: what ran, how it ended, the
// evidence, and how to recover.
func (s *runState) writeArtifact(stoppedAt string) error {
	if s.c.ReviewArtifact == nil {
		return nil
	}
	// Relative to the root, so that a path climbing out of it is refused.
	rel := filepath.FromSlash(*s.c.ReviewArtifact)
	if filepath.IsAbs(rel) {
		return fmt.Errorf("write review artifact %s: an absolute path; the contract may only name a file of the project", rel)
	}
	return journal.WriteFileAtomic(s.r.Root, rel, []byte(s.artifact(stoppedAt)), 0o644)
}

func (s *runState) artifact(stoppedAt string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Loop review: %s\n\n", s.c.Title)
	fmt.Fprintf(&b, "- Loop: `%s` (%s)\n", s.c.ID, s.c.Type)
	fmt.Fprintf(&b, "- Status: **%s**: %s\n", s.res.Status, loop.StopMeaning(s.res.Status))
	if s.res.StopReason != "" && s.res.StopReason != s.res.Status {
		fmt.Fprintf(&b, "- Why: %s\n", s.res.StopReason)
	}
	fmt.Fprintf(&b, "- Action: %s\n", code(s.opts.Action))
	fmt.Fprintf(&b, "- Verifier: %s\n", code(s.opts.Verify))
	fmt.Fprintf(&b, "- Attempts: %d of %d\n", s.res.Attempts, s.c.Budget.MaxAttempts)
	fmt.Fprintf(&b, "- Started: %s; stopped: %s\n", s.c.CreatedAt, stoppedAt)
	fmt.Fprintf(&b, "- Record: `%s`\n\n", loop.Rel(s.r.Root, s.path))
	b.WriteString("## Runs\n\n| attempt | step | status | exit | started | completed | summary |\n|---|---|---|---|---|---|---|\n")
	for _, r := range s.res.Runs {
		step := "action"
		if r.Verifier != nil {
			step = "verifier"
		}
		exit := "-"
		if r.ExitCode != nil {
			exit = fmt.Sprint(*r.ExitCode)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s |\n", r.Attempt, step, r.Status, exit, r.StartedAt, r.CompletedAt,
			strings.ReplaceAll(r.Summary, "|", `\|`))
	}
	b.WriteString("\n## Evidence\n")
	for _, r := range s.res.Runs {
		step, cmd := "action", deref(r.Command)
		if r.Verifier != nil {
			step, cmd = "verifier", *r.Verifier
		}
		fmt.Fprintf(&b, "\n### Attempt %d, %s: %s\n\n", r.Attempt, step, code(cmd))
		if len(r.Evidence) == 0 {
			b.WriteString("No output.\n")
			continue
		}
		ev := r.Evidence[0]
		fmt.Fprintf(&b, "Last lines of %d bytes of output:\n\n````text\n%s\n````\n", ev.Bytes, strings.TrimRight(ev.Text, "\n"))
	}
	b.WriteString("\n## Recovery\n\n")
	fmt.Fprintf(&b, "- Roll back: %s.\n", s.c.Recovery.Rollback)
	fmt.Fprintf(&b, "- Inspect: `orbit loop show %s`.\n", s.c.ID)
	return b.String()
}

func code(s string) string {
	if s == "" {
		return "(none)"
	}
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}

// output is what one command did.
type output struct {
	started, completed string
	exit               int
	startErr           error
	cancelled          bool
	external           string // a stop status another process wrote meanwhile
	tail               *tailBuffer
	dur                time.Duration
}

func (o output) interrupted(ctx context.Context) bool { return o.cancelled && ctx.Err() != nil }

func (o output) exitCode() *int {
	if o.startErr != nil || o.exit < 0 {
		return nil
	}
	e := o.exit
	return &e
}

func (o output) describe() string {
	switch {
	case o.startErr != nil:
		return o.startErr.Error()
	case o.exit < 0:
		return "killed"
	default:
		return fmt.Sprintf("exit %d", o.exit)
	}
}

func (o output) evidence() []Evidence {
	if o.tail == nil || o.tail.total == 0 {
		return []Evidence{}
	}
	return []Evidence{{Kind: "output-tail", Text: o.tail.lines(), Bytes: o.tail.total}}
}

// exec runs command with sh -c in the project root, in its own process
// group (killed whole on Ctrl-C or an operator's stop), its output streamed
// to Output and its tail kept. While it runs, the record is polled for a
// stop written by another process.
func (s *runState) exec(ctx context.Context, command string) output {
	o := output{tail: &tailBuffer{max: 64 << 10, keepLines: s.opts.TailLines}}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(cctx, "sh", "-c", command)
	cmd.Dir = s.r.Root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var w io.Writer = o.tail
	if s.opts.Output != nil {
		w = io.MultiWriter(o.tail, s.opts.Output)
	}
	cmd.Stdout, cmd.Stderr = w, w
	start := s.r.Now()
	o.started = loop.ISOTime(start)
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		o.startErr = fmt.Errorf("cannot start: %v", err)
		o.completed = loop.ISOTime(s.r.Now())
		return o
	}
	var mu sync.Mutex
	done := make(chan struct{})
	if s.opts.Write {
		go func() {
			t := time.NewTicker(s.opts.Poll)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					if cur := s.currentStatus(); loop.IsStopped(cur) {
						mu.Lock()
						o.external = cur
						mu.Unlock()
						cancel()
						return
					}
				}
			}
		}()
	}
	err := cmd.Wait()
	close(done)
	o.dur = time.Since(t0)
	o.completed = loop.ISOTime(s.r.Now())
	mu.Lock()
	defer mu.Unlock()
	var ee *exec.ExitError
	switch {
	case err == nil:
		o.exit = 0
	case errors.As(err, &ee):
		o.exit = ee.ExitCode()
	default:
		o.exit = -1
	}
	o.cancelled = cctx.Err() != nil
	if o.external == "" && o.cancelled && ctx.Err() == nil {
		o.cancelled = false
	}
	return o
}

// tailBuffer keeps the last bytes written to it.
type tailBuffer struct {
	mu        sync.Mutex
	buf       []byte
	max       int
	total     int64
	keepLines int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// lines is the last keepLines lines (at most 4 KB) of what was written.
func (t *tailBuffer) lines() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	parts := strings.Split(strings.TrimRight(string(t.buf), "\n"), "\n")
	if len(parts) > t.keepLines {
		parts = parts[len(parts)-t.keepLines:]
	}
	out := strings.Join(parts, "\n")
	if len(out) > 4096 {
		out = out[len(out)-4096:]
	}
	return strings.ToValidUTF8(out, "?")
}

// showCommands prints, before anything runs, the exact commands the loop
// will run with sh -c in the project root (from names the record they
// come from, "" for flags), escaped so that what is shown is what runs.
func (s *runState) showCommands(from string) {
	src := "from the flags"
	if from != "" {
		src = "from " + from
	}
	fmt.Fprintf(s.progress, "orbit: the loop runs, with sh -c in %s (%s):\n", s.r.Root, src)
	fmt.Fprintf(s.progress, "  action:   %s\n", report.Escape(orNone(s.opts.Action)))
	fmt.Fprintf(s.progress, "  verifier: %s\n", report.Escape(s.opts.Verify))
}
