package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/report"
)

type logOptions struct {
	f        *Factory
	Limit    int
	Category string
	Outcome  string
	JSON     jsonFlag
}

func newCmdLog(f *Factory, runF func(*logOptions) error) *cobra.Command {
	opts := &logOptions{f: f}
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Show the latest decisions",
		Long: `Show the latest decisions, newest first, with their current outcome (the
latest retrograde event: CORRECT, INCORRECT, or PENDING while unverified).`,
		Example: `  orbit log
  orbit log --limit 50 --category architecture
  orbit log --outcome INCORRECT --json=id,input,reason`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Limit < 0 {
				return flagErrorf("--limit %d: must be 0 (all) or more", opts.Limit)
			}
			if err := oneOf("category", opts.Category, journal.Categories); err != nil {
				return err
			}
			if err := oneOf("outcome", opts.Outcome, journal.Outcomes); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return logRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Limit, "limit", "n", 20, "how many decisions (0: all)")
	cmd.Flags().StringVar(&opts.Category, "category", "", "only this category (feature, architecture, quality, scope, deploy)")
	cmd.Flags().StringVar(&opts.Outcome, "outcome", "", "only this current outcome (CORRECT, INCORRECT, PENDING, N/A)")
	addJSONFlag(cmd, &opts.JSON, []journal.DecisionView{})
	return cmd
}

func logRun(ctx context.Context, opts *logOptions) error {
	f := opts.f
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	rows, err := ix.Store.LatestDecisions(ctx, db.DecisionFilter{Category: opts.Category, Outcome: opts.Outcome, Limit: opts.Limit})
	if err != nil {
		return err
	}
	ds := make([]journal.DecisionView, len(rows))
	for i := range rows {
		ds[i] = journal.ViewOf(&rows[i])
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, ds)
	}
	if len(ds) == 0 {
		if f.IO.OutTTY {
			f.IO.Out.Write([]byte("no decisions\n"))
		}
		return nil
	}
	return report.DecisionTable(ds).Render(f.IO.Out, f.IO.OutTTY)
}
