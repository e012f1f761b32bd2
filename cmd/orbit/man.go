//go:build man

package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// `make man` builds orbit with the man tag, which adds this hidden command:
// man pages generated from the command tree, so that they say what --help
// says. Without the tag the generator (go-md2man) is not linked into orbit.
func init() {
	extraCommands = append(extraCommands, func(f *Factory) *cobra.Command {
		dir := "man"
		cmd := &cobra.Command{
			Use:    "man",
			Short:  "Write man pages for every command to --dir",
			Hidden: true,
			Args:   noArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				root := cmd.Root()
				root.DisableAutoGenTag = true
				if err := doc.GenManTree(root, &doc.GenManHeader{Title: "ORBIT", Section: "1", Source: "orbit " + version()}, dir); err != nil {
					return err
				}
				fmt.Fprintf(f.IO.ErrOut, "man pages written to %s/\n", dir)
				return nil
			},
		}
		cmd.Flags().StringVar(&dir, "dir", dir, "where to write the pages")
		return cmd
	})
}
