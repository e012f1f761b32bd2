package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/remote"
)

type remoteRemoveOptions struct {
	f    *Factory
	Name string
}

func newCmdRemoteRemove(f *Factory, runF func(*remoteRemoveOptions) error) *cobra.Command {
	opts := &remoteRemoveOptions{f: f}
	cmd := &cobra.Command{
		Use:     "remove NAME",
		Short:   "Forget a hub (what it holds stays there)",
		Example: "  orbit remote remove hub",
		Args:    exactArgs(1, "the NAME of a remote"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			p, err := f.Project()
			if err != nil {
				return err
			}
			if err := remote.Remove(p, opts.Name); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "removed remote %s\n", opts.Name)
			return nil
		},
	}
	return cmd
}
