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
	// TLSCert and TLSKey serve HTTPS.
	TLSCert, TLSKey string
	// NewToken prints a fresh token and exits.
	NewToken bool
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

It binds 127.0.0.1:7777 by default, and then answers only requests whose
Host is localhost or a loopback address with its port (421 otherwise: a web
page cannot reach it by making its own name resolve to 127.0.0.1). Whether
it is on loopback is decided by the address it bound, not the name given.
Any other address needs --token (or ORBIT_TOKEN; at least 32 characters,
` + "`orbit serve --new-token`" + ` prints one), and then everything but /healthz and
the dashboard's static files needs it too. Write endpoints always need
"Authorization: Bearer <token>"; on loopback a token is generated. Open the
URL printed at start (it carries the token in its #fragment, which never
reaches the server): the dashboard sends it as a header and, off loopback,
trades it for a read-only HttpOnly session cookie for its event stream and
chart. Off loopback the token travels in clear unless --tls-cert and
--tls-key are given (or a reverse proxy terminates TLS in front of it).
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
			if opts.NewToken {
				tok, err := server.NewToken()
				if err != nil {
					return err
				}
				fmt.Fprintln(f.IO.Out, tok)
				return nil
			}
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
			host, _, _ := net.SplitHostPort(opts.Addr)
			if !server.IsLoopback(opts.Addr) && host != "localhost" && opts.Token == "" {
				return flagErrorf("--addr %s is not loopback: --token (or ORBIT_TOKEN) is required", opts.Addr)
			}
			if opts.Token != "" {
				if err := server.CheckToken(opts.Token); err != nil {
					return flagErrorf("--token: %v", err)
				}
			}
			if (opts.TLSCert == "") != (opts.TLSKey == "") {
				return flagErrorf("--tls-cert and --tls-key go together")
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
	cmd.Flags().StringVar(&opts.TLSCert, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key)")
	cmd.Flags().StringVar(&opts.TLSKey, "tls-key", "", "the certificate's private key (PEM)")
	cmd.Flags().BoolVar(&opts.NewToken, "new-token", false, "print a new random token (192 bits) and exit")
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
	// Listen first: whether the server is on loopback is the bound
	// address's to say, not the name's.
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	if !server.IsLoopback(addr) && opts.Token == "" {
		return fmt.Errorf("serve: --addr %s bound %s, which is not a loopback address: --token (or ORBIT_TOKEN) is required", opts.Addr, addr)
	}
	srv, err := server.New(ctx, ix, server.Config{Addr: addr, Token: opts.Token, Now: f.Now, Log: f.IO.ErrOut, PollInterval: opts.Poll,
		TLSCert: opts.TLSCert, TLSKey: opts.TLSKey})
	if err != nil {
		return err
	}
	defer srv.Close()
	scheme := "http"
	if opts.TLSCert != "" {
		scheme = "https"
	} else if !server.IsLoopback(addr) {
		fmt.Fprintln(f.IO.ErrOut, "orbit serve: warning: off loopback without --tls-cert/--tls-key, the token travels in clear (or put a TLS reverse proxy in front)")
	}
	fmt.Fprintf(f.IO.ErrOut, "orbit serve: %s on %s://%s/#token=%s\n", ix.Project.Root, scheme, addr, srv.Token())
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
