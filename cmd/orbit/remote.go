package main

import (
	"github.com/spf13/cobra"
)

func newCmdRemote(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "remote",
		Short: "Name the hubs this project pushes to",
		Long: `A remote is a hub (orbit serve --store …) this project's journals are pushed
to with orbit push. Remotes are kept in .claude/orbit-remotes.json: a name, a
URL, and where the token is read from, never the token itself. The token
comes from --token-file (a file with mode 0600) or ORBIT_TOKEN when pushing,
or from the file given to remote add.`,
		Example: `  orbit remote add hub https://orbit.example.com --token-file ~/.config/orbit/hub.token
  orbit remote list
  orbit remote remove hub`,
		Args: noArgs,
	}
	cmd.AddCommand(newCmdRemoteAdd(f, nil), newCmdRemoteList(f, nil), newCmdRemoteRemove(f, nil))
	return cmd
}
