package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/hook"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/report"
	"github.com/orbit-loop/orbit/trust"
)

func newCmdLoop(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "loop",
		Short: "Start, stop and inspect the ORBIT loop",
		Long: `The ORBIT loop runs one CEO-LOOP iteration per turn; the Stop hook (orbit hook
stop) re-feeds the agent until the loop is done. These commands write its
state file, .claude/ceo-loop-state.json, as /forge:ceo-loop does.`,
		Example: `  orbit loop start --max-iterations 20 --time-limit 30m
  orbit loop status
  orbit loop stop`,
		Args: noArgs,
	}
	cmd.AddCommand(newCmdLoopStart(f, nil), newCmdLoopStop(f, nil), newCmdLoopStatus(f, nil))
	return cmd
}

type loopStartOptions struct {
	f             *Factory
	MaxIterations int64
	TimeLimit     time.Duration
	Budget        int64
	Sentinel      string
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
  orbit loop start --sentinel "<promise>QUEUE DONE</promise>" --force`,
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
			if runF != nil {
				return runF(opts)
			}
			return loopStartRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().Int64Var(&opts.MaxIterations, "max-iterations", 20, "stop after this many iterations")
	cmd.Flags().DurationVar(&opts.TimeLimit, "time-limit", 30*time.Minute, "stop when this much time has passed (0: none)")
	cmd.Flags().Int64Var(&opts.Budget, "budget", 0, "stop when the session transcript shows this many tokens used (0: none)")
	cmd.Flags().StringVar(&opts.Sentinel, "sentinel", loop.DefaultSentinel, "text that ends the loop when the agent writes it")
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
	o, st, err := loop.ReadOrbit(path)
	if err != nil {
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
	st, err = loop.Start(st, path, loop.StartOptions{MaxIterations: opts.MaxIterations, TimeLimit: opts.TimeLimit, BudgetTokens: opts.Budget, Sentinel: opts.Sentinel},
		h.Correct, h.Incorrect, string(h.Level), counts.Decisions, f.Now())
	if err != nil {
		return err
	}
	if err := st.Write(); err != nil {
		return err
	}
	if err := loop.Release(ctx, ix.Project.Path(hook.LockFile), ""); err != nil {
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
	f      *Factory
	Reason string
}

func newCmdLoopStop(f *Factory, runF func(*loopStopOptions) error) *cobra.Command {
	opts := &loopStopOptions{f: f}
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the ORBIT loop and write the session summary",
		Long: `Set the loop inactive with a stop reason from the shared vocabulary (default
stopped), write the session summary into the progress file and print it, and
free the loop's lock. The next Stop hook lets the session end.`,
		Example: `  orbit loop stop
  orbit loop stop --reason needs-human-review`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !loop.IsStopReason(opts.Reason) {
				return flagErrorf("--reason %q is not allowed (allowed: %v)", opts.Reason, loop.StopReasons)
			}
			if runF != nil {
				return runF(opts)
			}
			return loopStopRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Reason, "reason", "stopped", "why, in the shared stop vocabulary")
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
	o, st, err := loop.ReadOrbit(path)
	if err != nil {
		return err
	}
	if !o.HasState {
		return fmt.Errorf("no ORBIT loop here: %s does not exist (`orbit loop start` starts one)", project.StateFile)
	}
	if !o.Active {
		fmt.Fprintf(f.IO.ErrOut, "the loop was already stopped (%s at %s)\n", o.StopReason, o.StoppedAt)
	}
	if err := loop.Stop(st, opts.Reason, f.Now()); err != nil {
		return err
	}
	if err := st.Write(); err != nil {
		return err
	}
	if err := loop.Release(ctx, ix.Project.Path(hook.LockFile), ""); err != nil {
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
	o, _, err := loop.ReadOrbit(p.Path(project.StateFile))
	if err != nil {
		return err
	}
	lk, lerr := loop.ReadLock(p.Path(hook.LockFile))
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, struct {
			loop.Orbit
			Lock *loop.Lock `json:"lock"`
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
