package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/migrations"
	"github.com/orbit-loop/orbit/project"
)

type initOptions struct {
	f   *Factory
	Dir string
}

func newCmdInit(f *Factory, runF func(*initOptions) error) *cobra.Command {
	opts := &initOptions{f: f}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the journal and the index in this project",
		Long: `Create .claude/ (if absent), an empty decision journal and the index, in the
directory given by --root, else the working directory. Safe to run again: it
creates only what is missing and says what it found.`,
		Example: `  orbit init
  orbit init --root ~/src/my-agent-project`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = f.RootFlag
			if opts.Dir == "" {
				opts.Dir = f.Getenv("ORBIT_ROOT")
			}
			if opts.Dir == "" {
				wd, err := f.Getwd()
				if err != nil {
					return err
				}
				opts.Dir = wd
			}
			if runF != nil {
				return runF(opts)
			}
			return initRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func initRun(ctx context.Context, opts *initOptions) error {
	f := opts.f
	fi, err := os.Stat(opts.Dir)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("init: %s is not a directory", opts.Dir)
	}
	f.RootFlag = opts.Dir
	p, err := f.Project()
	if err != nil {
		return err
	}
	out := f.IO.Out
	fmt.Fprintf(out, "orbit project in %s\n", p.Root)
	report := func(created bool, what string) {
		verb := "exists "
		if created {
			verb = "created"
		}
		fmt.Fprintf(out, "  %s  %s\n", verb, what)
	}
	claude := p.Path(".claude")
	_, statErr := os.Stat(claude)
	if err := os.MkdirAll(claude, 0o755); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	report(errors.Is(statErr, os.ErrNotExist), ".claude/")
	created, err := createEmpty(p.Path(project.DecisionsFile))
	if err != nil {
		return err
	}
	report(created, project.DecisionsFile)
	_, statErr = os.Stat(p.DB)
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(p.Root, p.DB)
	if err != nil {
		rel = p.DB
	}
	counts, err := ix.Store.Counts(ctx)
	if err != nil {
		return err
	}
	report(errors.Is(statErr, os.ErrNotExist), fmt.Sprintf("%s (schema v%d, %d decisions indexed)", rel, migrations.Version, counts.Decisions))
	return nil
}

// createEmpty creates an empty file at path unless one exists; it never
// truncates.
func createEmpty(path string) (bool, error) {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("init: %w", err)
	}
	if err := fh.Close(); err != nil {
		return false, fmt.Errorf("init: %w", err)
	}
	return true, nil
}
