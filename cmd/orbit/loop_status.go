package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/project"
)

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
	addJSONFlag(cmd, &opts.JSON, orbitloop.Status{})
	return cmd
}

func loopStatusRun(ctx context.Context, opts *loopStatusOptions) error {
	f := opts.f
	p, err := f.Project()
	if err != nil {
		return err
	}
	status, err := orbitloop.ReadStatus(p.Root)
	if err != nil {
		return err
	}
	o, lk, lerr := status.LoopInfo, status.Lock, status.LockErr
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, status)
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
