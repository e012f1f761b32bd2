package main

import (
	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/loop"
)

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
before its next step). The write is atomic, under the file's lock, changes
status and the update time only, and the event is recorded. Cavekit,
Conductor and ORBIT loops have no paused state.`,
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
Citadel record (paused or needs-human-review -> running; stoppedAt and
stopReason are removed, the event journal keeps them). The write is atomic,
under the file's lock, and the event is recorded.

CCW's skill exits when it sees a pause: the output says what continues the
loop (to continue: /ccw-loop --loop-id=ID, with --auto in auto mode).`
		cmd.Example = "  orbit loop resume loop-v2-20260122-abc123"
	}
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why, kept in the event")
	return cmd
}
