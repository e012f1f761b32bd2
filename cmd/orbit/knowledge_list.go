package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/knowledge"
	"github.com/orbit-loop/orbit/report"
)

type knowledgeListOptions struct {
	f            *Factory
	Kind         string
	Unusable     bool
	NeverMatched bool
	JSON         jsonFlag
}

func newCmdKnowledgeList(f *Factory, runF func(*knowledgeListOptions) error) *cobra.Command {
	opts := &knowledgeListOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the indexed known errors and patterns",
		Long: `List the entries of the indexed knowledge files in file order: their id,
where they are, whether their regex is usable (ok; none: full-text only;
unsupported: valid JavaScript RE2 cannot run, full-text only; invalid;
matches_all), how often they were seen (the file's occurrences
plus the matches recorded since the last export) and their solution.`,
		Example: `  orbit knowledge list
  orbit knowledge list --kind error --unusable
  orbit knowledge list --never-matched --json=id,file,line,pattern`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := oneOf("kind", opts.Kind, []string{knowledge.KindError, knowledge.KindPattern}); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return knowledgeListRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Kind, "kind", "", "only error (errors.json) or pattern (patterns.md) entries")
	cmd.Flags().BoolVar(&opts.Unusable, "unusable", false, "only error entries without a usable regex")
	cmd.Flags().BoolVar(&opts.NeverMatched, "never-matched", false, "only error entries orbit never matched")
	addJSONFlag(cmd, &opts.JSON, []knowledge.Record{})
	return cmd
}

func knowledgeListRun(ctx context.Context, opts *knowledgeListOptions) error {
	f := opts.f
	k, err := knowledgeSynced(ctx, f)
	if err != nil {
		return err
	}
	rs, err := k.List(ctx, knowledge.Filter{Kind: opts.Kind, Unusable: opts.Unusable, NeverMatched: opts.NeverMatched})
	if err != nil {
		return err
	}
	if rs == nil {
		rs = []knowledge.Record{}
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, rs)
	}
	if len(rs) == 0 {
		if f.IO.OutTTY {
			fmt.Fprintln(f.IO.Out, "no entries")
		}
		return nil
	}
	t := &report.Table{Header: []string{"ID", "WHERE", "KIND", "REGEX", "SEEN", "LAST SEEN", "PATTERN / NAME", "SOLUTION"}}
	for _, r := range rs {
		what := r.Pattern
		if what == "" {
			what = r.Name
		}
		t.Append(r.Key, fmt.Sprintf("%s:%d", r.File, r.Line), r.Kind, r.PatternState, strconv.FormatInt(r.Occurrences, 10), r.LastSeen, what, r.Solution)
	}
	return t.Render(f.IO.Out, f.IO.OutTTY)
}
