package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/knowledge"
	"github.com/orbit-loop/orbit/report"
)

type knowledgeMatchOptions struct {
	f        *Factory
	Text     string
	Stdin    bool
	K        int
	NoRecord bool
	JSON     jsonFlag
}

func newCmdKnowledgeMatch(f *Factory, runF func(*knowledgeMatchOptions) error) *cobra.Command {
	opts := &knowledgeMatchOptions{f: f}
	cmd := &cobra.Command{
		Use:   `match ["ERROR TEXT" | -]`,
		Short: "The known solutions for an error, best first",
		Long: `Find the known solutions for an error text (an argument, or stdin when the
argument is "-" or absent). First the entries whose regex matches the text,
compiled as the seed's lookup does (case-insensitive) but with Go's RE2, so
that no pattern can take more than linear time: the most specific regex
first (the most literal characters it requires), then the most seen, then file
order. Then, for entries without a usable regex (and patterns.md entries),
full-text relevance (bm25) of their symptom, problem and solution.

Each regex match is recorded in .claude/orbit-knowledge.jsonl and counts as
an occurrence of the entry (` + "`orbit knowledge export`" + ` writes the counts back to
errors.json); --no-record looks without counting.`,
		Example: `  orbit knowledge match "Error: Cannot find module 'react-dom/client'"
  npm run build 2>&1 | tail -20 | orbit knowledge match -k 3
  orbit knowledge match --json=id,solution,code_fix "$ERROR" --no-record`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return flagErrorf(`expected one ERROR TEXT (quote it) or "-", got %d arguments`, len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.K < 1 || opts.K > knowledge.MaxK {
				return flagErrorf("-k %d: must be between 1 and %d", opts.K, knowledge.MaxK)
			}
			if len(args) == 0 || args[0] == "-" {
				if len(args) == 0 && f.IO.InTTY {
					return flagErrorf(`give the ERROR TEXT as an argument, or pipe it to stdin`)
				}
				opts.Stdin = true
			} else {
				opts.Text = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return knowledgeMatchRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.K, "k", "k", 5, "how many solutions")
	cmd.Flags().BoolVar(&opts.NoRecord, "no-record", false, "do not count the matches as occurrences")
	addJSONFlag(cmd, &opts.JSON, []knowledge.Match{})
	return cmd
}

func knowledgeMatchRun(ctx context.Context, opts *knowledgeMatchOptions) error {
	f := opts.f
	text := opts.Text
	if opts.Stdin {
		data, err := io.ReadAll(io.LimitReader(f.IO.In, knowledge.MaxTextBytes))
		if err != nil {
			return fmt.Errorf("read the error text from stdin: %w", err)
		}
		text = string(data)
	}
	if err := knowledge.CheckMatch(text, knowledge.MatchOptions{K: opts.K}); err != nil {
		return &flagError{err: err}
	}
	k, err := knowledgeSynced(ctx, f)
	if err != nil {
		return err
	}
	ms, err := k.Match(ctx, text, knowledge.MatchOptions{K: opts.K, Record: !opts.NoRecord})
	if err != nil {
		return err
	}
	if ms == nil {
		ms = []knowledge.Match{}
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, ms)
	}
	if len(ms) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no known solution")
		return nil
	}
	t := &report.Table{Header: []string{"#", "MATCH", "SCORE", "ID", "WHERE", "SEEN", "SOLUTION"}}
	for _, m := range ms {
		t.Append(strconv.Itoa(m.Rank), m.Via, strconv.FormatFloat(m.Score, 'f', 2, 64), m.Key, fmt.Sprintf("%s:%d", m.File, m.Line),
			strconv.FormatInt(m.Occurrences, 10), m.Solution)
	}
	if err := t.Render(f.IO.Out, f.IO.OutTTY); err != nil {
		return err
	}
	if f.IO.OutTTY {
		for _, m := range ms {
			if strings.TrimSpace(m.CodeFix) != "" {
				fmt.Fprintf(f.IO.Out, "%s code fix:\n%s\n", m.Key, strings.TrimRight(m.CodeFix, "\n"))
			}
		}
	}
	return nil
}
