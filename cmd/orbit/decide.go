package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/queue"
	"github.com/orbit-loop/orbit/report"
)

type decideOptions struct {
	f            *Factory
	In           ceo.Input
	Reversible   bool
	Irreversible bool
	Confidence   float64
	Iteration    int64
	Retro        string
	Stdin        bool
	Queue        bool
	Request      string
	DryRun       bool
	Precedents   int
	JSON         jsonFlag
	set          func(name string) bool
}

func newCmdDecide(f *Factory, runF func(*decideOptions) error) *cobra.Command {
	opts := &decideOptions{f: f}
	cmd := &cobra.Command{
		Use:   "decide",
		Short: "Record one decision in the journal, classified and tiered",
		Long: `Record one decision: orbit classifies its depth (unless --depth), takes its
tier from the impact x reversibility matrix at the current trust level (see
orbit policy), gives auto_approve items APPROVED and escalate items
NEEDS_REVIEW when no --decision is given (any other tier needs --decision and
--reason), takes the next id of the iteration under the journal's lock, appends
one seed-format line and indexes it. The state file's counters follow.

The request comes from flags, from one JSON object on stdin in the pending-
request shape (--stdin), or from the pending queue: --queue decides every
trivial item in one batch and names the deep focus; --request ID decides one
queued item with your verdict and takes it out of the queue.`,
		Example: `  orbit decide --title "Add ESLint rule eqeqeq" --category quality --impact low --reversible
  orbit decide --title "SQLite vs Postgres for state storage" --category architecture \
      --impact medium --reversible --decision APPROVED --reason "single user; reversible" \
      --next-action "implement on SQLite behind an interface" --confidence 0.8
  echo '{"title":"WebSocket vs polling","category":"architecture","impact":"medium","reversible":true}' |
      orbit decide --stdin --decision NEEDS_REVIEW --reason "needs server changes"
  orbit decide --queue
  orbit decide --request req-003 --decision APPROVED --reason "..." --retro iter-6-2=CORRECT`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.set = func(name string) bool { return cmd.Flags().Changed(name) }
			if err := opts.complete(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return decideRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.In.Title, "title", "", "what is being decided (the journal's input)")
	fl.StringVar(&opts.In.Category, "category", "", "feature, architecture, quality, scope or deploy")
	fl.StringVar(&opts.In.Impact, "impact", "", "low, medium or high")
	fl.BoolVar(&opts.Reversible, "reversible", false, "the change can be undone")
	fl.BoolVar(&opts.Irreversible, "irreversible", false, "the change cannot be undone")
	fl.StringVar(&opts.In.Depth, "depth", "", "trivial, light, medium or heavy (default: classified)")
	fl.StringVar(&opts.In.Decision, "decision", "", "APPROVED, NEEDS_REVIEW or REJECTED")
	fl.StringVar(&opts.In.Reason, "reason", "", "why (required with --decision)")
	fl.StringVar(&opts.In.NextAction, "next-action", "", "what should happen next")
	fl.Float64Var(&opts.Confidence, "confidence", 0, "stated confidence, 0..1")
	fl.Int64Var(&opts.Iteration, "iteration", 0, "iteration (default: the state file's, else the journal's highest)")
	fl.StringVar(&opts.In.Requestor, "requestor", "", "who asked (e.g. forge:builder)")
	fl.StringVar(&opts.In.Context, "context", "", "background the decision was made in")
	fl.StringVar(&opts.Retro, "retro", "", "verdict on an earlier decision carried by this line: ID=CORRECT|INCORRECT")
	fl.BoolVar(&opts.Stdin, "stdin", false, "read the request as one JSON object (pending-request shape) from stdin")
	fl.BoolVar(&opts.Queue, "queue", false, "process .claude/ceo-decisions-pending.json: batch the trivial items, name the deep focus")
	fl.StringVar(&opts.Request, "request", "", "decide the queued request with this id and take it out of the queue")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "classify and print, write nothing")
	fl.IntVar(&opts.Precedents, "precedents", ceo.DefaultPrecedents, "attach this many similar past decisions (0: none, the fastest hook path)")
	addJSONFlag(cmd, &opts.JSON, ceo.Result{}, ceo.QueueResult{})
	return cmd
}

// complete checks flag combinations and fills the input.
func (o *decideOptions) complete() error {
	modes := 0
	for _, on := range []bool{o.Stdin, o.Queue, o.Request != ""} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return flagErrorf("--stdin, --queue and --request cannot be combined")
	}
	if o.Reversible && o.Irreversible {
		return flagErrorf("--reversible and --irreversible cannot both be given")
	}
	if o.Stdin || o.Queue || o.Request != "" {
		for _, name := range []string{"title", "category", "impact", "reversible", "irreversible", "requestor", "context"} {
			if o.set(name) {
				return flagErrorf("--%s comes from the request with --stdin, --queue or --request", name)
			}
		}
	}
	if o.Queue {
		for _, name := range []string{"decision", "reason", "next-action", "confidence", "iteration", "retro", "depth"} {
			if o.set(name) {
				return flagErrorf("--%s cannot be used with --queue (it decides only what its tier decides; use --request for the rest)", name)
			}
		}
	}
	if o.Reversible || o.Irreversible {
		rev := o.Reversible
		o.In.Reversible = &rev
	}
	if o.set("confidence") {
		c := o.Confidence
		o.In.Confidence = &c
	}
	if o.set("iteration") {
		it := o.Iteration
		o.In.Iteration = &it
	}
	if o.Retro != "" {
		ref, err := ceo.ParseRetroRef(o.Retro)
		if err != nil {
			return &flagError{err: err}
		}
		o.In.Retro = ref
	}
	return nil
}

func decideRun(ctx context.Context, opts *decideOptions) error {
	f := opts.f
	// No sync here: the decision is recorded under the journal's lock,
	// after a sync there (one sync on the hook path, not two).
	ix, err := f.Index(ctx)
	if err != nil {
		return err
	}
	copts := ceo.Options{DryRun: opts.DryRun, Now: f.Now}
	if opts.Precedents < 0 {
		return flagErrorf("--precedents %d: must be 0 or more", opts.Precedents)
	}
	if opts.Queue {
		res, err := ceo.ProcessQueue(ctx, ix, copts)
		printSyncReport(f.IO.ErrOut, res.Sync)
		printWarnings(f.IO.ErrOut, res.Warnings)
		if err != nil {
			return inputError(err)
		}
		if opts.JSON.on {
			return opts.JSON.write(f.IO.Out, res)
		}
		report.QueueResult(f.IO.Out, res)
		return nil
	}
	var res ceo.Result
	switch {
	case opts.Request != "":
		res, err = ceo.DecideRequest(ctx, ix, opts.Request, opts.In, copts)
	case opts.Stdin:
		data, rerr := io.ReadAll(io.LimitReader(f.IO.In, 1<<20))
		if rerr != nil {
			return fmt.Errorf("read stdin: %w", rerr)
		}
		req, perr := queue.ParseRequest("stdin", 0, data)
		if perr != nil {
			return &flagError{err: perr}
		}
		in := ceo.FromRequest(req)
		in.Depth, in.Decision, in.Reason, in.NextAction = firstNonEmpty(opts.In.Depth, in.Depth), opts.In.Decision, opts.In.Reason, opts.In.NextAction
		in.Confidence, in.Iteration, in.Retro = opts.In.Confidence, opts.In.Iteration, opts.In.Retro
		res, err = ceo.Decide(ctx, ix, in, copts)
	default:
		res, err = ceo.Decide(ctx, ix, opts.In, copts)
	}
	printSyncReport(f.IO.ErrOut, res.Sync)
	printWarnings(f.IO.ErrOut, res.Warnings)
	if err != nil {
		return inputError(err)
	}
	if err := ceo.Similar(ctx, ix, &res, opts.Precedents); err != nil {
		return err
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, res)
	}
	report.Decided(f.IO.Out, res)
	return nil
}

// inputError turns a request that cannot be decided as given into a usage
// error (exit 2); other errors pass through.
func inputError(err error) error {
	var ie *ceo.InputError
	var qe *queue.Error
	if errors.As(err, &ie) || errors.As(err, &qe) {
		return &flagError{err: err}
	}
	return err
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
