package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/hook"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/project"
)

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
		Short: "Start the ORBIT loop: an active state file at its first iteration",
		Long: `Write .claude/ceo-loop-state.json active at the loop's first iteration (the
run that starts the loop is that iteration): 1 in a new project, else the one
after the highest iteration the journal or the state holds, because iteration
numbers never restart (an earlier loop's decisions keep their iterations, so
stale decisions stay stale and no summary mixes two loops). --max-iterations
counts from there. The correct and incorrect counters and the trust level
come from the journal; counters an existing state held before orbit came are
adopted as a baseline, never zeroed. The limits given and the completion
sentinel the agent writes to end the loop are written too; fields of an
existing state file that orbit does not own are kept. The loop's session
lock is freed (the next Stop hook's session takes it), and the start is
recorded in orbit's loop event journal.`,
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
	res, err := orbitloop.Start(ctx, ix, orbitloop.StartOptions{MaxIterations: opts.MaxIterations, TimeLimit: opts.TimeLimit,
		BudgetTokens: opts.Budget, Sentinel: opts.Sentinel, HookEvent: opts.HookEvent, Force: opts.Force}, f.Now())
	if err != nil {
		return err
	}
	if res.Recovered != "" {
		fmt.Fprintf(f.IO.ErrOut, "orbit: %s was not a state file; saved it as %s and started a fresh one\n", project.StateFile, relTo(ix.Project.Root, res.Recovered))
	}
	limit := "no time limit"
	if opts.TimeLimit > 0 {
		limit = "time limit " + opts.TimeLimit.String()
	}
	for _, n := range res.Notes {
		fmt.Fprintf(f.IO.ErrOut, "orbit: %s\n", n)
	}
	if hook.Driver(ix.Project.Root, f.Getenv("HOME"), opts.HookEvent) == "" {
		fmt.Fprintf(f.IO.ErrOut, "orbit: warning: no %s hook drives the loop: neither %s nor %s runs `orbit hook %s` (or the ORBIT CEO loop's %s), so it ends at the agent's first stop; `orbit init --claude` registers orbit's\n",
			opts.HookEvent, hook.SettingsFile, hook.LocalSettingsFile, hook.Subcommand(opts.HookEvent), hook.CEOStopScript)
	}
	h := res.Trust
	fmt.Fprintf(f.IO.Out, "ORBIT loop started: iteration %d of %d, %s, trust %s (accuracy %s)\n",
		res.First, res.First+opts.MaxIterations-1, limit, h.Level, h.AccuracyText())
	if res.First > 1 {
		fmt.Fprintf(f.IO.Out, "Iterations go on from the journal's: this loop runs iterations %d to %d.\n", res.First, res.First+opts.MaxIterations-1)
	}
	fmt.Fprintf(f.IO.Out, "The Stop hook re-feeds each iteration; end the loop by writing %s in the last message, or with `orbit loop stop`.\n", opts.Sentinel)
	return nil
}
