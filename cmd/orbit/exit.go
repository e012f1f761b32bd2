package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
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
// error is printed once, here.
func run(ctx context.Context, f *Factory, args []string) int {
	root := newCmdRoot(f)
	root.SetArgs(args)
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
	return exitCode(f.IO.ErrOut, cmd, err)
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
