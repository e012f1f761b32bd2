package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/report"
)

func newCmdReportSummary(f *Factory, runF func(*reportOptions) error) *cobra.Command {
	opts := &reportOptions{f: f}
	cmd := &cobra.Command{
		Use:   "summary",
		Short: `Print the ORBIT CEO loop's "Session Complete" block`,
		Example: `  orbit report summary
  orbit report summary --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return reportSummaryRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, ceo.Progress{})
	return cmd
}

func reportSummaryRun(ctx context.Context, opts *reportOptions) error {
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
	report.SessionSummary(f.IO.Out, p)
	return nil
}
