package main

import (
	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/report"
)

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
