package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
)

// Exit codes.
const (
	exitOK       = 0 // done
	exitError    = 1 // could not do it: the error says why
	exitUsage    = 2 // bad flags or arguments
	exitFindings = 3 // done, but found problems (verify findings, rejected import lines)
)

// flagError is a usage mistake: printed with a pointer to --help.
type flagError struct{ err error }

func (e *flagError) Error() string { return e.err.Error() }
func (e *flagError) Unwrap() error { return e.err }

func flagErrorf(format string, args ...any) error {
	return &flagError{err: fmt.Errorf(format, args...)}
}

// findingsError ends a command that completed but found problems it has
// already printed.
type findingsError struct{ msg string }

func (e *findingsError) Error() string { return e.msg }

// run executes the command line and maps the outcome to an exit code; every
// error is printed once, here. A command that finds the index damaged is
// healed: see recoverIndex.
func run(ctx context.Context, f *Factory, args []string) int {
	in := &replayReader{r: f.IO.In}
	f.IO.In = in
	writes := journal.Writes()
	cmd, err := execute(ctx, f, args)
	if db.IsCorrupt(err) {
		cmd, err = recoverIndex(ctx, f, args, err, journal.Writes() != writes, in)
	}
	return exitCode(f.IO.ErrOut, cmd, err)
}

func execute(ctx context.Context, f *Factory, args []string) (*cobra.Command, error) {
	root := newCmdRoot(f)
	root.SetArgs(joinJSONFields(root, args))
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	cmd, err := root.ExecuteContextC(ctx)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if cmd == nil {
		cmd = root
	}
	return cmd, err
}

// recoverIndex handles an index found damaged in the middle of a command
// (a page SQLite cannot read is only noticed when a query reaches it). The
// index is derived from the files, so it is removed. If the command had not
// written to any file yet, it runs again on a fresh index, which its sync
// rebuilds from the files. If it had, what it wrote stands (running it again
// would write it twice): the index is rebuilt now and the command succeeds
// with a note instead of its usual output.
func recoverIndex(ctx context.Context, f *Factory, args []string, cause error, wrote bool, in *replayReader) (*cobra.Command, error) {
	if err := f.dropIndex(cause); err != nil {
		return nil, err
	}
	if !wrote && in.replay() {
		return execute(ctx, f, args)
	}
	if _, err := f.Synced(ctx); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	fmt.Fprintln(f.IO.ErrOut, "orbit: what this command wrote to the journal stands; the index has been rebuilt (`orbit log --limit 5` shows the latest records)")
	return nil, nil
}

// dropIndex removes an index found damaged (cause), saying so: it is
// derived from the files, and the next sync rebuilds it. Without a project
// the cause stands.
func (f *Factory) dropIndex(cause error) error {
	f.Close()
	p, err := f.Project()
	if err != nil {
		return cause
	}
	fmt.Fprintf(f.IO.ErrOut, "orbit: %v\norbit: the index is derived from the files; removing it and rebuilding it\n", cause)
	return db.Remove(p.DB)
}

// replayReader remembers what a command read from stdin, so that the
// command can run again on the same input; past maxReplay bytes it cannot.
type replayReader struct {
	r        io.Reader
	buf      bytes.Buffer
	overflow bool
}

const maxReplay = 16 << 20

func (r *replayReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if !r.overflow {
		if r.buf.Len()+n > maxReplay {
			r.overflow = true
			r.buf = bytes.Buffer{}
		} else {
			r.buf.Write(p[:n])
		}
	}
	return n, err
}

// replay rewinds to the start of what was read; false when it cannot.
func (r *replayReader) replay() bool {
	if r.overflow {
		return false
	}
	r.r = io.MultiReader(bytes.NewReader(bytes.Clone(r.buf.Bytes())), r.r)
	r.buf.Reset()
	return true
}

func exitCode(w io.Writer, cmd *cobra.Command, err error) int {
	if err == nil {
		return exitOK
	}
	var fe *flagError
	var fd *findingsError
	switch {
	case errors.As(err, &fd):
		if fd.msg != "" {
			fmt.Fprintf(w, "orbit: %s\n", fd.msg)
		}
		return exitFindings
	case errors.As(err, &fe):
		fmt.Fprintf(w, "orbit: %s\n", err)
		fmt.Fprintf(w, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return exitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(w, "orbit: interrupted")
		return exitError
	default:
		fmt.Fprintf(w, "orbit: %s\n", err)
		return exitError
	}
}
