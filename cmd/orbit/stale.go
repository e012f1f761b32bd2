package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/report"
)

type staleOptions struct {
	f          *Factory
	Iterations int64
	OlderThan  time.Duration
	Limit      int
	Fail       bool
	JSON       jsonFlag
}

func newCmdStale(f *Factory, runF func(*staleOptions) error) *cobra.Command {
	opts := &staleOptions{f: f}
	cmd := &cobra.Command{
		Use:   "stale",
		Short: "List decisions still unverified long after they were made",
		Long: `List decisions whose current outcome is still PENDING more than --iterations
iterations after they were made (the ORBIT CEO loop's TURN phase: 2), or, with
--older-than, whose ts is older than a duration. The current iteration is the
state file's, else the journal's highest.

With --fail the exit status is 3 when any decision is stale, so that a hook or
CI can gate on it.`,
		Example: `  orbit stale
  orbit stale --iterations 5 --limit 0
  orbit stale --older-than 7d --fail
  orbit stale --json=id,age_iterations`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := (ceo.StaleOptions{Iterations: opts.Iterations, OlderThan: opts.OlderThan, Limit: opts.Limit}).Check(); err != nil {
				return &flagError{err: err}
			}
			if runF != nil {
				return runF(opts)
			}
			return staleRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().Int64Var(&opts.Iterations, "iterations", ceo.DefaultStaleIterations, "stale when still PENDING more than this many iterations later")
	cmd.Flags().Var(durationFlag{&opts.OlderThan}, "older-than", "stale when older than this (24h, 7d, 2w); replaces --iterations")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "n", ceo.DefaultStaleLimit, "list at most this many, oldest first (0: all)")
	cmd.Flags().BoolVar(&opts.Fail, "fail", false, "exit 3 when any decision is stale")
	addJSONFlag(cmd, &opts.JSON, []ceo.StaleDecision{})
	return cmd
}

func staleRun(ctx context.Context, opts *staleOptions) error {
	f := opts.f
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	cnt := int64(0) // the default cap
	if opts.Limit == 0 || opts.Fail {
		cnt = math.MaxInt64 // listing all, or gating: count them all
	}
	rep, err := ceo.StaleDecisions(ctx, ix, ceo.StaleOptions{Iterations: opts.Iterations, OlderThan: opts.OlderThan, Limit: opts.Limit, Cap: cnt}, f.Now())
	if err != nil {
		return err
	}
	var fail error
	if opts.Fail && rep.Total > 0 {
		fail = &findingsError{msg: fmt.Sprintf("stale: %d decisions unverified", rep.Total)}
	}
	if opts.JSON.on {
		if err := opts.JSON.write(f.IO.Out, rep.Decisions); err != nil {
			return err
		}
		return fail
	}
	crit := fmt.Sprintf("PENDING more than %d iterations after they were made", opts.Iterations)
	if opts.OlderThan > 0 {
		crit = "PENDING and older than " + opts.OlderThan.String()
	}
	total := strconv.FormatInt(rep.Total, 10)
	if rep.AtLeast {
		total = "at least " + total
	}
	fmt.Fprintf(f.IO.ErrOut, "current iteration %d; %s decisions %s\n", rep.Current, total, crit)
	t := &report.Table{Header: []string{"ID", "ITER", "AGE (ITER)", "CATEGORY", "INPUT"}}
	for _, d := range rep.Decisions {
		t.Append(d.ID, strconv.FormatInt(d.Iteration, 10), strconv.FormatInt(d.AgeIterations, 10), d.Category, d.Input)
	}
	if len(rep.Decisions) > 0 {
		if err := t.Render(f.IO.Out, f.IO.OutTTY); err != nil {
			return err
		}
	}
	if int64(len(rep.Decisions)) < rep.Total {
		more := strconv.FormatInt(rep.Total-int64(len(rep.Decisions)), 10)
		if rep.AtLeast {
			more = "at least " + more
		}
		fmt.Fprintf(f.IO.ErrOut, "... %s more (--limit 0 lists all)\n", more)
	}
	return fail
}
