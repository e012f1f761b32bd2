// Command orbit is the governance journal of autonomous agent loops.
//
// This package holds cobra commands only: each parses its flags, calls the
// package that owns the work, and renders the answer.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, NewFactory(SystemIO()), os.Args[1:])
	stop()
	os.Exit(code)
}
