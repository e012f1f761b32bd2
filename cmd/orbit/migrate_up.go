package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/migrations"
)

func newCmdMigrateUp(f *Factory, runF func(*migrateOptions) error) *cobra.Command {
	opts := &migrateOptions{f: f}
	cmd := &cobra.Command{
		Use:     "up",
		Short:   "Apply pending migrations",
		Example: "  orbit migrate up",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return migrateUpRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func migrateUpRun(ctx context.Context, opts *migrateOptions) error {
	f := opts.f
	store, err := openUnmigrated(ctx, f)
	if err != nil {
		return err
	}
	defer store.Close()
	applied, err := store.Migrate(ctx)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintf(f.IO.Out, "index schema is current (v%d)\n", migrations.Version)
		return nil
	}
	for _, m := range applied {
		fmt.Fprintf(f.IO.Out, "applied %s\n", m.Name)
	}
	fmt.Fprintf(f.IO.Out, "index schema is now v%d\n", migrations.Version)
	return nil
}
