package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

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
