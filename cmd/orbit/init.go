package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/hook"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/migrations"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/report"
)

type initOptions struct {
	f      *Factory
	Dir    string
	Claude bool
	DryRun bool
}

func newCmdInit(f *Factory, runF func(*initOptions) error) *cobra.Command {
	opts := &initOptions{f: f}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the journal and the index in this project",
		Long: `Create .claude/ (if absent), the project's identity (.claude/orbit-project.json:
a random id that names the project on a hub, whatever directory or machine it
is checked out in; commit it with the project), an empty decision journal
and the index, in the directory given by --root, else the working directory.
Safe to run again: it creates only what is missing and says what it found.

With --claude, also register orbit's Stop and SubagentStop hooks in
.claude/settings.json (orbit hook stop, with a timeout), keeping every other
setting and hook you have; it prints the change as a diff, warns about other
blocking Stop hooks (two race), and changes nothing when orbit's hooks are
already there. --dry-run prints the diff and writes nothing.`,
		Example: `  orbit init
  orbit init --root ~/src/my-agent-project
  orbit init --claude --dry-run
  orbit init --claude`,
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
	cmd.Flags().BoolVar(&opts.Claude, "claude", false, "also register orbit's hooks in .claude/settings.json")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "with --claude: print the change to settings.json, write nothing")
	return cmd
}

func initRun(ctx context.Context, opts *initOptions) error {
	f := opts.f
	fi, err := os.Stat(opts.Dir)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("init: %s is not a directory", opts.Dir)
	}
	if opts.DryRun && !opts.Claude {
		return flagErrorf("--dry-run goes with --claude")
	}
	if opts.DryRun {
		return installHooks(opts.Dir, f, true)
	}
	if opts.Claude {
		// A settings file orbit cannot merge into fails before anything is
		// created.
		path := filepath.Join(opts.Dir, hook.SettingsFile)
		old, err := hook.ReadSettings(opts.Dir, path)
		if err == nil {
			_, _, _, err = hook.Install(path, old, orbitBinary())
		}
		if err != nil {
			return fmt.Errorf("init --claude: %w", err)
		}
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
	_, statErr := os.Lstat(claude)
	d, err := project.OpenDir(p.Root, claude, true)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	d.Close()
	report(errors.Is(statErr, os.ErrNotExist), ".claude/")
	id, created, err := p.EnsureIdentity(f.Now())
	if err != nil {
		return err
	}
	report(created, fmt.Sprintf("%s (project id %s)", project.IdentityFile, id.ID))
	created, err = createEmpty(p.Root, project.DecisionsFile)
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
	if opts.Claude {
		return installHooks(p.Root, f, false)
	}
	return nil
}

// installHooks registers orbit's hooks in the project's settings.json and
// prints what changed, as a diff.
func installHooks(root string, f *Factory, dryRun bool) error {
	path := filepath.Join(root, hook.SettingsFile)
	old, err := hook.ReadSettings(root, path)
	if err != nil {
		return fmt.Errorf("init --claude: %w", err)
	}
	out, changes, warnings, err := hook.Install(path, old, orbitBinary())
	if err != nil {
		return fmt.Errorf("init --claude: %w", err)
	}
	for _, w := range warnings {
		fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", w)
	}
	if len(changes) == 0 {
		fmt.Fprintf(f.IO.Out, "  exists   %s: orbit's hooks are registered\n", hook.SettingsFile)
		return nil
	}
	report.Diff(f.IO.Out, hook.SettingsFile, hook.SettingsFile+" (with orbit's hooks)", string(old), string(out))
	if dryRun {
		fmt.Fprintln(f.IO.ErrOut, "dry run: nothing written")
		return nil
	}
	if err := journal.WriteFileAtomic(root, path, out, 0o644); err != nil {
		return err
	}
	for _, c := range changes {
		fmt.Fprintf(f.IO.Out, "  updated  %s: %s\n", hook.SettingsFile, c)
	}
	return nil
}

// orbitBinary is how hooks should run this orbit: "orbit" when that is the
// one on PATH, else this binary's absolute path (not a `go run` temporary).
func orbitBinary() string {
	self, err := os.Executable()
	if err != nil {
		return "orbit"
	}
	self, _ = filepath.EvalSymlinks(self)
	if onPath, err := exec.LookPath("orbit"); err == nil {
		if p, err := filepath.EvalSymlinks(onPath); err == nil && p == self {
			return "orbit"
		}
	}
	if strings.Contains(self, "go-build") || strings.ContainsAny(self, " \t'\"") {
		return "orbit"
	}
	return self
}

// createEmpty creates an empty file at path (relative to root) unless one
// exists; it never truncates.
func createEmpty(root, path string) (bool, error) {
	fh, err := project.OpenFile(root, path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
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
