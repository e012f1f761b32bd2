package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/report"
)

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
vocabulary (--reason, default stopped) and the journal's trust counters,
free the loop's lock, record the stop in orbit's loop event journal, and
write the session summary into the progress file and print it. The next
Stop hook lets the session end. The API (POST /api/v1/loops/orbit/stop) and
the Stop hook's own teardown stop the loop the same way.

With ID: stop that loop, of any framework, in its own format, atomically
(temp file and rename) under the file's lock, with --status a word of the
shared stop vocabulary (default stopped) and --reason free text:

  Citadel    status and stopReason the stop word, stoppedAt, updatedAt; the
             reason a note. The daemon: status stopped (completed for done),
             the word in stopReason
  CCW        status failed, failure_reason "<status>: <reason>", completed_at
             (status completed, no failure_reason, for done and
             verifier-passed)
  Cavekit    Cavekit's teardown: .cavekit/.loop.json removed (the Stop hook
             then does nothing), a lock without a live heartbeat removed,
             state.md phase complete
  Conductor  Conductor's completeWithWarnings: COMPLETE/PASSED_WITH_WARNINGS,
             a warning, a completed_with_warnings decision, status complete,
             tracks.md "Done (with warnings)"; done: the Track Completion
             Protocol; blocked: step status BLOCKED with an ACTIVE blocker
  ORBIT      as without ID ("orbit" is its id)

Only those fields change: every other byte of the file stays as it was. The
output says what was written. The stop is recorded in orbit's loop event
journal. A loop of another
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
			if opts.ID != "" && !orbitloop.IsID(opts.ID) {
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
	res, err := orbitloop.Stop(ctx, ix, orbitloop.StopOptions{Reason: opts.Status, Detail: opts.Text}, f.Now())
	switch {
	case res.Recovered != "":
		fmt.Fprintf(f.IO.ErrOut, "orbit: %v\n", res.ReadErr)
		fmt.Fprintf(f.IO.ErrOut, "orbit: saved it as %s; the loop is stopped with a fresh state file\n", relTo(ix.Project.Root, res.Recovered))
	case res.ReadErr != nil:
		fmt.Fprintf(f.IO.ErrOut, "orbit: %v (stopping anyway)\n", res.ReadErr)
	}
	if err != nil {
		return err
	}
	switch {
	case res.AlreadyStopped:
		fmt.Fprintf(f.IO.ErrOut, "the loop was already stopped (%s at %s); left as it is\n", res.PreviousReason, orDash(res.PreviousAt))
		return nil
	case res.WasInactive:
		fmt.Fprintf(f.IO.ErrOut, "the loop was already stopped (%s at %s)\n", orDash(res.PreviousReason), orDash(res.PreviousAt))
	}
	for _, n := range res.Notes {
		fmt.Fprintf(f.IO.ErrOut, "orbit: %s\n", n)
	}
	if opts.ID != "" {
		printControl(f.IO.Out, res.Before, res.Event)
	}
	report.SessionSummary(f.IO.Out, res.Progress)
	return nil
}
