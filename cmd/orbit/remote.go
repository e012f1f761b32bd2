package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/remote"
	"github.com/orbit-loop/orbit/report"
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
