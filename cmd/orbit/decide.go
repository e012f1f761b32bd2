package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/report"
)

type decideOptions struct {
	f *Factory
	// Req is the request the flags fill (with --stdin, what they override
	// in each request read).
	Req          ceo.Request
	Reversible   bool
	Irreversible bool
	Confidence   float64
	Iteration    int64
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
orbit policy; a --depth deeper than the classified one raises the tier),
gives auto_approve items APPROVED and escalate items NEEDS_REVIEW when no
--decision is given (any other tier needs --decision and --reason), takes the
next id of the iteration under the journal's lock, appends one seed-format
line and indexes it. The state file's counters follow.

The request comes from flags, from JSON on stdin (--stdin), or from the
pending queue: --queue decides every trivial item in one batch and names the
deep focus; --request ID decides one queued item with your verdict and takes
it out of the queue.

On stdin: one JSON object, or JSON Lines (one request a line: every one is
validated before any is written, then all are written in one append). A
request takes the fields of POST /api/v1/decisions: a pending request's
(title, description, category, impact, reversible, depth, requestor,
context, id or request_id, submitted_at) and the verdict's (decision,
reason, next_action, confidence, iteration, retro, precedents). An unknown
field is refused with the list of these. Flags given beside --stdin override
the request's fields.

Enumerations are taken in any case and written canonically (--decision
approved is APPROVED). The request id (--key, or the request's id) is an
idempotency key: a request whose id is already in the journal is answered
with the decision recorded for it (existing: true) and nothing is written,
so a retried hook never records a decision twice. --dry-run classifies and
prints, even a deep item (its decision left open), and writes nothing.

--json prints the decision in its one JSON form (the README's "JSON
forms"): the record's fields at the top level, next_id, impact, reversible,
trust_level, written, existing, precedents and warnings beside them.`,
		Example: `  orbit decide --title "Add ESLint rule eqeqeq" --category quality --impact low --reversible
  orbit decide --title "SQLite vs Postgres for state storage" --category architecture \
      --impact medium --reversible --decision approved --reason "single user; reversible" \
      --next-action "implement on SQLite behind an interface" --confidence 0.8
  echo '{"title":"WebSocket vs polling","category":"architecture","impact":"medium","reversible":true}' |
      orbit decide --stdin --decision NEEDS_REVIEW --reason "needs server changes"
  orbit decide --key "$REQUEST_ID" --title "Pin eslint" --category quality --impact low --reversible
  orbit decide --dry-run --json --title "Drop the v1 API" --category scope --impact high --irreversible
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
	fl.StringVar(&opts.Req.Title, "title", "", "what is being decided (the journal's input)")
	fl.StringVar(&opts.Req.Category, "category", "", "feature, architecture, quality, scope or deploy")
	fl.StringVar(&opts.Req.Impact, "impact", "", "low, medium or high")
	fl.BoolVar(&opts.Reversible, "reversible", false, "the change can be undone")
	fl.BoolVar(&opts.Irreversible, "irreversible", false, "the change cannot be undone")
	fl.StringVar(&opts.Req.Depth, "depth", "", "trivial, light, medium or heavy (default: classified)")
	fl.StringVar(&opts.Req.Decision, "decision", "", "APPROVED, NEEDS_REVIEW or REJECTED")
	fl.StringVar(&opts.Req.Reason, "reason", "", "why (required with --decision)")
	fl.StringVar(&opts.Req.NextAction, "next-action", "", "what should happen next")
	fl.Float64Var(&opts.Confidence, "confidence", 0, "stated confidence, 0..1")
	fl.Int64Var(&opts.Iteration, "iteration", 0, "iteration, 0 or more (default: the state file's, else the journal's highest)")
	fl.StringVar(&opts.Req.Requestor, "requestor", "", "who asked (e.g. forge:builder)")
	fl.StringVar(&opts.Req.Context, "context", "", "background the decision was made in")
	fl.StringVar(&opts.Req.RequestID, "key", "", "the request's id, an idempotency key: seen again, the decision recorded for it is answered")
	fl.StringVar(&opts.Req.Retro, "retro", "", "verdict on an earlier decision carried by this line: ID=CORRECT|INCORRECT")
	fl.BoolVar(&opts.Stdin, "stdin", false, "read the request from stdin: one JSON object, or JSON Lines")
	fl.BoolVar(&opts.Queue, "queue", false, "process .claude/ceo-decisions-pending.json: batch the trivial items, name the deep focus")
	fl.StringVar(&opts.Request, "request", "", "decide the queued request with this id and take it out of the queue")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "classify and print, write nothing")
	fl.IntVar(&opts.Precedents, "precedents", 3, "attach this many similar past decisions (0: none, the fastest hook path)")
	addJSONFlag(cmd, &opts.JSON, ceo.Result{}, ceo.QueueResult{})
	return cmd
}

// complete checks flag combinations and fills the request.
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
	if o.Queue || o.Request != "" {
		for _, name := range []string{"title", "category", "impact", "reversible", "irreversible", "requestor", "context", "key"} {
			if o.set(name) {
				return flagErrorf("--%s comes from the queued request with --queue or --request", name)
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
	if o.Precedents < 0 {
		return flagErrorf("--precedents %d: must be 0 or more", o.Precedents)
	}
	if o.Reversible || o.Irreversible {
		rev := o.Reversible
		o.Req.Reversible = &rev
	}
	if o.set("confidence") {
		c := o.Confidence
		o.Req.Confidence = &c
	}
	if o.set("iteration") {
		it := o.Iteration
		o.Req.Iteration = &it
	}
	if _, err := ceo.ParseRetroRef(o.Req.Retro); err != nil {
		return inputError(err)
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
	if opts.Queue {
		res, err := ceo.ProcessQueue(ctx, ix, copts)
		printSyncReport(f.IO.ErrOut, res.Sync)
		printWarnings(f.IO.ErrOut, res.Warnings)
		if err != nil {
			return inputError(err)
		}
		for _, v := range res.Invalid {
			fmt.Fprintf(f.IO.ErrOut, "orbit: left in the queue, not decided: %s\n", v.Error())
		}
		if opts.JSON.on {
			if err := opts.JSON.write(f.IO.Out, res); err != nil {
				return err
			}
		} else {
			report.QueueResult(f.IO.Out, res)
		}
		if len(res.Invalid) > 0 {
			// Done, but found problems.
			return &findingsError{msg: fmt.Sprintf("%d queue %s left untouched: fix %s, then decide again", len(res.Invalid), journal.Plural(len(res.Invalid), "item", "items"), project.PendingFile)}
		}
		return nil
	}
	reqs := []ceo.Request{opts.Req}
	if opts.Stdin {
		if reqs, err = ceo.ReadRequests(io.LimitReader(f.IO.In, 16<<20)); err != nil {
			return stdinError(err)
		}
		for i := range reqs {
			reqs[i] = reqs[i].Override(opts.Req)
		}
	}
	ins := make([]ceo.Input, len(reqs))
	for i, r := range reqs {
		if ins[i], err = r.Input(); err != nil {
			return opts.requestError(i, len(reqs), err)
		}
	}
	if opts.Request != "" {
		res, err := ceo.DecideRequest(ctx, ix, opts.Request, ins[0], copts)
		return opts.print(ctx, ix, []ceo.Result{res}, []error{err}, nil)
	}
	copts.AllOrNothing = true
	res, errs, err := ceo.DecideBatch(ctx, ix, ins, copts)
	return opts.print(ctx, ix, res, errs, err)
}

// requestError renders request i's error: with --stdin, in the JSON's own
// field names and with its place.
func (opts *decideOptions) requestError(i, n int, err error) error {
	if !opts.Stdin {
		return inputError(err)
	}
	if n > 1 {
		err = fmt.Errorf("request %d of %d (nothing written): %w", i+1, n, err)
	}
	return stdinError(err)
}

// print renders what decide did: each result, or the first request's error.
func (opts *decideOptions) print(ctx context.Context, ix *journal.Index, results []ceo.Result, errs []error, err error) error {
	f := opts.f
	if len(results) > 0 {
		printSyncReport(f.IO.ErrOut, results[0].Sync)
	}
	for _, r := range results {
		printWarnings(f.IO.ErrOut, r.Warnings)
	}
	if err != nil {
		return inputError(err)
	}
	for i, e := range errs {
		if e != nil {
			return opts.requestError(i, len(errs), e)
		}
	}
	for i := range results {
		if err := ceo.Similar(ctx, ix, &results[i], opts.Precedents); err != nil {
			return err
		}
		if results[i].Existing {
			fmt.Fprintf(f.IO.ErrOut, "orbit: request %s is already in the journal as %s; nothing written\n", results[i].RequestID, results[i].ID)
		}
	}
	if opts.JSON.on {
		if len(results) == 1 {
			return opts.JSON.write(f.IO.Out, results[0])
		}
		return opts.JSON.write(f.IO.Out, results)
	}
	for i, res := range results {
		if i > 0 {
			fmt.Fprintln(f.IO.Out)
		}
		report.Decided(f.IO.Out, res)
	}
	return nil
}

// stdinError renders an error about a request read from stdin in the JSON's
// own field names.
func stdinError(err error) error {
	if ceo.IsInput(err) {
		return &flagError{err: fmt.Errorf("stdin: %w", err)}
	}
	return fmt.Errorf("read stdin: %w", err)
}

// inputError turns a request that cannot be decided as given into a usage
// error (exit 2) naming the flag; other errors pass through.
func inputError(err error) error {
	var fe *journal.FieldError
	if errors.As(err, &fe) {
		return &flagError{err: errors.New(fe.Render(flagName(fe.Field)))}
	}
	if ceo.IsInput(err) {
		return &flagError{err: err}
	}
	return err
}

// flagName is the flag that sets a request field.
func flagName(field string) string {
	switch field {
	case "request_id":
		return "--key"
	}
	return "--" + strings.ReplaceAll(field, "_", "-")
}
