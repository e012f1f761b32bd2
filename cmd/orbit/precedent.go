package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/precedent"
	"github.com/orbit-loop/orbit/report"
)

type precedentOptions struct {
	f                *Factory
	Query            string
	Category         string
	K                int
	IncludeIncorrect bool
	ExcludeIncorrect bool
	JSON             jsonFlag
}

func newCmdPrecedent(f *Factory, runF func(*precedentOptions) error) *cobra.Command {
	opts := &precedentOptions{f: f}
	cmd := &cobra.Command{
		Use:   "precedent QUERY",
		Short: "Find the past decisions most similar to QUERY, with their outcomes",
		Long: `Find the past decisions most similar to QUERY over the whole journal, ranked
by full-text relevance (bm25 over what was decided, the request's description,
the reason and the next action, with stemming: "migrate" meets "migration"),
a boost for the same --category, and recency as the tie-breaker.

Each hit shows its current outcome. Decisions proved INCORRECT are marked
AVOID with the evidence of their verdict (seed 000: see them, do not repeat
them), ranked by relevance like the others; when none of the best hits is
one, the best failed precedent scoring at least 60% of the top hit takes the
last place. --include-incorrect ranks them like the rest without that,
--exclude-incorrect drops them. Any text is a valid query: quotes, AND/OR/NOT, *, :, parentheses and
10 KB sentences are searched as plain words. With QUERY "-", it is read from
stdin.`,
		Example: `  orbit precedent "SQLite vs Postgres for state storage" --category architecture
  orbit precedent "rotate the signing key" -k 5 --exclude-incorrect
  echo "$LAST_MESSAGE" | orbit precedent - --json=id,outcome,input`,
		Args: exactArgs(1, "a QUERY (or - for stdin)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Query = args[0]
			if opts.K < 1 {
				return flagErrorf("-k %d: must be between 1 and %d", opts.K, precedent.MaxK)
			}
			if opts.IncludeIncorrect && opts.ExcludeIncorrect {
				return flagErrorf("--include-incorrect and --exclude-incorrect cannot both be given")
			}
			if err := (precedent.Options{K: opts.K, Category: opts.Category}).Check(); err != nil {
				return &flagError{err: err}
			}
			if runF != nil {
				return runF(opts)
			}
			return precedentRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Category, "category", "", "boost decisions of this category")
	cmd.Flags().IntVarP(&opts.K, "k", "k", 3, "how many")
	cmd.Flags().BoolVar(&opts.IncludeIncorrect, "include-incorrect", false, "rank decisions proved INCORRECT like the others, without keeping a place for one")
	cmd.Flags().BoolVar(&opts.ExcludeIncorrect, "exclude-incorrect", false, "leave out decisions proved INCORRECT")
	addJSONFlag(cmd, &opts.JSON, []precedent.Hit{})
	return cmd
}

// maxQueryBytes bounds a query read from stdin.
const maxQueryBytes = 64 << 10

func precedentRun(ctx context.Context, opts *precedentOptions) error {
	f := opts.f
	q := opts.Query
	if q == "-" {
		data, err := io.ReadAll(io.LimitReader(f.IO.In, maxQueryBytes))
		if err != nil {
			return fmt.Errorf("read query from stdin: %w", err)
		}
		q = string(data)
	}
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	popts := precedent.Options{K: opts.K, Category: opts.Category}
	switch {
	case opts.IncludeIncorrect:
		popts.Incorrect = precedent.Include
	case opts.ExcludeIncorrect:
		popts.Incorrect = precedent.Exclude
	}
	hits, err := precedent.Search(ctx, ix.Store, q, popts)
	if err != nil {
		return err
	}
	if hits == nil {
		hits = []precedent.Hit{}
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, hits)
	}
	if len(hits) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no similar past decisions")
		return nil
	}
	t := &report.Table{Header: []string{"ID", "ITER", "CATEGORY", "DECISION", "OUTCOME", "SCORE", "INPUT"}}
	for _, h := range hits {
		outcome := h.Outcome
		if h.Avoid {
			outcome += " (AVOID)"
		}
		t.Append(h.ID, strconv.FormatInt(h.Iteration, 10), h.Category, h.Decision.Decision, outcome, strconv.FormatFloat(h.Score, 'f', 2, 64), h.Input)
	}
	if err := t.Render(f.IO.Out, f.IO.OutTTY); err != nil {
		return err
	}
	if f.IO.OutTTY {
		for _, h := range hits {
			if r := strings.TrimSpace(h.Reason); r != "" {
				fmt.Fprintf(f.IO.Out, "%s: %s\n", h.ID, r)
			}
			if h.Avoid && h.Evidence != "" {
				fmt.Fprintf(f.IO.Out, "%s AVOID: %s\n", h.ID, strings.TrimSpace(h.Evidence))
			}
		}
	}
	return nil
}
