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
	MCP    bool
	DryRun bool
}

// claudeFile is a Claude Code file orbit registers itself in, merging its
// entries into what is there.
type claudeFile struct {
	rel     string // relative to the project root
	what    string // what orbit adds, for the messages
	install func(path string, old []byte, bin string) (out []byte, changes, warnings []string, err error)
	// warnedOff: a warning without a change means orbit's entry was not
	// added (its place is taken), rather than a remark on the others.
	warnedOff bool
}

// claudeFiles are the files init --claude (and --mcp) merge into.
func (o *initOptions) claudeFiles() []claudeFile {
	files := []claudeFile{{rel: hook.SettingsFile, what: "orbit's hooks", install: hook.Install}}
	if o.MCP {
		files = append(files, claudeFile{rel: hook.MCPFile, what: "orbit's MCP server", install: hook.InstallMCP, warnedOff: true})
	}
	return files
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
hooks in .claude/settings.json (orbit hook stop, with a timeout), keeping
every other setting and hook you have; it prints the change as a diff, warns
about other blocking Stop hooks (two race), and changes nothing when orbit's
hooks are already there. With --mcp too, register orbit's MCP server (orbit
mcp) in the project's .mcp.json the same way, beside the servers already
there. --dry-run prints the diffs and writes nothing.`,
		Example: `  orbit init
  orbit init --root ~/src/my-agent-project
  orbit init --claude --dry-run
  orbit init --claude
  orbit init --claude --mcp`,
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
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "with --claude: print the changes to settings.json (and .mcp.json), write nothing")
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
	if opts.MCP && !opts.Claude {
		return flagErrorf("--mcp goes with --claude")
	}
	if opts.DryRun {
		return installClaude(opts, opts.Dir, true)
	}
	if opts.Claude {
		// A file orbit cannot merge into fails before anything is created.
		for _, cf := range opts.claudeFiles() {
			path := filepath.Join(opts.Dir, cf.rel)
			old, err := hook.ReadSettings(opts.Dir, path)
			if err == nil {
				_, _, _, err = cf.install(path, old, orbitBinary())
			}
			if err != nil {
				return fmt.Errorf("init --claude: %w", err)
			}
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
		return installClaude(opts, p.Root, false)
	}
	return nil
}

// installClaude registers orbit in the project's Claude Code files and
// prints what changed, as diffs.
func installClaude(opts *initOptions, root string, dryRun bool) error {
	f := opts.f
	for _, cf := range opts.claudeFiles() {
		path := filepath.Join(root, cf.rel)
		old, err := hook.ReadSettings(root, path)
		if err != nil {
			return fmt.Errorf("init --claude: %w", err)
		}
		out, changes, warnings, err := cf.install(path, old, orbitBinary())
		if err != nil {
			return fmt.Errorf("init --claude: %w", err)
		}
		for _, w := range warnings {
			fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", w)
		}
		if len(changes) == 0 {
			if !cf.warnedOff || len(warnings) == 0 {
				fmt.Fprintf(f.IO.Out, "  exists   %s: %s registered\n", cf.rel, cf.what)
			}
			continue
		}
		report.Diff(f.IO.Out, cf.rel, cf.rel+" (with "+cf.what+")", string(old), string(out))
		if dryRun {
			continue
		}
		if err := journal.WriteFileAtomic(root, path, out, 0o644); err != nil {
			return err
		}
		for _, c := range changes {
			fmt.Fprintf(f.IO.Out, "  updated  %s: %s\n", cf.rel, c)
		}
	}
	for _, w := range hook.PluginStopHooks(root, f.Getenv("HOME")) {
		fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", w)
	}
	if dryRun {
		fmt.Fprintln(f.IO.ErrOut, "dry run: nothing written")
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
