package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/report"
)

func newCmdServeToken(f *Factory, serve *serveOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Make, list and revoke a hub's project tokens",
		Long: `A hub (orbit serve --store …) accepts its admin token and the tokens made
here: a push token pushes one project's journals and reads that project; a
read token reads one project, or every project with --project '*'. The hub
keeps a hash of each token, never the token: it is printed once.`,
		Example: `  orbit serve token create --store postgres://orbit@db/orbit --project k3x9… --scope push
  orbit serve token create --store sqlite:hub.db --project '*' --scope read --note dashboard
  orbit serve token list --store sqlite:hub.db
  orbit serve token revoke --store sqlite:hub.db 4f2a91c0d3e1`,
		Args: noArgs,
	}
	cmd.AddCommand(newCmdServeTokenCreate(f, serve, nil), newCmdServeTokenList(f, serve, nil), newCmdServeTokenRevoke(f, serve, nil))
	return cmd
}

type tokenOptions struct {
	f       *Factory
	serve   *serveOptions
	Project string
	Scope   string
	Note    string
	ID      string
	JSON    jsonFlag
}

// openHubStore opens the --store (or ORBIT_STORE) of a token command.
func (o *tokenOptions) openHubStore(ctx context.Context) (*hub.Store, error) {
	spec := o.serve.Store
	if spec == "" {
		spec = o.f.Getenv("ORBIT_STORE")
	}
	if spec == "" {
		return nil, flagErrorf("--store (or ORBIT_STORE) is required: the hub's store")
	}
	if _, _, err := hub.ParseSpec(spec); err != nil {
		return nil, flagErrorf("%v", err)
	}
	return hub.Open(ctx, spec, hub.Options{Conns: 1})
}

func newCmdServeTokenCreate(f *Factory, serve *serveOptions, runF func(*tokenOptions) error) *cobra.Command {
	opts := &tokenOptions{f: f, serve: serve}
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Make a token for a project and print it",
		Long: `Make a token for --project (its id, in its .claude/orbit-project.json) with
--scope push (push and read that project) or read (read it), and print it
on stdout, once. --project '*' with --scope read makes a token that reads
every project (a team's dashboard, orbit precedent --all-projects).`,
		Example: `  orbit serve token create --store sqlite:hub.db --project k3x9m2p7q4w8z5n1 --scope push > hub.token && chmod 600 hub.token`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Project == "" {
				return flagErrorf("--project is required")
			}
			if err := oneOf("scope", opts.Scope, []string{hub.ScopePush, hub.ScopeRead}); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			store, err := opts.openHubStore(cmd.Context())
			if err != nil {
				return err
			}
			defer store.Close()
			tok, err := store.CreateToken(cmd.Context(), opts.Project, opts.Scope, opts.Note, f.Now())
			if err != nil {
				return flagErrorf("%v", err)
			}
			fmt.Fprintln(f.IO.Out, tok)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Project, "project", "", "the project's id, or '*' (read scope only)")
	cmd.Flags().StringVar(&opts.Scope, "scope", hub.ScopePush, "push or read")
	cmd.Flags().StringVar(&opts.Note, "note", "", "what the token is for (shown by token list)")
	return cmd
}

func newCmdServeTokenList(f *Factory, serve *serveOptions, runF func(*tokenOptions) error) *cobra.Command {
	opts := &tokenOptions{f: f, serve: serve}
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List a hub's tokens (their ids, never the tokens)",
		Example: "  orbit serve token list --store sqlite:hub.db --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			store, err := opts.openHubStore(cmd.Context())
			if err != nil {
				return err
			}
			defer store.Close()
			ts, err := store.Tokens(cmd.Context())
			if err != nil {
				return err
			}
			if ts == nil {
				ts = []hub.TokenInfo{}
			}
			if opts.JSON.on {
				return opts.JSON.write(f.IO.Out, ts)
			}
			t := &report.Table{Header: []string{"ID", "PROJECT", "SCOPE", "CREATED", "NOTE"}}
			for _, tk := range ts {
				t.Append(tk.ID, tk.Project, tk.Scope, tk.CreatedAt, tk.Note)
			}
			return t.Render(f.IO.Out, f.IO.OutTTY)
		},
	}
	addJSONFlag(cmd, &opts.JSON, []string{"id", "project", "scope", "created_at", "note"})
	return cmd
}

func newCmdServeTokenRevoke(f *Factory, serve *serveOptions, runF func(*tokenOptions) error) *cobra.Command {
	opts := &tokenOptions{f: f, serve: serve}
	cmd := &cobra.Command{
		Use:     "revoke ID",
		Short:   "Revoke a token (by the id token list shows)",
		Example: "  orbit serve token revoke --store sqlite:hub.db 4f2a91c0d3e1",
		Args:    exactArgs(1, "a token ID (orbit serve token list)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			store, err := opts.openHubStore(cmd.Context())
			if err != nil {
				return err
			}
			defer store.Close()
			ok, err := store.RevokeToken(cmd.Context(), opts.ID)
			if err != nil {
				return flagErrorf("%v", err)
			}
			if !ok {
				return fmt.Errorf("no token %s (orbit serve token list)", opts.ID)
			}
			fmt.Fprintf(f.IO.ErrOut, "revoked token %s\n", opts.ID)
			return nil
		},
	}
	return cmd
}
