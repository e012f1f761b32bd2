package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/report"
)

type logOptions struct {
	f         *Factory
	Limit     int
	Filter    db.DecisionFilter
	Since     string
	Iteration int64
	JSON      jsonFlag
}

func newCmdLog(f *Factory, runF func(*logOptions) error) *cobra.Command {
	opts := &logOptions{f: f}
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Show the latest decisions",
		Long: `Show the latest decisions, newest first, with their time and current outcome
(the latest retrograde event: CORRECT, INCORRECT, or PENDING while
unverified; VOIDED for a decision voided by orbit void). Filters combine;
enumerations are taken in any case. What awaits a human is --decision
NEEDS_REVIEW. Times are UTC. On a terminal the table fits its width (the
input cut with …); piped, each decision is one tab-separated line of full
text.`,
		Example: `  orbit log
  orbit log --limit 50 --category architecture
  orbit log --decision needs_review --since 7d
  orbit log --tier deep_think --iteration 12 --grep postgres
  orbit log --outcome INCORRECT --json id,input,evidence`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Limit < 0 {
				return flagErrorf("--limit %d: must be 0 (all) or more", opts.Limit)
			}
			fl := &opts.Filter
			for _, e := range []struct {
				field   string
				v       *string
				allowed []string
			}{
				{"category", &fl.Category, journal.Categories}, {"outcome", &fl.Outcome, journal.Outcomes},
				{"tier", &fl.Tier, journal.Tiers}, {"decision", &fl.Decision, journal.DecisionValues},
			} {
				v, err := journal.ParseEnum(e.field, *e.v, e.allowed)
				if err != nil {
					return inputError(err)
				}
				*e.v = v
			}
			if opts.Since != "" {
				since, err := parseSince(opts.Since, f.Now())
				if err != nil {
					return err
				}
				fl.SinceNS = since
			}
			if cmd.Flags().Changed("iteration") {
				if opts.Iteration < 0 {
					return flagErrorf("--iteration %d: must be 0 or more", opts.Iteration)
				}
				fl.Iteration = &opts.Iteration
			}
			fl.Limit = opts.Limit
			if runF != nil {
				return runF(opts)
			}
			return logRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&opts.Limit, "limit", "n", 20, "how many decisions (0: all)")
	fl.StringVar(&opts.Filter.Category, "category", "", "only this category (feature, architecture, quality, scope, deploy)")
	fl.StringVar(&opts.Filter.Outcome, "outcome", "", "only this current outcome (CORRECT, INCORRECT, PENDING, N/A)")
	fl.StringVar(&opts.Filter.Tier, "tier", "", "only this tier (auto_approve, quick_review, deep_think, escalate)")
	fl.StringVar(&opts.Filter.Decision, "decision", "", "only this decision (APPROVED, NEEDS_REVIEW, REJECTED)")
	fl.StringVar(&opts.Filter.Requestor, "requestor", "", "only decisions this requestor asked for")
	fl.StringVar(&opts.Filter.Grep, "grep", "", "only decisions whose input, reason, next action or context holds this text")
	fl.StringVar(&opts.Since, "since", "", "only decisions at or after this time: RFC 3339, a date (2006-01-02, UTC), or a duration ago (24h, 7d, 2w)")
	fl.Int64Var(&opts.Iteration, "iteration", 0, "only this iteration")
	addJSONFlag(cmd, &opts.JSON, []journal.DecisionView{})
	return cmd
}

func logRun(ctx context.Context, opts *logOptions) error {
	f := opts.f
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	rows, err := ix.Store.LatestDecisions(ctx, opts.Filter)
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
	t := report.DecisionTable(ds)
	if f.IO.OutTTY {
		// On a terminal the input, the widest text, is cut to fit;
		// piped, every row keeps its full text.
		if err := report.Fit(t, report.DecisionInputColumn, f.IO.Width); err != nil {
			return err
		}
	}
	return t.Render(f.IO.Out, f.IO.OutTTY)
}
