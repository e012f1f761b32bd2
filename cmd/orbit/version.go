package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/migrations"
)

// versionInfo is what `orbit version --json` prints.
type versionInfo struct {
	Version string `json:"version"`
	// Commit and CommitTime are the source revision the binary was built
	// from (null when built outside a repository).
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified"`
	Go         string `json:"go"`
	// Schema is the index schema version the binary writes.
	Schema int64 `json:"schema"`
}

type versionOptions struct {
	f    *Factory
	JSON jsonFlag
}

func newCmdVersion(f *Factory, runF func(*versionOptions) error) *cobra.Command {
	opts := &versionOptions{f: f}
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print orbit's version, the revision it was built from, and its index schema",
		Example: "  orbit version\n  orbit version --json=version,commit",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			v := buildVersion()
			if opts.JSON.on {
				return opts.JSON.write(f.IO.Out, v)
			}
			fmt.Fprintf(f.IO.Out, "orbit %s", v.Version)
			if v.Commit != "" {
				dirty := ""
				if v.Modified {
					dirty = ", modified"
				}
				fmt.Fprintf(f.IO.Out, " (%s, %s%s)", v.Commit, v.CommitTime, dirty)
			}
			fmt.Fprintf(f.IO.Out, " %s, index schema v%d\n", v.Go, v.Schema)
			return nil
		},
	}
	addJSONFlag(cmd, &opts.JSON, versionInfo{})
	return cmd
}

func buildVersion() versionInfo {
	v := versionInfo{Version: version(), Go: runtime.Version(), Schema: migrations.Version}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.time":
				v.CommitTime = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	return v
}
