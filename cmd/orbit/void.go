package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/report"
)

type voidOptions struct {
	f        *Factory
	ID       string
	Evidence string
	Undo     bool
	DryRun   bool
	JSON     jsonFlag
}

func newCmdVoid(f *Factory, runF func(*voidOptions) error) *cobra.Command {
	opts := &voidOptions{f: f}
	cmd := &cobra.Command{
		Use:   "void ID --evidence WHY",
		Short: "Void a decision recorded by mistake",
		Long: `Void a decision recorded by mistake (a test run, a duplicate, the wrong
project) by an append-only event in .claude/ceo-loop-retrograde.jsonl:
{"ts", "decision_id", "void": true, "evidence"}. The decision's own line
stays in the journal, untouched; a voided decision counts in no trust figure
(accuracy, calibration, the state file's counters), is no one's precedent
and is never stale. orbit show ID, orbit log --json and the API say it is
voided and why. --evidence, why, is required. --undo takes a void back (a
void false event); both events stay in the decision's history.

To take back a verdict rather than the decision, use orbit retro ID PENDING.`,
		Example: `  orbit void iter-4-2 --evidence "recorded twice by a retried hook; iter-4-1 is the real one"
  orbit void iter-4-2 --undo --evidence "voided the wrong decision"
  orbit void iter-4-2 --evidence "test run" --dry-run --json`,
		Args:              exactArgs(1, "a decision id"),
		ValidArgsFunction: completeDecisionIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return voidRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Evidence, "evidence", "", "why the decision was recorded by mistake (required)")
	cmd.Flags().BoolVar(&opts.Undo, "undo", false, "take a void back: the decision counts again")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "check the id and evidence, write nothing")
	addJSONFlag(cmd, &opts.JSON, ceo.VoidResult{})
	return cmd
}

func voidRun(ctx context.Context, opts *voidOptions) error {
	f := opts.f
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	res, err := ceo.Void(ctx, ix, opts.ID, opts.Evidence, opts.Undo, ceo.Options{DryRun: opts.DryRun, Now: f.Now})
	printWarnings(f.IO.ErrOut, res.Warnings)
	if err != nil {
		return inputError(err)
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, res)
	}
	report.Void(f.IO.Out, res, opts.DryRun)
	return nil
}
