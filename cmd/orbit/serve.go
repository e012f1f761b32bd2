package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/server"
)

type serveOptions struct {
	f     *Factory
	Addr  string
	Token string
	Poll  time.Duration
	// ready, when set (tests), receives the listening address.
	ready chan<- string
}

func newCmdServe(f *Factory, runF func(*serveOptions) error) *cobra.Command {
	opts := &serveOptions{f: f}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the API, the dashboard and metrics for this project",
		Long: `Serve, from this project's index:
  /                     the dashboard (trust, charts, queue, stale decisions,
                        decisions with precedent search, loops)
  /api/v1/...           the JSON API (GET /api/v1/openapi.json describes it);
                        POST /api/v1/decisions and /api/v1/retro do what
                        orbit decide and orbit retro do
  /metrics              Prometheus metrics
  /healthz, /readyz     health checks

It binds 127.0.0.1:7777 by default. Any other address needs --token (or
ORBIT_TOKEN), and then /api/v1/ and /metrics need it too (the dashboard
page itself and /healthz, /readyz do not). Write endpoints always need
"Authorization: Bearer <token>"; on loopback a token is generated. Open the
URL printed at start (it carries the token in its #fragment): the dashboard
sends it as a header, and for its reads as a same-site cookie.
The journal files are polled and synced (the same single ingest path as the
CLI), so lines other tools append show up live. Decisions posted together
are recorded in one append (group commit), each answered once it is durable.
SIGINT or SIGTERM shuts down gracefully.`,
		Example: `  orbit serve
  orbit serve --addr 0.0.0.0:7777 --token "$ORBIT_TOKEN"
  curl -s localhost:7777/api/v1/trust | jq .level`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Token == "" {
				opts.Token = f.Getenv("ORBIT_TOKEN")
			}
			if _, _, err := net.SplitHostPort(opts.Addr); err != nil {
				return flagErrorf("--addr %q: want host:port", opts.Addr)
			}
			if !server.IsLoopback(opts.Addr) && opts.Token == "" {
				return flagErrorf("--addr %s is not loopback: --token (or ORBIT_TOKEN) is required", opts.Addr)
			}
			if opts.Poll < 50*time.Millisecond {
				return flagErrorf("--poll %s: must be at least 50ms", opts.Poll)
			}
			if runF != nil {
				return runF(opts)
			}
			return serveRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", "127.0.0.1:7777", "listen address")
	cmd.Flags().StringVar(&opts.Token, "token", "", "bearer token for writes (off loopback, for the API and /metrics too); env ORBIT_TOKEN")
	cmd.Flags().DurationVar(&opts.Poll, "poll", 500*time.Millisecond, "how often to check the journal files for new lines")
	return cmd
}

func serveRun(ctx context.Context, opts *serveOptions) error {
	f := opts.f
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	srv, err := server.New(ctx, ix, server.Config{Addr: opts.Addr, Token: opts.Token, Now: f.Now, Log: f.IO.ErrOut, PollInterval: opts.Poll})
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	addr := ln.Addr().String()
	fmt.Fprintf(f.IO.ErrOut, "orbit serve: %s on http://%s/#token=%s\n", ix.Project.Root, addr, srv.Token())
	fmt.Fprintf(f.IO.ErrOut, "write endpoints need: Authorization: Bearer %s\n", srv.Token())
	if opts.ready != nil {
		opts.ready <- addr
	}
	if err := srv.Run(ctx, ln); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(f.IO.ErrOut, "orbit serve: stopped")
	return nil
}
