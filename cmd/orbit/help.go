package main

import (
	"github.com/spf13/cobra"
)

// newCmdHelp is cobra's help command, except that an unknown topic is a
// usage error rather than a line on stdout and exit 0.
func newCmdHelp() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help provides help for any command in the application.\nSimply type orbit help [path to command] for full details.",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil {
				return flagErrorf("%v", err)
			}
			if len(rest) > 0 {
				// Find stops at the deepest known command: the rest names
				// a subcommand it does not have.
				return unknownSubcommand(cmd, rest)
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	}
}
