package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/report"
)

func newCmdReportProgress(f *Factory, runF func(*reportOptions) error) *cobra.Command {
	opts := &reportOptions{f: f}
	cmd := &cobra.Command{
		Use:   "progress",
		Short: "Render the ORBIT CEO loop's progress file from the index",
		Long: `Render orbit's part of .claude/ceo-loop-progress.md from the index, the queue
and the state file, at most 28 lines. What the next iteration must see comes
first (gotcha 5): queue status, next depth target, queue items that cannot be
decided, the latest retrograde results, accuracy and trust. Then the
iteration summary and the session statistics.

--write writes it at the top of the file, between the lines
<!-- orbit:begin ... --> and <!-- orbit:end -->, so that it ends within the
first 30 lines; every other line (the agent's notes) is kept byte for byte.
A file orbit cannot parse (its markers broken, not text, over 1 MiB) is kept
as a dated backup (ceo-loop-progress.md.orbit-backup-<time>) first, and the
command says so.`,
		Example: `  orbit report progress
  orbit report progress --write`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return reportProgressRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Write, "write", false, "write .claude/ceo-loop-progress.md")
	addJSONFlag(cmd, &opts.JSON, ceo.Progress{})
	return cmd
}

func reportProgressRun(ctx context.Context, opts *reportOptions) error {
	f := opts.f
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	p, err := ceo.GatherProgress(ctx, ix, f.Now())
	if err != nil {
		return err
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, p)
	}
	if opts.Write {
		w, err := orbitloop.WriteProgress(ctx, ix, p)
		if n := w.Note(); n != "" {
			fmt.Fprintf(f.IO.ErrOut, "orbit: %s\n", n)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "wrote orbit's part of %s (your lines outside it kept)\n", project.ProgressFile)
		return nil
	}
	report.ProgressMarkdown(f.IO.Out, p)
	return nil
}
