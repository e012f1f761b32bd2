package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/report"
)

type retroOptions struct {
	f        *Factory
	ID       string
	Outcome  string
	Evidence string
	DryRun   bool
	JSON     jsonFlag
}

func newCmdRetro(f *Factory, runF func(*retroOptions) error) *cobra.Command {
	opts := &retroOptions{f: f}
	cmd := &cobra.Command{
		Use:   "retro ID CORRECT|INCORRECT|PENDING",
		Short: "Record whether an earlier decision proved right",
		Long: `Record a retrograde outcome for a decision as an append-only event in
.claude/ceo-loop-retrograde.jsonl. The decision's own line is never edited
(outcomes are events, never edits). A later outcome for the same decision supersedes this
one; both stay in the history. CONFIRMED and FAILED are accepted for CORRECT
and INCORRECT, in any case. PENDING takes a verdict given by mistake back
(with --evidence saying why): the decision is unverified again, and both
events stay in its history (orbit show ID). The state file's counters and
trust level follow.`,
		Example: `  orbit retro iter-6-2 CORRECT --evidence "commit 4f2a91c landed, CI green"
  orbit retro iter-5-1 FAILED --evidence "rolled back after the canary"
  orbit retro iter-5-1 INCORRECT --json
  orbit retro iter-5-1 pending --evidence "judged the wrong decision"`,
		Args: exactArgs(2, "ID and CORRECT or INCORRECT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID, opts.Outcome = args[0], args[1]
			if _, err := ceo.ParseRetroOutcome(opts.Outcome); err != nil {
				return flagErrorf("%s", err.(*journal.FieldError).Render("OUTCOME"))
			}
			if runF != nil {
				return runF(opts)
			}
			return retroRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Evidence, "evidence", "", "what shows it (a commit, a CI run, an incident)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "check the id and outcome, write nothing")
	addJSONFlag(cmd, &opts.JSON, ceo.RetroResult{})
	return cmd
}

func retroRun(ctx context.Context, opts *retroOptions) error {
	f := opts.f
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	res, err := ceo.Retro(ctx, ix, opts.ID, opts.Outcome, opts.Evidence, ceo.Options{DryRun: opts.DryRun, Now: f.Now})
	printWarnings(f.IO.ErrOut, res.Warnings)
	if err != nil {
		return inputError(err)
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, res)
	}
	report.Retro(f.IO.Out, res, opts.DryRun)
	return nil
}
