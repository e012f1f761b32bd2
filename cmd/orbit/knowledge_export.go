package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/knowledge"
)

type knowledgeExportOptions struct {
	f      *Factory
	DryRun bool
	JSON   jsonFlag
}

func newCmdKnowledgeExport(f *Factory, runF func(*knowledgeExportOptions) error) *cobra.Command {
	opts := &knowledgeExportOptions{f: f}
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the match counts back to errors.json (occurrences, last_seen)",
		Long: `Write the matches recorded since the last export into each indexed
errors.json: an entry's occurrences grows by its matches and last_seen
becomes the day of the latest. errors.json is the one file orbit rewrites
(Conductor treats it as a registry): atomically, changing only those values
(a missing field is added after the entry's last one, laid out like it), so
every other field, the key order, the indentation and the file's shape stay.
The file as it was is kept beside it as errors.json.bak. A file without new
matches is not touched: byte-identical.`,
		Example: `  orbit knowledge export
  orbit knowledge export --dry-run
  orbit knowledge export --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return knowledgeExportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would change, write nothing")
	addJSONFlag(cmd, &opts.JSON, knowledge.ExportReport{})
	return cmd
}

func knowledgeExportRun(ctx context.Context, opts *knowledgeExportOptions) error {
	f := opts.f
	k, err := knowledgeIndex(ctx, f)
	if err != nil {
		return err
	}
	rep, err := k.Export(ctx, knowledge.ExportOptions{DryRun: opts.DryRun})
	printKnowledgeSync(f.IO.ErrOut, rep.Sync)
	if err != nil {
		return err
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, rep)
	}
	if len(rep.Files) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no errors.json indexed (run `orbit knowledge import`)")
		return nil
	}
	for _, ef := range rep.Files {
		switch {
		case ef.Error != "":
			fmt.Fprintf(f.IO.Out, "%s: not exported: the file cannot be read (its matches wait for the next export)\n", ef.Path)
		case ef.Hits == 0 && ef.Orphans == 0:
			fmt.Fprintf(f.IO.Out, "%s: unchanged (no matches since the last export)\n", ef.Path)
		case opts.DryRun:
			fmt.Fprintf(f.IO.Out, "%s: would update %d entries with %d matches\n", ef.Path, ef.Updated, ef.Hits)
		case ef.Unchanged:
			fmt.Fprintf(f.IO.Out, "%s: unchanged\n", ef.Path)
		default:
			fmt.Fprintf(f.IO.Out, "%s: updated %d entries with %d matches (backup: %s)\n", ef.Path, ef.Updated, ef.Hits, ef.Backup)
		}
		if ef.Orphans > 0 {
			fmt.Fprintf(f.IO.ErrOut, "orbit: %s: %d matches of entries no longer in the file were dropped\n", ef.Path, ef.Orphans)
		}
	}
	return nil
}
