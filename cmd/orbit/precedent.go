package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/precedent"
	"github.com/orbit-loop/orbit/remote"
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
	// Remote asks a hub instead of this project's index; AllProjects asks
	// it about every project the token reads.
	Remote      string
	AllProjects bool
	TokenFile   string
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
AVOID with the evidence of their verdict (the ORBIT CEO loop: see them, do not repeat
them), ranked by relevance like the others; when none of the best hits is
one, the best failed precedent scoring at least 60% of the top hit takes the
last place. --include-incorrect ranks them like the rest without that,
--exclude-incorrect drops them. Any text is a valid query: quotes, AND/OR/NOT, *, :, parentheses and
10 KB sentences are searched as plain words. With QUERY "-", it is read from
stdin.

With --remote NAME it asks that hub (orbit remote list) instead of this
project's index: about this project, or with --all-projects about every
project the token reads (a fleet read token), each hit with its project.
The token comes from --token-file, ORBIT_TOKEN or the remote's token file.`,
		Example: `  orbit precedent "SQLite vs Postgres for state storage" --category architecture
  orbit precedent "rotate the signing key" -k 5 --exclude-incorrect
  echo "$LAST_MESSAGE" | orbit precedent - --json=id,outcome,input
  orbit precedent --remote hub --all-projects "roll back the billing release"`,
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
			if opts.AllProjects && opts.Remote == "" {
				return flagErrorf("--all-projects goes with --remote: a project's own index holds one project")
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
	cmd.Flags().StringVar(&opts.Remote, "remote", "", "ask this hub (a remote's name) instead of the project's index")
	cmd.Flags().BoolVar(&opts.AllProjects, "all-projects", false, "with --remote: search every project the token reads")
	cmd.Flags().StringVar(&opts.TokenFile, "token-file", "", "with --remote: read the token from this file (mode 0600); else ORBIT_TOKEN")
	addJSONFlag(cmd, &opts.JSON, []precedent.Hit{}, []hub.PrecedentHit{})
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
	if opts.Remote != "" {
		return precedentRemote(ctx, opts, q)
	}
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	// Piped, the table shows no more than a brief hit holds: the hits'
	// rows are not read in full (JSON and a terminal show more).
	popts := precedent.Options{K: opts.K, Category: opts.Category, Brief: !opts.JSON.on && !f.IO.OutTTY}
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
	return renderPrecedents(f, hits, nil)
}

// precedentRemote asks a hub.
func precedentRemote(ctx context.Context, opts *precedentOptions, q string) error {
	f := opts.f
	t, err := pushTargetOf(f, opts.Remote, opts.TokenFile)
	if err != nil {
		return err
	}
	pq := remote.PrecedentQuery{Project: t.id.ID, Query: q, Category: opts.Category, K: opts.K}
	if opts.AllProjects {
		pq.Project = hub.AllProjects
	}
	switch {
	case opts.IncludeIncorrect:
		pq.Incorrect = "include"
	case opts.ExcludeIncorrect:
		pq.Incorrect = "exclude"
	}
	hits, err := t.client.Precedent(ctx, pq)
	if err != nil {
		return fmt.Errorf("precedent on %s (%s): %w", t.remote.Name, t.remote.URL, err)
	}
	if hits == nil {
		hits = []hub.PrecedentHit{}
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, hits)
	}
	plain := make([]precedent.Hit, len(hits))
	projects := make([]string, len(hits))
	for i, h := range hits {
		plain[i], projects[i] = h.Hit, h.Project
	}
	if !opts.AllProjects {
		projects = nil
	}
	return renderPrecedents(f, plain, projects)
}

// renderPrecedents prints hits as a table (with each hit's project when
// projects is set), and on a terminal each hit's reason.
func renderPrecedents(f *Factory, hits []precedent.Hit, projects []string) error {
	if len(hits) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no similar past decisions")
		return nil
	}
	header := []string{"ID", "ITER", "CATEGORY", "DECISION", "OUTCOME", "SCORE", "INPUT"}
	if projects != nil {
		header = append([]string{"PROJECT"}, header...)
	}
	t := &report.Table{Header: header}
	for i, h := range hits {
		outcome := h.Outcome
		if h.Avoid {
			outcome += " (AVOID)"
		}
		row := []string{h.ID, strconv.FormatInt(h.Iteration, 10), h.Category, h.Decision.Decision, outcome, strconv.FormatFloat(h.Score, 'f', 2, 64), h.Input}
		if projects != nil {
			row = append([]string{projects[i]}, row...)
		}
		t.Append(row...)
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
