package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/report"
)

type loopListOptions struct {
	f         *Factory
	Framework string
	Active    bool
	JSON      jsonFlag
}

func newCmdLoopList(f *Factory, runF func(*loopListOptions) error) *cobra.Command {
	opts := &loopListOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Every loop in the project, of every framework, in one table",
		Long: `Find and read, in place and read-only, the loops of every framework in the
project: Citadel (.planning/loops/*.json, .planning/daemon.json), CCW
(.workflow/.loop/*.json with their task files), Cavekit (.cavekit/),
Conductor (conductor/tracks/*/metadata.json) and the ORBIT loop
(.claude/ceo-loop-state.json). Each status is mapped to Citadel's shared stop
vocabulary (the README's table says how), beside the framework's own word.

Real files drift from their schemas: values are shown as they are, and what
is inconsistent (a loop marked complete whose .loop.json is still present, an
iteration past its cap, a stale lock) is flagged. A file that cannot be read
is reported on stderr and the exit status is 3; nothing crashes the list.

Reading also records, in orbit's loop event journal, each loop seen for the
first time and each status that changed since the last look, so a loop's
history survives any later rewrite of its file.`,
		Example: `  orbit loop list
  orbit loop list --framework ccw --active
  orbit loop list --json=framework,id,status,warnings`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Framework != "" && !slices.Contains(loop.Frameworks(), opts.Framework) {
				return flagErrorf("--framework %q is not allowed (allowed: %s)", opts.Framework, strings.Join(loop.Frameworks(), ", "))
			}
			if runF != nil {
				return runF(opts)
			}
			return loopListRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Framework, "framework", "", "only this framework's loops")
	cmd.Flags().BoolVar(&opts.Active, "active", false, "only loops that have not stopped")
	addJSONFlag(cmd, &opts.JSON, []loop.View{})
	return cmd
}

func loopListRun(ctx context.Context, opts *loopListOptions) error {
	f := opts.f
	_, s, err := scanLoops(ctx, f)
	if err != nil {
		return err
	}
	views := make([]loop.View, 0, len(s.Loops))
	for _, v := range s.Loops {
		if (opts.Framework == "" || v.Framework == opts.Framework) && (!opts.Active || !loop.IsStopped(v.Status)) {
			views = append(views, v)
		}
	}
	if opts.JSON.on {
		if err := opts.JSON.write(f.IO.Out, views); err != nil {
			return err
		}
		return problemsError(s)
	}
	if len(views) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no loops found")
		return problemsError(s)
	}
	t := &report.Table{Header: []string{"FRAMEWORK", "ID", "TITLE", "STATUS", "NATIVE", "ITER", "UPDATED", "BUDGET", "!"}}
	for _, v := range views {
		flags := ""
		if len(v.Warnings) > 0 {
			flags = strconv.Itoa(len(v.Warnings))
		}
		t.Append(v.Framework, v.ID, v.Title, v.Status, v.NativeStatus, v.IterationText(), v.UpdatedAt, v.BudgetText(), flags)
	}
	if err := t.Render(f.IO.Out, f.IO.OutTTY); err != nil {
		return err
	}
	if f.IO.OutTTY {
		for _, v := range views {
			for _, w := range v.Warnings {
				fmt.Fprintf(f.IO.Out, "! %s: %s\n", v.Key(), w)
			}
		}
	}
	return problemsError(s)
}
