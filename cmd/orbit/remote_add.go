package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/remote"
)

type remoteAddOptions struct {
	f         *Factory
	Name, URL string
	TokenFile string
}

func newCmdRemoteAdd(f *Factory, runF func(*remoteAddOptions) error) *cobra.Command {
	opts := &remoteAddOptions{f: f}
	cmd := &cobra.Command{
		Use:   "add NAME URL",
		Short: "Add a hub to push to",
		Long: `Add a hub to push to. URL is the hub's base URL (http or https), without
credentials: a token never goes in a URL, a command line or a journal. With
--token-file, pushes to this remote read the token from that file, which
must be readable by its owner only (chmod 600); without it, from
ORBIT_TOKEN or the --token-file given to orbit push.`,
		Example: `  orbit remote add hub https://orbit.example.com --token-file ~/.config/orbit/hub.token
  orbit remote add local http://127.0.0.1:7777`,
		Args: exactArgs(2, "NAME and URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.URL = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return remoteAddRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.TokenFile, "token-file", "", "read the token from this file (mode 0600) when pushing")
	return cmd
}

func remoteAddRun(opts *remoteAddOptions) error {
	p, err := opts.f.Project()
	if err != nil {
		return err
	}
	if err := remote.Add(p, remote.Remote{Name: opts.Name, URL: opts.URL, TokenFile: opts.TokenFile}); err != nil {
		return flagErrorf("%v", err)
	}
	fmt.Fprintf(opts.f.IO.ErrOut, "added remote %s (%s)\n", opts.Name, opts.URL)
	return nil
}
