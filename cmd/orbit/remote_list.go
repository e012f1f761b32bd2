package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/remote"
	"github.com/orbit-loop/orbit/report"
)

type remoteListOptions struct {
	f    *Factory
	JSON jsonFlag
}

func newCmdRemoteList(f *Factory, runF func(*remoteListOptions) error) *cobra.Command {
	opts := &remoteListOptions{f: f}
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the hubs this project pushes to",
		Example: "  orbit remote list\n  orbit remote list --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return remoteListRun(opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, []string{"name", "url", "token_file"})
	return cmd
}

func remoteListRun(opts *remoteListOptions) error {
	f := opts.f
	p, err := f.Project()
	if err != nil {
		return err
	}
	rs, err := remote.List(p)
	if err != nil {
		return err
	}
	if rs == nil {
		rs = []remote.Remote{}
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, rs)
	}
	if len(rs) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no remote (orbit remote add NAME URL)")
		return nil
	}
	t := &report.Table{Header: []string{"NAME", "URL", "TOKEN"}}
	for _, r := range rs {
		tok := "ORBIT_TOKEN or --token-file"
		if r.TokenFile != "" {
			tok = r.TokenFile
		}
		t.Append(r.Name, r.URL, tok)
	}
	return t.Render(f.IO.Out, f.IO.OutTTY)
}
