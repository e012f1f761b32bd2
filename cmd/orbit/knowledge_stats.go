package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/knowledge"
	"github.com/orbit-loop/orbit/report"
)

type knowledgeStatsOptions struct {
	f    *Factory
	JSON jsonFlag
}

func newCmdKnowledgeStats(f *Factory, runF func(*knowledgeStatsOptions) error) *cobra.Command {
	opts := &knowledgeStatsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "How much the knowledge is used, and which entries cannot work",
		Long: `Summarise the indexed knowledge: entries per kind, error entries with a
usable regex, without a pattern (full-text only), with a regex RE2 cannot
run (full-text only), with an invalid regex or one that matches any text; matches recorded (and not exported yet); the
entries never matched, the unusable ones with their file:line and why, and
the most matched.`,
		Example: `  orbit knowledge stats
  orbit knowledge stats --json=never_matched,unusable`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return knowledgeStatsRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, knowledge.Stats{})
	return cmd
}

func knowledgeStatsRun(ctx context.Context, opts *knowledgeStatsOptions) error {
	f := opts.f
	k, err := knowledgeSynced(ctx, f)
	if err != nil {
		return err
	}
	s, err := k.Stats(ctx)
	if err != nil {
		return err
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, s)
	}
	n := func(v int) string { return strconv.Itoa(v) }
	t := &report.Table{Header: []string{"FIGURE", "VALUE"}}
	t.Append("entries", n(s.Entries))
	t.Append("error entries", n(s.Errors))
	t.Append("pattern entries", n(s.Patterns))
	t.Append("errors with a usable regex", n(s.Regex))
	t.Append("errors without a pattern (full-text only)", n(s.NoPattern))
	t.Append("errors with a regex RE2 cannot run (full-text only)", n(s.Unsupported))
	t.Append("errors with an invalid regex", n(s.Invalid))
	t.Append("errors whose regex matches any text", n(s.MatchesAll))
	t.Append("matches recorded", strconv.FormatInt(s.Hits, 10))
	t.Append("matches not exported yet", strconv.FormatInt(s.Pending, 10))
	t.Append("occurrences (files + not exported)", strconv.FormatInt(s.Occurrences, 10))
	t.Append("errors never matched", n(len(s.NeverMatched)))
	if err := t.Render(f.IO.Out, f.IO.OutTTY); err != nil {
		return err
	}
	if !f.IO.OutTTY {
		return nil
	}
	if len(s.Unusable) > 0 {
		fmt.Fprintln(f.IO.Out, "\nNo usable regex:")
		u := &report.Table{Header: []string{"ID", "WHERE", "STATE", "WHY"}, MaxCell: 100}
		for _, b := range s.Unusable {
			u.Append(b.ID, fmt.Sprintf("%s:%d", b.File, b.Line), b.State, b.Why)
		}
		if err := u.Render(f.IO.Out, true); err != nil {
			return err
		}
	}
	if len(s.Top) > 0 {
		fmt.Fprintln(f.IO.Out, "\nMost matched:")
		u := &report.Table{Header: []string{"ID", "WHERE", "MATCHES", "OCCURRENCES"}}
		for _, b := range s.Top {
			u.Append(b.ID, fmt.Sprintf("%s:%d", b.File, b.Line), strconv.FormatInt(b.Hits, 10), strconv.FormatInt(b.Occurrences, 10))
		}
		if err := u.Render(f.IO.Out, true); err != nil {
			return err
		}
	}
	var broken []string
	for _, fs := range s.Files {
		if fs.Error != "" {
			broken = append(broken, fs.Error)
		}
	}
	for _, b := range broken {
		fmt.Fprintf(f.IO.Out, "\nunreadable: %s\n", b)
	}
	return nil
}
