package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/server"
)

type serveOptions struct {
	f     *Factory
	Addr  string
	Token string
	Poll  time.Duration
	// Store, when set, serves a hub over it instead of this project.
	Store string
	Conns int
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
SIGINT or SIGTERM shuts down gracefully.

With --store (or ORBIT_STORE), it serves a hub instead: every project pushed
to the store with orbit push, the same read API with ?project=ID (or * for
the views across projects) and GET /api/v1/projects, and the dashboard over
them. postgres://… for a team (several orbit serve processes may share one
database), sqlite:PATH for a small team on one machine. Every API request
needs a token: the --token given here (admin: every project), or one made
by orbit serve token create for a project (push or read) or for every
project (read).`,
		Example: `  orbit serve
  orbit serve --addr 0.0.0.0:7777 --token "$ORBIT_TOKEN"
  curl -s localhost:7777/api/v1/trust | jq .level
  ORBIT_STORE=postgres://orbit@db:5432/orbit orbit serve --addr 0.0.0.0:7777   # a hub
  orbit serve --store sqlite:/srv/orbit/hub.db                                # a hub on one machine`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Token == "" {
				opts.Token = f.Getenv("ORBIT_TOKEN")
			}
			if opts.Store == "" {
				opts.Store = f.Getenv("ORBIT_STORE")
			}
			if opts.Store != "" {
				if _, _, err := hub.ParseSpec(opts.Store); err != nil {
					return flagErrorf("%v", err)
				}
				if _, _, err := net.SplitHostPort(opts.Addr); err != nil {
					return flagErrorf("--addr %q: want host:port", opts.Addr)
				}
				if runF != nil {
					return runF(opts)
				}
				return hubServeRun(cmd.Context(), opts)
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
	cmd.PersistentFlags().StringVar(&opts.Store, "store", "", "serve a hub over this store, not this project: postgres://USER@HOST:PORT/DB or sqlite:PATH; env ORBIT_STORE")
	cmd.Flags().IntVar(&opts.Conns, "conns", 10, "with --store postgres://…: this process's connections to PostgreSQL")
	cmd.AddCommand(newCmdServeToken(f, opts))
	return cmd
}

// hubServeRun serves a hub: every project pushed to the store, read and
// pushed with per-project tokens.
func hubServeRun(ctx context.Context, opts *serveOptions) error {
	f := opts.f
	store, err := hub.Open(ctx, opts.Store, hub.Options{Conns: opts.Conns})
	if err != nil {
		return err
	}
	defer store.Close()
	srv := hub.NewServer(store, hub.Config{Admin: opts.Token, Now: f.Now, Log: f.IO.ErrOut})
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	addr := ln.Addr().String()
	fmt.Fprintf(f.IO.ErrOut, "orbit serve: hub over %s on http://%s/\n", store.Name, addr)
	if opts.Token == "" {
		fmt.Fprintln(f.IO.ErrOut, "no admin token (--token or ORBIT_TOKEN): only project tokens are accepted (orbit serve token create)")
	}
	if opts.ready != nil {
		opts.ready <- addr
	}
	if err := srv.Run(ctx, ln); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(f.IO.ErrOut, "orbit serve: stopped")
	return nil
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
