package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"golang.org/x/term"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// IOStreams are a command's standard streams and whether each is a terminal.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	InTTY  bool
	OutTTY bool
	ErrTTY bool
	// Width is the terminal's width in columns when Out is one (0:
	// unknown): tables are cut to fit it.
	Width int
}

// SystemIO returns the process's streams.
func SystemIO() *IOStreams {
	io := &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		InTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		OutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		ErrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
	if io.OutTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
			io.Width = w
		} else if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
			io.Width = n
		}
	}
	return io
}

// Factory hands commands their dependencies, lazily: nothing is opened until
// a command asks for it.
type Factory struct {
	IO     *IOStreams
	Now    func() time.Time
	Getwd  func() (string, error)
	Getenv func(string) string

	// Set by the persistent flags.
	RootFlag string
	DBFlag   string
	// SafeDirs are the --safe-directory flags: roots trusted whoever owns
	// them (beside ORBIT_SAFE_DIRECTORY).
	SafeDirs []string

	store *db.Store
}

// NewFactory returns a factory over the given streams and the real clock,
// working directory and environment.
func NewFactory(io *IOStreams) *Factory {
	return &Factory{IO: io, Now: time.Now, Getwd: os.Getwd, Getenv: os.Getenv}
}

// Owner is the ownership check every project passes: the current user's,
// with the roots --safe-directory and ORBIT_SAFE_DIRECTORY trust.
func (f *Factory) Owner() project.Owner {
	return project.CurrentOwner(f.Getenv(project.SafeDirectoryEnv), f.SafeDirs)
}

// Project finds the project: --root or ORBIT_ROOT, else the nearest
// directory up from the working directory that holds .orbit/ or a .claude/
// with orbit's files (project.Find). A project another user controls is
// refused (Owner).
func (f *Factory) Project() (project.Project, error) {
	root := f.RootFlag
	if root == "" {
		root = f.Getenv("ORBIT_ROOT")
	}
	dbPath := f.DBFlag
	if dbPath == "" {
		dbPath = f.Getenv("ORBIT_DB")
	}
	if root == "" {
		wd, err := f.Getwd()
		if err != nil {
			return project.Project{}, fmt.Errorf("find project: %w", err)
		}
		if root, err = project.Find(wd); err != nil {
			return project.Project{}, err
		}
	} else if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return project.Project{}, fmt.Errorf("--root %s: not a directory", root)
	}
	if err := f.Owner().Check(root); err != nil {
		return project.Project{}, err
	}
	return project.New(root, dbPath)
}

// Index opens the project's index, migrating it when the schema differs,
// and rebuilding it from the files when SQLite cannot read it.
func (f *Factory) Index(ctx context.Context) (*journal.Index, error) {
	p, err := f.Project()
	if err != nil {
		return nil, err
	}
	if f.store == nil {
		if err := p.CheckIndex(); err != nil {
			return nil, err
		}
		if f.store, err = f.openStore(ctx, p.DB); err != nil {
			return nil, err
		}
	}
	ix := journal.NewIndex(f.store, p)
	ix.Now = f.Now
	return ix, nil
}

func (f *Factory) openStore(ctx context.Context, path string) (*db.Store, error) {
	store, err := db.Open(ctx, path, db.Options{})
	if errors.Is(err, db.ErrUnreadable) {
		fmt.Fprintf(f.IO.ErrOut, "orbit: %v\norbit: the index is derived from the journal; rebuilding it\n", err)
		if err := db.Remove(path); err != nil {
			return nil, err
		}
		store, err = db.Open(ctx, path, db.Options{})
	}
	return store, err
}

// Synced opens the index and syncs it with the files, reporting on stderr
// what the sync found.
func (f *Factory) Synced(ctx context.Context) (*journal.Index, error) {
	ix, err := f.Index(ctx)
	if err != nil {
		return nil, err
	}
	rep, err := ix.Sync(ctx, journal.SyncOptions{Progress: f.progress("sync")})
	printSyncReport(f.IO.ErrOut, rep)
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// Close closes what the factory opened.
func (f *Factory) Close() error {
	if f.store == nil {
		return nil
	}
	err := f.store.Close()
	f.store = nil
	return err
}

// maxListed bounds how many problems one sync prints.
const maxListed = 10

// printSyncReport tells the user, once, what a sync found: rewritten files
// loudly, each rejected line (up to a bound), torn tails, and a count of
// remarks.
// printWarnings writes what went wrong after a record was durably written;
// the command still succeeds.
func printWarnings(w io.Writer, warnings []string) {
	for _, m := range warnings {
		fmt.Fprintf(w, "orbit: warning: %s\n", m)
	}
}

func printSyncReport(w io.Writer, rep journal.SyncReport) {
	for _, p := range rep.Rewritten {
		fmt.Fprintf(w, "orbit: %s\n", p.Error())
	}
	var errs, warns []journal.Problem
	for _, p := range rep.Problems {
		if p.Severity == journal.SevError {
			errs = append(errs, p)
		} else {
			warns = append(warns, p)
		}
	}
	printErrors(w, errs, "; line kept in the file, not indexed", "rejected lines (`orbit verify` lists them)")
	for _, p := range rep.Torn {
		fmt.Fprintf(w, "orbit: %s\n", p.Error())
	}
	printFirstWarning(w, warns, " (`orbit verify` lists them)")
}

// printErrors writes one line per error, suffix after each, the first
// maxListed of them, then how many more (named by more).
func printErrors[P error](w io.Writer, errs []P, suffix, more string) {
	for i, p := range errs {
		if i == maxListed {
			fmt.Fprintf(w, "orbit: and %d more %s\n", len(errs)-maxListed, more)
			return
		}
		fmt.Fprintf(w, "orbit: %s%s\n", p.Error(), suffix)
	}
}

// printFirstWarning writes the one warning, or how many there are and the
// first, then hint.
func printFirstWarning[P error](w io.Writer, warns []P, hint string) {
	switch {
	case len(warns) == 1:
		fmt.Fprintf(w, "orbit: %s\n", warns[0].Error())
	case len(warns) > 1:
		fmt.Fprintf(w, "orbit: %d warnings, first %s%s\n", len(warns), warns[0].Error(), hint)
	}
}
