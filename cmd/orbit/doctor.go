package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/hook"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/report"
)

type doctorOptions struct {
	f    *Factory
	JSON jsonFlag
}

func newCmdDoctor(f *Factory, runF func(*doctorOptions) error) *cobra.Command {
	opts := &doctorOptions{f: f}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the project: files, index, hooks and loop state, each finding with its fix",
		Long: `Check what a newcomer needs working: the journal present and in step with the
index, the state file and the queue parseable, the loop state sane (an
iteration past its cap, a live loop whose lock is stale), orbit's hooks
registered in .claude/settings.json and pointing at a binary that exists,
no other blocking Stop hook racing them, and the hook's last error.

Exit status 3 when any check finds a problem.`,
		Example: `  orbit doctor
  orbit doctor --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return doctorRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, []hook.Check{})
	return cmd
}

func doctorRun(ctx context.Context, opts *doctorOptions) error {
	f := opts.f
	ix, err := f.Index(ctx)
	if err != nil {
		return err
	}
	checks, err := hook.Doctor(ctx, ix, f.Now(), f.Getenv("HOME"))
	if err != nil {
		return err
	}
	problems := 0
	for _, c := range checks {
		if c.Level == hook.Problem {
			problems++
		}
	}
	var fail error
	if problems > 0 {
		fail = &findingsError{msg: fmt.Sprintf("doctor: %d %s", problems, journal.Plural(problems, "problem", "problems"))}
	}
	if opts.JSON.on {
		if err := opts.JSON.write(f.IO.Out, checks); err != nil {
			return err
		}
		return fail
	}
	t := &report.Table{Header: []string{"LEVEL", "FILE", "FINDING", "FIX"}, MaxCell: 90}
	for _, c := range checks {
		t.Append(c.Level, c.Subject, c.Finding, c.Fix)
	}
	if err := t.Render(f.IO.Out, f.IO.OutTTY); err != nil {
		return err
	}
	return fail
}
