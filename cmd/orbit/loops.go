package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/citadel"
	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/report"
)

// loopFields are the fields of one loop in the unified view.
var loopFields = []string{"framework", "id", "title", "type", "status", "native_status", "iteration", "max_iterations",
	"updated_at", "budget_used", "budget_limit", "budget_unit", "path", "files", "controls", "warnings", "details", "runs", "history"}

// loops opens what the loop commands share: the project root, the index
// (for the loop event journal) and the clock.
func loopHistory(ctx context.Context, f *Factory) (*loop.History, error) {
	ix, err := f.Index(ctx)
	if err != nil {
		return nil, err
	}
	return &loop.History{Root: ix.Project.Root, Store: ix.Store}, nil
}

// scanLoops reads every loop of the project and records what changed since
// orbit last saw it. Files that could not be read are reported on stderr.
func scanLoops(ctx context.Context, f *Factory) (*loop.History, loop.Scan, error) {
	h, err := loopHistory(ctx, f)
	if err != nil {
		return nil, loop.Scan{}, err
	}
	// Reading every loop file allocates a few MB that die young; a larger
	// GC target for this short-lived read saves a sixth of its CPU.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	s, err := frameworks.Scan(ctx, h, f.Now())
	if err != nil {
		return nil, s, err
	}
	for _, p := range s.Problems {
		fmt.Fprintf(f.IO.ErrOut, "orbit: %s\n", p.Err)
	}
	return h, s, nil
}

// problemsError is the exit status of a read that met unreadable files.
func problemsError(s loop.Scan) error {
	if len(s.Problems) == 0 {
		return nil
	}
	return &findingsError{msg: fmt.Sprintf("%d loop files could not be read as loops (listed above)", len(s.Problems))}
}

// findLoop resolves an id given on the command line (loop.Scan.Resolve);
// an ambiguous id is a usage error.
func findLoop(s loop.Scan, id, control string) (loop.View, error) {
	v, err := s.Resolve(id, control)
	var ae *loop.AmbiguousError
	if errors.As(err, &ae) {
		return v, &flagError{err: err}
	}
	return v, err
}

// --- orbit loop templates ---

type loopTemplatesOptions struct {
	f    *Factory
	JSON jsonFlag
}

func newCmdLoopTemplates(f *Factory, runF func(*loopTemplatesOptions) error) *cobra.Command {
	opts := &loopTemplatesOptions{f: f}
	cmd := &cobra.Command{
		Use:   "templates",
		Short: "List Citadel's eight loop templates with their defaults",
		Long: `List the loop templates of seed 001 (Citadel's core/loops/templates.js) with
their defaults: workflow type, trigger kind and cadence, attempts, verifier
and stop conditions. ` + "`orbit loop plan --template NAME`" + ` instantiates one.`,
		Example: "  orbit loop templates\n  orbit loop templates --json=id,triggerKind,maxAttempts",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return loopTemplatesRun(opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, []string{"id", "title", "type", "triggerKind", "cadence", "goal", "verifierCommand", "verifierProfile",
		"maxAttempts", "stopConditions"})
	return cmd
}

func loopTemplatesRun(opts *loopTemplatesOptions) error {
	f := opts.f
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, citadel.Templates())
	}
	t := &report.Table{Header: []string{"TEMPLATE", "TYPE", "TRIGGER", "ATTEMPTS", "VERIFIER", "STOP CONDITIONS", "GOAL"}}
	for _, tp := range citadel.Templates() {
		trigger := tp.TriggerKind
		if tp.Cadence != "" {
			trigger += " (" + tp.Cadence + ")"
		}
		verifier := tp.VerifierProfile
		if tp.VerifierCommand != "" {
			verifier = tp.VerifierCommand + " [" + tp.VerifierProfile + "]"
		}
		t.Append(tp.Name, tp.Type, trigger, strconv.Itoa(tp.MaxAttempts), verifier, strings.Join(tp.StopConditions, ", "), tp.Goal)
	}
	return t.Render(f.IO.Out, f.IO.OutTTY)
}

// --- orbit loop plan ---

type loopPlanOptions struct {
	f        *Factory
	Template string
	Write    bool
	Plan     citadel.PlanOptions
}

func newCmdLoopPlan(f *Factory, runF func(*loopPlanOptions) error) *cobra.Command {
	opts := &loopPlanOptions{f: f}
	cmd := &cobra.Command{
		Use:   "plan --template NAME",
		Short: "Print or write a Citadel loop contract record from a template",
		Long: `Instantiate a template as a loop contract record (seed 001) with every field the
seed lists (id, type, trigger, input, scope, permissions, budget, verifier,
retry, stopConditions, statePath, reviewArtifact, recovery) and the ones
Citadel's scripts add (version, template, title, status, createdAt,
updatedAt, runs, notes), status planned. The record is printed as JSON; with
--write it is also written to .planning/loops/{id}.json (atomically, under
its lock) and a plan event is recorded.

The template's trigger kind is kept: Citadel's own CLI writes "manual" for
every template, losing e.g. pr-review-repair's "scheduled".`,
		Example: `  orbit loop plan --template docs-drift-check
  orbit loop plan --template pr-review-repair --write
  orbit loop plan --template security-scan --id weekly-security --scope "api/" --write`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Template == "" {
				return flagErrorf("--template is required (one of: %s)", strings.Join(citadel.TemplateNames(), ", "))
			}
			if _, err := citadel.FindTemplate(opts.Template); err != nil {
				return flagErrorf("--template %q is not a template (templates: %s)", opts.Template, strings.Join(citadel.TemplateNames(), ", "))
			}
			if runF != nil {
				return runF(opts)
			}
			return loopPlanRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Template, "template", "", "template name (`orbit loop templates` lists them)")
	cmd.Flags().BoolVar(&opts.Write, "write", false, "write the record to .planning/loops/{id}.json")
	cmd.Flags().StringVar(&opts.Plan.ID, "id", "", "loop id (default: Citadel's {type}-{title}-{time})")
	cmd.Flags().StringVar(&opts.Plan.Title, "title", "", "title (default: the template's)")
	cmd.Flags().StringVar(&opts.Plan.Goal, "goal", "", "goal (default: the template's)")
	cmd.Flags().StringVar(&opts.Plan.Scope, "scope", "", "what the loop may touch (default: current project)")
	cmd.Flags().StringVar(&opts.Plan.ReviewArtifact, "artifact", "", "review artifact path a human inspects")
	return cmd
}

func loopPlanRun(ctx context.Context, opts *loopPlanOptions) error {
	f := opts.f
	tp, err := citadel.FindTemplate(opts.Template)
	if err != nil {
		return err
	}
	now := f.Now()
	c := tp.Plan(opts.Plan, now)
	data, err := c.Bytes()
	if err != nil {
		return err
	}
	if opts.Write {
		h, err := loopHistory(ctx, f)
		if err != nil {
			return err
		}
		path, err := citadel.CreateContract(ctx, h.Root, c)
		if err != nil {
			return err
		}
		v := loop.View{Framework: loop.Citadel, ID: c.ID, Title: c.Title, Type: c.Type, Status: c.Status, NativeStatus: c.Status,
			Path: c.StatePath, MaxIterations: ptr(int64(c.Budget.MaxAttempts))}
		e := loop.EventFor(v, loop.EventPlan, now)
		e.Detail = "planned from template " + tp.Name
		if err := h.Append(ctx, e); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "wrote %s\n", relTo(h.Root, path))
	}
	_, err = f.IO.Out.Write(data)
	return err
}

func ptr[T any](v T) *T { return &v }

func relTo(root, path string) string {
	if r, ok := strings.CutPrefix(path, root+"/"); ok {
		return r
	}
	return path
}

// --- orbit loop run ---

type loopRunOptions struct {
	f    *Factory
	Run  citadel.RunOptions
	JSON jsonFlag
}

func newCmdLoopRun(f *Factory, runF func(*loopRunOptions) error) *cobra.Command {
	opts := &loopRunOptions{f: f}
	cmd := &cobra.Command{
		Use:   "run --action CMD --verify CMD",
		Short: "Run a bounded foreground loop: action, then verifier, until it passes",
		Long: `Run the action, then the verifier (each with sh -c in the project root), until
the verifier passes (verifier-passed) or the attempts run out (attempt-limit).
An action that fails stops the loop as blocked; a verifier that cannot run
(exit 126 or 127, or no shell) as verifier-failed; Ctrl-C as stopped, with
the record saved. The commands' output goes to stderr as they run.

With --write, the loop's contract record is kept in .planning/loops/{id}.json
as Citadel's loop-runner writes it: every action and verifier run is appended
as it ends (command, exit code, start and end, the output's last lines as
evidence), each as an event in orbit's loop event journal, and a review
artifact (markdown) is written where the record's reviewArtifact says
(default .planning/loops/{id}.md). The record is re-read under its lock for
every write, so ` + "`orbit loop stop ID`" + ` from another terminal stops the loop
(killing the running command) and is never overwritten; ` + "`orbit loop pause ID`" + `
makes it wait before its next step until resumed.

--loop ID runs an existing record (one planned from a template, say) with its
trigger command and verifier command unless --action or --verify are given.

Exit status: 0 only on verifier-passed; 3 on any other end.`,
		Example: `  orbit loop run --action "npm run lint -- --fix" --verify "npm run lint" --max-attempts 3 --write
  orbit loop run --verify "go test ./..." --max-attempts 1
  orbit loop run --action "make fmt" --verify "make check" --backoff 2s --write --json
  orbit loop run --loop docs-drift --write`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Run.Verify == "" && opts.Run.Loop == "" {
				return flagErrorf("--verify is required (the verifier decides when the loop is done)")
			}
			if cmd.Flags().Changed("max-attempts") && opts.Run.MaxAttempts < 1 {
				return flagErrorf("--max-attempts %d: must be at least 1", opts.Run.MaxAttempts)
			}
			if opts.Run.Backoff < 0 {
				return flagErrorf("--backoff %s: must not be negative", opts.Run.Backoff)
			}
			if opts.Run.Loop != "" && !cmd.Flags().Changed("max-attempts") {
				opts.Run.MaxAttempts = 0 // the record's budget
			}
			if runF != nil {
				return runF(opts)
			}
			return loopRunRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Run.Action, "action", "", "command run first in each attempt")
	cmd.Flags().StringVar(&opts.Run.Verify, "verify", "", "command that decides: exit 0 passes")
	cmd.Flags().IntVar(&opts.Run.MaxAttempts, "max-attempts", 3, "attempts before stopping as attempt-limit")
	cmd.Flags().DurationVar(&opts.Run.Backoff, "backoff", 0, "wait this long between attempts (e.g. 2s)")
	cmd.Flags().BoolVar(&opts.Run.Write, "write", false, "keep the record, the events and the review artifact")
	cmd.Flags().StringVar(&opts.Run.Loop, "loop", "", "run this existing Citadel record (implies --write)")
	cmd.Flags().StringVar(&opts.Run.Artifact, "artifact", "", "review artifact path (default .planning/loops/{id}.md)")
	addJSONFlag(cmd, &opts.JSON, []string{"id", "path", "status", "stop_reason", "attempts", "max_attempts", "runs", "review_artifact", "external"})
	return cmd
}

func loopRunRun(ctx context.Context, opts *loopRunOptions) error {
	f := opts.f
	h, err := loopHistory(ctx, f)
	if err != nil {
		return err
	}
	r := &citadel.Runner{Root: h.Root, History: h, Now: f.Now}
	ro := opts.Run
	ro.Output, ro.Progress = f.IO.ErrOut, f.IO.ErrOut
	if !ro.Write && ro.Loop == "" {
		r.History = nil
	}
	res, err := r.Run(ctx, ro)
	if err != nil {
		return err
	}
	if opts.JSON.on {
		if err := opts.JSON.write(f.IO.Out, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(f.IO.Out, "%s after %d of %d attempts: %s\n", res.Status, res.Attempts, res.MaxAttempts, loop.StopMeaning(res.Status))
		if res.Path != "" {
			fmt.Fprintf(f.IO.Out, "record: %s\n", res.Path)
		}
		if res.ReviewArtifact != "" && res.Path != "" {
			fmt.Fprintf(f.IO.Out, "review: %s\n", res.ReviewArtifact)
		}
	}
	if res.Status != "verifier-passed" {
		return &findingsError{msg: fmt.Sprintf("loop %s ended %s", res.ID, res.Status)}
	}
	return nil
}

// --- orbit loop list ---

type loopListOptions struct {
	f         *Factory
	Framework string
	Active    bool
	JSON      jsonFlag
}

func newCmdLoopList(f *Factory, runF func(*loopListOptions) error) *cobra.Command {
	opts := &loopListOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Every loop in the project, of every framework, in one table",
		Long: `Find and read, in place and read-only, the loops of every framework in the
project: Citadel (.planning/loops/*.json, .planning/daemon.json), CCW
(.workflow/.loop/*.json with their task files), Cavekit (.cavekit/),
Conductor (conductor/tracks/*/metadata.json) and the ORBIT loop
(.claude/ceo-loop-state.json). Each status is mapped to Citadel's shared stop
vocabulary (the README's table says how), beside the framework's own word.

Real files drift from their schemas: values are shown as they are, and what
is inconsistent (a loop marked complete whose .loop.json is still present, an
iteration past its cap, a stale lock) is flagged. A file that cannot be read
is reported on stderr and the exit status is 3; nothing crashes the list.

Reading also records, in orbit's loop event journal, each loop seen for the
first time and each status that changed since the last look, so a loop's
history survives any later rewrite of its file.`,
		Example: `  orbit loop list
  orbit loop list --framework ccw --active
  orbit loop list --json=framework,id,status,warnings`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Framework != "" && !slices.Contains(loop.Frameworks(), opts.Framework) {
				return flagErrorf("--framework %q is not allowed (allowed: %s)", opts.Framework, strings.Join(loop.Frameworks(), ", "))
			}
			if runF != nil {
				return runF(opts)
			}
			return loopListRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Framework, "framework", "", "only this framework's loops")
	cmd.Flags().BoolVar(&opts.Active, "active", false, "only loops that have not stopped")
	addJSONFlag(cmd, &opts.JSON, loopFields)
	return cmd
}

func loopListRun(ctx context.Context, opts *loopListOptions) error {
	f := opts.f
	_, s, err := scanLoops(ctx, f)
	if err != nil {
		return err
	}
	views := make([]loop.View, 0, len(s.Loops))
	for _, v := range s.Loops {
		if (opts.Framework == "" || v.Framework == opts.Framework) && (!opts.Active || !loop.IsStopped(v.Status)) {
			views = append(views, v)
		}
	}
	if opts.JSON.on {
		if err := opts.JSON.write(f.IO.Out, views); err != nil {
			return err
		}
		return problemsError(s)
	}
	if len(views) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no loops found")
		return problemsError(s)
	}
	t := &report.Table{Header: []string{"FRAMEWORK", "ID", "TITLE", "STATUS", "NATIVE", "ITER", "UPDATED", "BUDGET", "!"}}
	for _, v := range views {
		flags := ""
		if len(v.Warnings) > 0 {
			flags = strconv.Itoa(len(v.Warnings))
		}
		t.Append(v.Framework, v.ID, v.Title, v.Status, v.NativeStatus, v.IterationText(), v.UpdatedAt, v.BudgetText(), flags)
	}
	if err := t.Render(f.IO.Out, f.IO.OutTTY); err != nil {
		return err
	}
	if f.IO.OutTTY {
		for _, v := range views {
			for _, w := range v.Warnings {
				fmt.Fprintf(f.IO.Out, "! %s: %s\n", v.Key(), w)
			}
		}
	}
	return problemsError(s)
}

// --- orbit loop show ---

type loopShowOptions struct {
	f    *Factory
	ID   string
	JSON jsonFlag
}

func newCmdLoopShow(f *Factory, runF func(*loopShowOptions) error) *cobra.Command {
	opts := &loopShowOptions{f: f}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "One loop of any framework, with its history",
		Long: `Show one loop: its status (shared word and the framework's own), counters,
budget, files, what orbit flags as inconsistent, the runs a Citadel record
holds, and the history orbit's loop event journal keeps (plans, runs, stops,
pauses, resumes, status changes seen). ID is the loop's id, framework:id when
two frameworks share it, or any unique prefix.`,
		Example: `  orbit loop show orbit
  orbit loop show ccw:loop-v2-20260122-abc123
  orbit loop show foreground-loop-true --json=status,history`,
		Args: exactArgs(1, "a loop ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return loopShowRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, loopFields)
	return cmd
}

func loopShowRun(ctx context.Context, opts *loopShowOptions) error {
	f := opts.f
	h, s, err := scanLoops(ctx, f)
	if err != nil {
		return err
	}
	v, err := findLoop(s, opts.ID, "")
	if err != nil {
		return err
	}
	if v.History, err = h.Of(ctx, v.Framework, v.ID); err != nil {
		return err
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, v)
	}
	printLoop(f.IO.Out, f.IO.OutTTY, v)
	return nil
}

func printLoop(w io.Writer, tty bool, v loop.View) {
	fmt.Fprintf(w, "%s %s: %s (%s: %s)\n", v.Framework, v.ID, v.Status, v.Framework, orDash(v.NativeStatus))
	fmt.Fprintf(w, "title: %s\n", v.Title)
	fmt.Fprintf(w, "path: %s\n", v.Path)
	if it := v.IterationText(); it != "" {
		fmt.Fprintf(w, "iteration: %s\n", it)
	}
	fmt.Fprintf(w, "updated: %s\n", orDash(v.UpdatedAt))
	if b := v.BudgetText(); b != "" {
		fmt.Fprintf(w, "budget: %s\n", b)
	}
	fmt.Fprintf(w, "controls: %s\n", orDash(strings.Join(v.Controls, ", ")))
	for _, d := range v.Details {
		fmt.Fprintf(w, "%s: %s\n", d.Name, d.Value)
	}
	fmt.Fprintf(w, "files: %s\n", strings.Join(v.Files, ", "))
	if len(v.Warnings) > 0 {
		fmt.Fprintln(w, "\nflagged:")
		for _, x := range v.Warnings {
			fmt.Fprintf(w, "  ! %s\n", x)
		}
	}
	if len(v.Runs) > 0 {
		fmt.Fprintln(w, "\nruns:")
		t := &report.Table{Header: []string{"ATTEMPT", "STATUS", "SUMMARY", "COMMAND", "EXIT", "STARTED", "COMPLETED"}}
		for _, r := range v.Runs {
			cmd := r.Command
			if r.Verifier != "" {
				cmd = "verify: " + r.Verifier
			}
			t.Append(r.Attempt, r.Status, r.Summary, cmd, r.ExitCode, r.StartedAt, r.CompletedAt)
		}
		t.Render(w, tty)
	}
	fmt.Fprintln(w, "\nhistory:")
	if len(v.History) == 0 {
		fmt.Fprintln(w, "  (none recorded)")
		return
	}
	t := &report.Table{Header: []string{"LINE", "AT", "EVENT", "STATUS", "DETAIL"}}
	for _, e := range v.History {
		t.Append(strconv.FormatInt(e.Line, 10), e.At, e.Kind, e.Status, e.Detail)
	}
	t.Render(w, tty)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// --- orbit loop stop ID / pause / resume ---

// loopControlRun stops, pauses or resumes the loop named id.
func loopControlRun(ctx context.Context, f *Factory, id, kind, status, reason string) error {
	h, s, err := scanLoops(ctx, f)
	if err != nil {
		return err
	}
	v, err := findLoop(s, id, kind)
	if err != nil {
		return err
	}
	c := &frameworks.Control{Root: h.Root, History: h, Now: f.Now}
	e, err := c.Apply(ctx, v, kind, status, reason)
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Out, "%s %s: %s -> %s (%s)\n", v.Framework, v.ID, v.Status, e.Status, describeChange(v, kind))
	if v.Framework == loop.ORBIT {
		return orbitSummary(ctx, f)
	}
	return nil
}

// describeChange says what was written, in the loop's own format.
func describeChange(v loop.View, kind string) string {
	if kind != loop.EventStop {
		return "status in " + v.Path
	}
	switch v.Framework {
	case loop.Citadel:
		return "status, stoppedAt, stopReason in " + v.Path
	case loop.CCW:
		return "status, failure_reason, completed_at in " + v.Path
	case loop.Cavekit:
		return "torn down: " + frameworks.CavekitLoopFile + " removed"
	case loop.Conductor:
		return "COMPLETE/PASSED_WITH_WARNINGS with a warning, stop_reason in " + v.Path
	default:
		return "active false, stop_reason in " + v.Path
	}
}

type loopPauseOptions struct {
	f      *Factory
	ID     string
	Reason string
	resume bool
}

func newCmdLoopPause(f *Factory, runF func(*loopPauseOptions) error) *cobra.Command {
	return newCmdLoopPauseResume(f, runF, false)
}

func newCmdLoopResume(f *Factory, runF func(*loopPauseOptions) error) *cobra.Command {
	return newCmdLoopPauseResume(f, runF, true)
}

func newCmdLoopPauseResume(f *Factory, runF func(*loopPauseOptions) error, resume bool) *cobra.Command {
	opts := &loopPauseOptions{f: f, resume: resume}
	cmd := &cobra.Command{
		Use:   "pause ID",
		Short: "Pause a CCW loop or a Citadel loop record",
		Long: `Pause a loop in its own format, where the framework has a paused state: a CCW
loop (running -> paused: the skill checks status before each action) or a
Citadel record (planned, running or waiting -> paused: ` + "`orbit loop run`" + ` waits
before its next step). The write is atomic, under the file's lock, and the
event is recorded. Cavekit, Conductor and ORBIT loops have no paused state.`,
		Example: "  orbit loop pause loop-v2-20260122-abc123\n  orbit loop pause foreground-loop-lint --reason \"lunch\"",
		Args:    exactArgs(1, "a loop ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			kind := loop.EventPause
			if opts.resume {
				kind = loop.EventResume
			}
			return loopControlRun(cmd.Context(), opts.f, opts.ID, kind, "", opts.Reason)
		},
	}
	if resume {
		cmd.Use = "resume ID"
		cmd.Short = "Resume a paused CCW loop or Citadel loop record"
		cmd.Long = `Resume a paused loop in its own format: a CCW loop (paused -> running) or a
Citadel record (paused or needs-human-review -> running). The write is
atomic, under the file's lock, and the event is recorded.`
		cmd.Example = "  orbit loop resume loop-v2-20260122-abc123"
	}
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why, kept in the event")
	return cmd
}
