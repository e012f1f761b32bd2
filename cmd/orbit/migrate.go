package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/db"
)

func newCmdMigrate(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Show or apply the index's schema migrations",
		Long: `The index schema is carried in the binary as goose migrations. Every command
migrates the index when its schema version differs from the binary's, so these
are for looking, or for migrating ahead of time.`,
		Example: `  orbit migrate status
  orbit migrate up`,
		Args: noArgs,
	}
	cmd.AddCommand(newCmdMigrateStatus(f, nil), newCmdMigrateUp(f, nil))
	return cmd
}

type migrateOptions struct {
	f    *Factory
	JSON jsonFlag
}

// openUnmigrated opens the index without migrating it.
func openUnmigrated(ctx context.Context, f *Factory) (*db.Store, error) {
	p, err := f.Project()
	if err != nil {
		return nil, err
	}
	return db.Open(ctx, p.DB, db.Options{NoMigrate: true})
}
