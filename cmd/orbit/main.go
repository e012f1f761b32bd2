// Command orbit is the governance journal of autonomous agent loops.
//
// This package holds cobra commands only: each parses its flags, calls the
// package that owns the work, and renders the answer.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// signalGrace is how long a command has, after SIGINT or SIGTERM, to end on
// its cancelled context before the process exits anyway: a signal always
// ends orbit, even one blocked in a system call.
const signalGrace = 3 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		select {
		case <-time.After(signalGrace):
			fmt.Fprintln(os.Stderr, "orbit: interrupted")
			os.Exit(exitError)
		case <-done:
		}
	}()
	code := run(ctx, NewFactory(SystemIO()), os.Args[1:])
	close(done)
	stop()
	os.Exit(code)
}
