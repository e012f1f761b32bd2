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
	"github.com/orbit-loop/orbit/migrations"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/report"
)

type initOptions struct {
	f              *Factory
	Dir            string
	Claude         bool
	MCP            bool
	Local          bool
	ReplaceCEOHook bool
	Uninstall      bool
	DryRun         bool
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

With --claude, also register orbit's Stop, SubagentStop and SessionStart
hooks (orbit hook stop, with a timeout) in .claude/settings.json, or in
.claude/settings.local.json with --local (yours alone, not committed),
keeping every other setting and hook as written; an event orbit's hook is
registered for in either file gets no second one. A Stop hook that still runs
the ORBIT CEO loop's ceo-loop-stop.sh is refused with the command to run:
--replace-ceo-hook puts orbit's in its place (two blocking Stop hooks race,
and both would advance the iteration). orbit's derived files (the index, its
locks, the hook log, backups) are added to .claude/.gitignore, after your
lines. With --mcp too, orbit's MCP server is registered in .mcp.json beside
the servers there. One line per file says what was done; --dry-run prints
the diffs and writes nothing. --uninstall takes out exactly what --claude
put in (and puts a replaced hook back), and removes a file left empty.`,
		Example: `  orbit init
  orbit init --root ~/src/my-agent-project
  orbit init --claude --dry-run
  orbit init --claude
  orbit init --claude --local --mcp
  orbit init --claude --replace-ceo-hook
  orbit init --claude --uninstall`,
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
	cmd.Flags().BoolVar(&opts.MCP, "mcp", false, "with --claude: also register orbit's MCP server in .mcp.json")
	cmd.Flags().BoolVar(&opts.Local, "local", false, "with --claude: register the hooks in .claude/settings.local.json (not committed)")
	cmd.Flags().BoolVar(&opts.ReplaceCEOHook, "replace-ceo-hook", false, "with --claude: replace a Stop hook that runs the ORBIT CEO loop's ceo-loop-stop.sh by orbit's")
	cmd.Flags().BoolVar(&opts.Uninstall, "uninstall", false, "with --claude: take out what init --claude put in, and put a replaced hook back")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "with --claude: print the changes as diffs, write nothing")
	return cmd
}

func initRun(ctx context.Context, opts *initOptions) error {
	f := opts.f
	fi, err := os.Stat(opts.Dir)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("init: %s is not a directory", opts.Dir)
	}
	for _, fl := range []struct {
		set  bool
		name string
	}{{opts.DryRun, "--dry-run"}, {opts.MCP, "--mcp"}, {opts.Local, "--local"}, {opts.ReplaceCEOHook, "--replace-ceo-hook"}, {opts.Uninstall, "--uninstall"}} {
		if fl.set && !opts.Claude {
			return flagErrorf("%s goes with --claude", fl.name)
		}
	}
	if opts.Uninstall && (opts.MCP || opts.Local || opts.ReplaceCEOHook) {
		return flagErrorf("--uninstall takes out everything --claude put in: no --mcp, --local or --replace-ceo-hook")
	}
	if opts.Uninstall {
		set, err := hook.PlanUninstall(opts.Dir)
		if err != nil {
			return fmt.Errorf("init --claude --uninstall: %w", err)
		}
		if len(set.Changes) == 0 {
			fmt.Fprintln(f.IO.Out, "nothing of orbit's in .claude/settings.json, .claude/settings.local.json, .mcp.json or .claude/.gitignore")
		}
		return applySetup(opts, opts.Dir, set)
	}
	var set *hook.Setup
	if opts.Claude {
		// Planned first: a file orbit cannot merge into, or the loop's own
		// Stop hook, fails before anything is created.
		var err error
		set, err = hook.PlanInstall(hook.SetupOptions{Root: opts.Dir, Bin: orbitBinary(), Local: opts.Local, MCP: opts.MCP,
			ReplaceCEOHook: opts.ReplaceCEOHook}, f.Getenv("HOME"))
		if err != nil {
			return fmt.Errorf("init --claude: %w", err)
		}
		if opts.DryRun {
			return applySetup(opts, opts.Dir, set)
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
		return applySetup(opts, p.Root, set)
	}
	return nil
}

// applySetup writes what init --claude (or --uninstall) changes and says
// so in one line per file; with --dry-run it prints the diffs instead.
func applySetup(opts *initOptions, root string, set *hook.Setup) error {
	f := opts.f
	for _, w := range set.Warnings {
		fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", w)
	}
	for _, e := range set.Exists {
		fmt.Fprintf(f.IO.Out, "  exists   %s\n", e)
	}
	if opts.DryRun {
		for _, c := range set.Changes {
			report.Diff(f.IO.Out, c.Rel, c.Rel+" ("+strings.Join(c.What, "; ")+")", string(c.Old), string(c.New))
		}
		fmt.Fprintln(f.IO.ErrOut, "dry run: nothing written")
		return nil
	}
	if err := set.Apply(root); err != nil {
		return fmt.Errorf("init --claude: %w", err)
	}
	for _, c := range set.Changes {
		verb := "updated"
		switch {
		case c.Remove:
			verb = "removed"
		case c.Created:
			verb = "created"
		}
		fmt.Fprintf(f.IO.Out, "  %s  %s: %s\n", verb, c.Rel, strings.Join(c.What, "; "))
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
