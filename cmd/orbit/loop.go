package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/hook"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/report"
	"github.com/orbit-loop/orbit/trust"
)

func newCmdLoop(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "loop",
		Short: "The ORBIT loop, and the loops of every framework in the project",
		Long: `The ORBIT loop runs one CEO-LOOP iteration per turn; the Stop hook (orbit hook
stop) re-feeds the agent until the loop is done. start, stop and status write
and read its state file, .claude/ceo-loop-state.json, as /forge:ceo-loop does.

list, show, stop ID, pause and resume see and control the loops of every
framework in the project (Citadel, CCW, Cavekit, Conductor and ORBIT), with
their statuses mapped to Citadel's shared stop vocabulary. templates, plan
and run are Citadel's loop contract (seed 001): its templates, contract
records under .planning/loops/, and the bounded foreground runner.`,
		Example: `  orbit loop start --max-iterations 20 --time-limit 30m
  orbit loop status
  orbit loop stop
  orbit loop list
  orbit loop stop loop-v2-20260122-abc123 --status budget-exhausted --reason "spent"
  orbit loop run --action "npm run lint -- --fix" --verify "npm run lint" --write`,
		Args: noArgs,
	}
	cmd.AddCommand(newCmdLoopStart(f, nil), newCmdLoopStop(f, nil), newCmdLoopStatus(f, nil),
		newCmdLoopTemplates(f, nil), newCmdLoopPlan(f, nil), newCmdLoopRun(f, nil), newCmdLoopList(f, nil),
		newCmdLoopShow(f, nil), newCmdLoopPause(f, nil), newCmdLoopResume(f, nil))
	return cmd
}

type loopStartOptions struct {
	f             *Factory
	MaxIterations int64
	TimeLimit     time.Duration
	Budget        int64
	Sentinel      string
	HookEvent     string
	Force         bool
}

func newCmdLoopStart(f *Factory, runF func(*loopStartOptions) error) *cobra.Command {
	opts := &loopStartOptions{f: f}
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start the ORBIT loop: an active state file at iteration 1",
		Long: `Write .claude/ceo-loop-state.json active at iteration 1 (the run that starts
the loop is the first iteration), with the correct and incorrect counters and
the trust level computed from the journal, the limits given, and the
completion sentinel the agent writes to end the loop. Fields of an existing
state file that orbit does not own are kept.`,
		Example: `  orbit loop start
  orbit loop start --max-iterations 40 --time-limit 2h --budget 2000000
  orbit loop start --sentinel "<promise>QUEUE DONE</promise>" --force
  orbit loop start --hook-event SubagentStop   # a subagent runs the loop`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.MaxIterations < 1 {
				return flagErrorf("--max-iterations %d: must be at least 1", opts.MaxIterations)
			}
			if opts.TimeLimit < 0 || (opts.TimeLimit > 0 && opts.TimeLimit < time.Minute) {
				return flagErrorf("--time-limit %s: must be 0 (none) or at least 1m", opts.TimeLimit)
			}
			if opts.Budget < 0 {
				return flagErrorf("--budget %d: must be 0 (none) or more tokens", opts.Budget)
			}
			if opts.HookEvent != "Stop" && opts.HookEvent != "SubagentStop" {
				return flagErrorf("--hook-event %q: want Stop or SubagentStop", opts.HookEvent)
			}
			if runF != nil {
				return runF(opts)
			}
			return loopStartRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().Int64Var(&opts.MaxIterations, "max-iterations", 20, "stop after this many iterations")
	cmd.Flags().DurationVar(&opts.TimeLimit, "time-limit", 30*time.Minute, "stop when this much time has passed (0: none)")
	cmd.Flags().Int64Var(&opts.Budget, "budget", 0, "stop when the session transcript shows this many tokens used (0: none)")
	cmd.Flags().StringVar(&opts.Sentinel, "sentinel", ceo.DefaultSentinel, "text that ends the loop when the agent writes it")
	cmd.Flags().StringVar(&opts.HookEvent, "hook-event", "Stop", "the hook event that ends an iteration: Stop (the main agent) or SubagentStop (a subagent runs the loop)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "restart a loop that is still active")
	return cmd
}

func loopStartRun(ctx context.Context, opts *loopStartOptions) error {
	f := opts.f
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	path := ix.Project.Path(project.StateFile)
	unlock, err := flock.Path(ctx, path+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	o, st, err := ceo.ReadLoopState(path)
	switch {
	case err != nil && st == nil && opts.Force:
		// Not JSON: start afresh, the old bytes saved beside it.
		var backup string
		if st, backup, err = orbitloop.RecoverState(path, f.Now()); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "orbit: %s was not a state file; saved it as %s and started a fresh one\n", project.StateFile, relTo(ix.Project.Root, backup))
		o = ceo.LoopInfo{}
	case err != nil && st == nil:
		return fmt.Errorf("%w (`orbit loop start --force` saves it aside and starts afresh)", err)
	case err != nil && !opts.Force:
		return err
	}
	if o.Active && !opts.Force {
		return fmt.Errorf("an ORBIT loop is already active (iteration %d, started %s); `orbit loop stop` it, or pass --force", o.Iteration, o.StartedAt)
	}
	h, err := trust.Current(ctx, ix.Store)
	if err != nil {
		return err
	}
	counts, err := ix.Store.Counts(ctx)
	if err != nil {
		return err
	}
	st, err = orbitloop.MarkStarted(st, path, orbitloop.StartOptions{MaxIterations: opts.MaxIterations, TimeLimit: opts.TimeLimit, BudgetTokens: opts.Budget, Sentinel: opts.Sentinel, HookEvent: opts.HookEvent},
		h.Correct, h.Incorrect, string(h.Level), counts.Decisions, f.Now())
	if err != nil {
		return err
	}
	if err := st.Write(); err != nil {
		return err
	}
	if err := orbitloop.Release(ctx, ix.Project.Path(orbitloop.LockFile), ""); err != nil {
		return err
	}
	limit := "no time limit"
	if opts.TimeLimit > 0 {
		limit = "time limit " + opts.TimeLimit.String()
	}
	fmt.Fprintf(f.IO.Out, "ORBIT loop started: iteration 1 of %d, %s, trust %s (%d/%d correct)\n",
		opts.MaxIterations, limit, h.Level, h.Correct, h.Scored())
	fmt.Fprintf(f.IO.Out, "The Stop hook re-feeds each iteration; end the loop by writing %s in the last message, or with `orbit loop stop`.\n", opts.Sentinel)
	return nil
}

type loopStopOptions struct {
	f *Factory
	// ID names a loop of the unified view; "" is the ORBIT loop.
	ID string
	// Reason is the stop word (without ID and --status, as before), or
	// the free text kept with the stop.
	Reason string
	// Status is the stop word given with --status.
	Status string
	// Text is the free-text reason ("" when none).
	Text string
}

func newCmdLoopStop(f *Factory, runF func(*loopStopOptions) error) *cobra.Command {
	opts := &loopStopOptions{f: f}
	cmd := &cobra.Command{
		Use:   "stop [ID]",
		Short: "Stop the ORBIT loop, or any loop of the project by its id",
		Long: `Without ID: set the ORBIT loop inactive with a stop reason from the shared
vocabulary (--reason, default stopped), write the session summary into the
progress file and print it, and free the loop's lock. The next Stop hook lets
the session end.

With ID: stop that loop, of any framework, in its own format, atomically
(temp file and rename) under the file's lock, with --status a word of the
shared stop vocabulary (default stopped) and --reason free text:

  Citadel    status, stoppedAt, stopReason (and updatedAt) in the record
  CCW        status failed, failure_reason "<status>: <reason>", completed_at
             (status completed for done and verifier-passed)
  Cavekit    teardown: .cavekit/.loop.json removed (the Stop hook then does
             nothing); a stale .loop.lock removed too
  Conductor  loop_state COMPLETE / PASSED_WITH_WARNINGS with a warning (seed
             004's completeWithWarnings), plus stop_reason and stopped_at
  ORBIT      as without ID ("orbit" is its id)

The stop is recorded in orbit's loop event journal. A loop of another
framework that has stopped already is left alone (an error says so); the
ORBIT loop is stopped again, with a note, as it always was.`,
		Example: `  orbit loop stop
  orbit loop stop --reason needs-human-review
  orbit loop stop loop-v2-20260122-abc123 --status budget-exhausted --reason "token budget spent"
  orbit loop stop cavekit
  orbit loop stop foreground-loop-lint --status unsafe-to-continue --reason "touches prod config"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return flagErrorf("expected at most one loop ID, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			statusSet := cmd.Flags().Changed("status")
			if statusSet && !loop.IsStopReason(opts.Status) {
				return flagErrorf("--status %q is not allowed (allowed: %s)", opts.Status, strings.Join(loop.StopReasons(), ", "))
			}
			if len(args) == 1 {
				opts.ID = args[0]
			}
			switch {
			case opts.ID == "" && !statusSet:
				// As before: --reason is the stop word.
				if !loop.IsStopReason(opts.Reason) {
					return flagErrorf("--reason %q is not allowed (allowed: %s)", opts.Reason, strings.Join(loop.StopReasons(), ", "))
				}
				opts.Status = opts.Reason
			case cmd.Flags().Changed("reason"):
				opts.Text = opts.Reason
			}
			if opts.Status == "" {
				opts.Status = "stopped"
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.ID != "" && opts.ID != orbitloop.ID && opts.ID != loop.ORBIT+":"+orbitloop.ID {
				return loopControlRun(cmd.Context(), f, opts.ID, loop.EventStop, opts.Status, opts.Text)
			}
			// The ORBIT loop, by its id or without one: as it always was.
			return loopStopRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Reason, "reason", "stopped", "without ID or --status: the stop word; otherwise why, in words")
	cmd.Flags().StringVar(&opts.Status, "status", "", "the stop word, from the shared stop vocabulary (default stopped)")
	return cmd
}

func loopStopRun(ctx context.Context, opts *loopStopOptions) error {
	f := opts.f
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	path := ix.Project.Path(project.StateFile)
	unlock, err := flock.Path(ctx, path+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	o, st, err := ceo.ReadLoopState(path)
	switch {
	case err != nil && st == nil:
		// Not JSON, so nothing to keep field by field: save the bytes
		// aside and write a stopped state, so that the hook lets the
		// session end (it cannot go on with a broken state anyway).
		fmt.Fprintf(f.IO.ErrOut, "orbit: %v\n", err)
		var backup string
		if st, backup, err = orbitloop.RecoverState(path, f.Now()); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "orbit: saved it as %s; the loop is stopped with a fresh state file\n", relTo(ix.Project.Root, backup))
		o = ceo.LoopInfo{HasState: true, Active: true}
	case err != nil:
		// A field of the wrong type: stopping only sets active,
		// stop_reason and stopped_at; every other field stays as it is.
		fmt.Fprintf(f.IO.ErrOut, "orbit: %v (stopping anyway)\n", err)
		o.Active = true
	}
	if !o.HasState {
		return fmt.Errorf("no ORBIT loop here: %s does not exist (`orbit loop start` starts one)", project.StateFile)
	}
	if !o.Active && loop.IsStopped(o.StopReason) {
		// Idempotent: the first stop's reason and time are the record of
		// why the loop ended; a second stop must not overwrite them. (A
		// loop stopped for needs-human-review waits for a person, whose
		// stop is recorded.)
		fmt.Fprintf(f.IO.ErrOut, "the loop was already stopped (%s at %s); left as it is\n", o.StopReason, orDash(o.StoppedAt))
		return orbitloop.Release(ctx, ix.Project.Path(orbitloop.LockFile), "")
	}
	if !o.Active {
		fmt.Fprintf(f.IO.ErrOut, "the loop was already stopped (%s at %s)\n", orDash(o.StopReason), orDash(o.StoppedAt))
	}
	before, ok, _ := orbitloop.View(ix.Project.Root, f.Now())
	if !ok {
		before = loop.View{Framework: loop.ORBIT, ID: orbitloop.ID, Title: "ORBIT CEO loop", Path: project.StateFile, Status: loop.Unknown}
	}
	if err := orbitloop.MarkStopped(st, opts.Status, f.Now()); err != nil {
		return err
	}
	if err := st.Write(); err != nil {
		return err
	}
	if err := orbitloop.Release(ctx, ix.Project.Path(orbitloop.LockFile), ""); err != nil {
		return err
	}
	e := loop.EventFor(before, loop.EventStop, f.Now())
	e.Status, e.From, e.NativeStatus, e.Detail = opts.Status, before.Status, "inactive ("+opts.Status+")", firstNonEmpty(opts.Text, opts.Status)
	h := &loop.History{Root: ix.Project.Root, Store: ix.Store}
	if err := h.Append(ctx, e); err != nil {
		return err
	}
	if opts.ID != "" {
		fmt.Fprintf(f.IO.Out, "%s %s: %s -> %s (%s)\n", loop.ORBIT, orbitloop.ID, before.Status, opts.Status, describeChange(before, loop.EventStop))
	}
	return orbitSummary(ctx, f)
}

// orbitSummary writes the session summary into the progress file and
// prints it (the end of every ORBIT loop stop).
func orbitSummary(ctx context.Context, f *Factory) error {
	ix, err := f.Index(ctx)
	if err != nil {
		return err
	}
	p, err := hook.WriteSummary(ctx, ix, f.Now())
	if err != nil {
		return err
	}
	report.SessionSummary(f.IO.Out, p)
	return nil
}

type loopStatusOptions struct {
	f    *Factory
	JSON jsonFlag
}

func newCmdLoopStatus(f *Factory, runF func(*loopStatusOptions) error) *cobra.Command {
	opts := &loopStatusOptions{f: f}
	cmd := &cobra.Command{
		Use:     "status",
		Short:   "Show the ORBIT loop's state, limits and lock",
		Example: "  orbit loop status\n  orbit loop status --json=active,iteration",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return loopStatusRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, []string{"has_state", "active", "iteration", "max_iterations", "time_limit_minutes", "started_at", "trust_level",
		"depth_escalation_counter", "correct_decisions", "incorrect_decisions", "completion_sentinel", "budget_tokens", "tokens_used",
		"stop_reason", "stopped_at", "lock"})
	return cmd
}

func loopStatusRun(ctx context.Context, opts *loopStatusOptions) error {
	f := opts.f
	p, err := f.Project()
	if err != nil {
		return err
	}
	o, _, err := ceo.ReadLoopState(p.Path(project.StateFile))
	if err != nil {
		return err
	}
	lk, lerr := orbitloop.ReadLock(p.Path(orbitloop.LockFile))
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, struct {
			ceo.LoopInfo
			Lock *orbitloop.Lock `json:"lock"`
		}{o, lk})
	}
	out := f.IO.Out
	if !o.HasState {
		fmt.Fprintf(out, "no ORBIT loop: %s does not exist (`orbit loop start` starts one)\n", project.StateFile)
		return nil
	}
	state := "active"
	if !o.Active {
		state = "stopped"
		if o.StopReason != "" {
			state += " (" + o.StopReason + " at " + o.StoppedAt + ")"
		}
	}
	fmt.Fprintf(out, "ORBIT loop: %s\n", state)
	fmt.Fprintf(out, "iteration: %d of %d\n", o.Iteration, o.MaxIterations)
	if d := o.Deadline(); !d.IsZero() {
		fmt.Fprintf(out, "time: started %s, %d of %d minutes used\n", o.StartedAt, int(f.Now().Sub(o.Started).Minutes()), o.TimeLimitMinutes)
	} else {
		fmt.Fprintf(out, "time: started %s, no time limit\n", o.StartedAt)
	}
	if o.BudgetTokens > 0 {
		fmt.Fprintf(out, "budget: %d of %d tokens used\n", o.TokensUsed, o.BudgetTokens)
	}
	fmt.Fprintf(out, "trust: %s (%d correct, %d incorrect)\n", o.TrustLevel, o.Correct, o.Incorrect)
	fmt.Fprintf(out, "completion sentinel: %s\n", o.Sentinel)
	switch {
	case lerr != nil:
		fmt.Fprintf(out, "lock: %v\n", lerr)
	case lk == nil:
		fmt.Fprintln(out, "lock: free (the next Stop hook takes it)")
	default:
		stale := ""
		if lk.Stale(f.Now()) {
			stale = " — stale: another session may take it"
		}
		fmt.Fprintf(out, "lock: %s (pid %d on %s), heartbeat %s ago%s\n", lk.Owner, lk.PID, lk.Host, f.Now().Sub(lk.HeartbeatAt).Round(time.Second), stale)
	}
	return nil
}
