package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/migrations"
	"github.com/orbit-loop/orbit/report"
)

func newCmdMigrateStatus(f *Factory, runF func(*migrateOptions) error) *cobra.Command {
	opts := &migrateOptions{f: f}
	cmd := &cobra.Command{
		Use:     "status",
		Short:   "List the migrations and whether each is applied",
		Example: "  orbit migrate status\n  orbit migrate status --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return migrateStatusRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, migrateStatus{})
	return cmd
}

func migrateStatusRun(ctx context.Context, opts *migrateOptions) error {
	f := opts.f
	store, err := openUnmigrated(ctx, f)
	if err != nil {
		return err
	}
	defer store.Close()
	v, err := store.UserVersion(ctx)
	if err != nil {
		return err
	}
	st, err := store.Status(ctx)
	if err != nil {
		return err
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, migrateStatus{v, migrations.Version, st})
	}
	fmt.Fprintf(f.IO.ErrOut, "index schema v%d, binary schema v%d\n", v, migrations.Version)
	t := &report.Table{Header: []string{"VERSION", "MIGRATION", "STATE", "APPLIED AT"}}
	for _, m := range st {
		state, at := "pending", ""
		if m.Applied {
			state = "applied"
			if !m.AppliedAt.IsZero() {
				at = m.AppliedAt.UTC().Format("2006-01-02 15:04:05Z")
			}
		}
		t.Append(strconv.FormatInt(m.Version, 10), m.Name, state, at)
	}
	return t.Render(f.IO.Out, f.IO.OutTTY)
}

// migrateStatus is what `orbit migrate status --json` prints.
type migrateStatus struct {
	Index      int64                `json:"index_version"`
	Binary     int64                `json:"binary_version"`
	Migrations []db.MigrationStatus `json:"migrations"`
}
