package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/journal"
)

type importOptions struct {
	f      *Factory
	Files  []string
	DryRun bool
	JSON   jsonFlag
}

// importOutput is what `orbit import --json` prints.
type importOutput struct {
	DryRun   bool                  `json:"dry_run"`
	Files    []*journal.ImportFile `json:"files"`
	Problems []journal.Problem     `json:"problems"`
}

func newCmdImport(f *Factory, runF func(*importOptions) error) *cobra.Command {
	opts := &importOptions{f: f}
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Add the decisions of other JSONL journals to this project's journal",
		Long: `Append the decision records of other JSONL journals (the ORBIT CEO loop's format) to this
project's journal, under its lock, then index them.

Idempotent: a record whose id is already in the journal with the same content
is skipped; the same id with different content is a conflict and is not
appended. Invalid lines are reported by file:line and the valid lines still
import. Records pretty-printed over several lines are imported as one line.

Exit status 3 when any line was rejected or conflicted.`,
		Example: `  orbit import ../other-project/.claude/ceo-loop-decisions.jsonl
  orbit import --dry-run old.jsonl
  orbit import a.jsonl b.jsonl --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return flagErrorf("import needs at least one FILE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return importRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "check and report, write nothing")
	addJSONFlag(cmd, &opts.JSON, importOutput{})
	return cmd
}

func importRun(ctx context.Context, opts *importOptions) error {
	f := opts.f
	ix, err := f.Index(ctx)
	if err != nil {
		return err
	}
	rep, err := ix.Import(ctx, opts.Files, journal.ImportOptions{DryRun: opts.DryRun, Progress: f.progress("import")})
	printSyncReport(f.IO.ErrOut, rep.Sync)
	if err != nil {
		return err
	}
	var fail error
	if rep.Failed() {
		fail = &findingsError{msg: "import: some lines were not imported (see above)"}
	}
	if opts.JSON.on {
		problems := rep.Problems
		if problems == nil {
			problems = []journal.Problem{}
		}
		err := opts.JSON.write(f.IO.Out, importOutput{opts.DryRun, rep.Files, problems})
		if err != nil {
			return err
		}
		if fail != nil {
			return &findingsError{}
		}
		return nil
	}
	for i, p := range rep.Problems {
		if i == 50 {
			fmt.Fprintf(f.IO.ErrOut, "... and %d more\n", len(rep.Problems)-50)
			break
		}
		fmt.Fprintln(f.IO.ErrOut, p.Error())
	}
	verb := "appended"
	if opts.DryRun {
		verb = "would append"
	}
	for _, fr := range rep.Files {
		fmt.Fprintf(f.IO.Out, "%s: %s: %d %s, %d already present, %s, %s\n", fr.Path, count(fr.Records, "record", "records"),
			fr.Appended, verb, fr.Skipped, count(fr.Conflicts, "conflict", "conflicts"), count(fr.Rejected, "rejected line", "rejected lines"))
	}
	return fail
}
