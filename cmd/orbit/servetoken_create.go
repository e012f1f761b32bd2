package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/hub"
)

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
