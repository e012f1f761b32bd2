package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/journal"
)

type rebuildOptions struct {
	f    *Factory
	JSON jsonFlag
}

func newCmdRebuild(f *Factory, runF func(*rebuildOptions) error) *cobra.Command {
	opts := &rebuildOptions{f: f}
	cmd := &cobra.Command{
		Use:   "rebuild",
		Short: "Drop the index and rebuild it from the journal files",
		Long: `Delete the index (.claude/orbit.db and its -wal and -shm files) and build it
again from the journal files: the decisions and their outcomes, the loops'
histories, the knowledge counts. The files are the truth, so nothing is
lost: every answer after a rebuild is the same as before it.`,
		Example: `  orbit rebuild
  orbit rebuild --db /tmp/orbit.db --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return rebuildRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, syncResult{})
	return cmd
}

func rebuildRun(ctx context.Context, opts *rebuildOptions) error {
	f := opts.f
	p, err := f.Project()
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	unlock, err := flock.Path(ctx, p.Root, p.DB+".lock")
	if err != nil {
		return err
	}
	err = db.Remove(p.DB)
	unlock()
	if err != nil {
		return err
	}
	ix, err := f.Index(ctx)
	if err != nil {
		return err
	}
	rep, err := ix.Sync(ctx, journal.SyncOptions{Progress: f.progress("rebuild")})
	if !opts.JSON.on {
		printSyncReport(f.IO.ErrOut, rep)
	}
	if err != nil {
		return err
	}
	return printSyncResult(ctx, f, ix, rep, &opts.JSON, "rebuilt")
}
