package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/report"
)

type exportOptions struct {
	f        *Factory
	Format   string
	Out      string
	Category string
}

var exportFormats = []string{"jsonl", "csv", "md"}

func newCmdExport(f *Factory, runF func(*exportOptions) error) *cobra.Command {
	opts := &exportOptions{f: f}
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the whole journal as JSONL, CSV or markdown",
		Long: `Write every indexed decision, in journal order.

jsonl gives back each record exactly as it was read: field order, spacing and
fields orbit does not know are kept, so exporting an imported journal gives
its lines back byte for byte (a record pretty-printed over several lines comes
out compacted onto one). csv has one column per field plus the current
outcome; md is a table for a pull request or a report.

With --out the file is written atomically (temp file, fsync, rename).`,
		Example: `  orbit export > backup.jsonl
  orbit export --format csv --out decisions.csv
  orbit export --format md --category architecture`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := oneOf("format", opts.Format, exportFormats); err != nil {
				return err
			}
			if err := oneOf("category", opts.Category, journal.Categories); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return exportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "jsonl", "jsonl, csv or md")
	cmd.Flags().StringVarP(&opts.Out, "out", "o", "", "write to this file instead of standard output")
	cmd.Flags().StringVar(&opts.Category, "category", "", "only this category")
	return cmd
}

func exportRun(ctx context.Context, opts *exportOptions) error {
	f := opts.f
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	w := f.IO.Out
	var out *journal.AtomicFile
	if opts.Out != "" {
		if out, err = createOutput(ix.Project.Root, opts.Out); err != nil {
			return err
		}
		defer out.Abort()
		w = out
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	n, err := exportTo(ctx, ix.Store, opts, bw)
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if out != nil {
		if err := out.Commit(); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "exported %d decisions to %s\n", n, opts.Out)
	}
	return nil
}

func exportTo(ctx context.Context, store *db.Store, opts *exportOptions, w io.Writer) (int, error) {
	filter := db.DecisionFilter{Category: opts.Category}
	switch opts.Format {
	case "csv":
		cw := report.NewCSVWriter(w)
		n := 0
		err := store.EachDecision(ctx, filter, func(d *db.DecisionRow) error {
			n++
			return cw.Write(journal.ViewOf(d))
		})
		if err != nil {
			return n, err
		}
		return n, cw.Flush()
	case "md":
		var ds []journal.DecisionView
		err := store.EachDecision(ctx, filter, func(d *db.DecisionRow) error {
			ds = append(ds, journal.ViewOf(d))
			return nil
		})
		if err != nil {
			return 0, err
		}
		return len(ds), report.DecisionsMarkdown(w, ds)
	default:
		return journal.ExportJSONL(ctx, store, filter, w)
	}
}

// createOutput starts replacing the file an --out flag names (relative to
// the working directory), as every file under the project is written.
func createOutput(root, path string) (*journal.AtomicFile, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return journal.CreateAtomic(root, abs, 0o644)
}
