package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/report"
)

type loopShowOptions struct {
	f    *Factory
	ID   string
	JSON jsonFlag
}

func newCmdLoopShow(f *Factory, runF func(*loopShowOptions) error) *cobra.Command {
	opts := &loopShowOptions{f: f}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "One loop of any framework, with its history",
		Long: `Show one loop: its status (shared word and the framework's own), counters,
budget, files, what orbit flags as inconsistent, the runs a Citadel record
holds, and the history orbit's loop event journal keeps (starts, plans, runs, stops,
pauses, resumes, status changes seen). ID is the loop's id, framework:id when
two frameworks share it, or any unique prefix.`,
		Example: `  orbit loop show orbit
  orbit loop show ccw:loop-v2-20260122-abc123
  orbit loop show foreground-loop-true --json=status,history`,
		Args: exactArgs(1, "a loop ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return loopShowRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, loop.View{})
	return cmd
}

func loopShowRun(ctx context.Context, opts *loopShowOptions) error {
	f := opts.f
	h, s, err := scanLoops(ctx, f)
	if err != nil {
		return err
	}
	v, err := findLoop(s, opts.ID, "")
	if err != nil {
		return err
	}
	if v.History, err = h.Of(ctx, v.Framework, v.ID); err != nil {
		return err
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, v)
	}
	printLoop(f.IO.Out, f.IO.OutTTY, v)
	return nil
}

func printLoop(w io.Writer, tty bool, v loop.View) {
	fmt.Fprintf(w, "%s %s: %s (%s: %s)\n", v.Framework, v.ID, v.Status, v.Framework, orDash(v.NativeStatus))
	fmt.Fprintf(w, "title: %s\n", v.Title)
	fmt.Fprintf(w, "path: %s\n", v.Path)
	if it := v.IterationText(); it != "" {
		fmt.Fprintf(w, "iteration: %s\n", it)
	}
	fmt.Fprintf(w, "updated: %s\n", orDash(v.UpdatedAt))
	if b := v.BudgetText(); b != "" {
		fmt.Fprintf(w, "budget: %s\n", b)
	}
	fmt.Fprintf(w, "controls: %s\n", orDash(strings.Join(v.Controls, ", ")))
	for _, d := range v.Details {
		fmt.Fprintf(w, "%s: %s\n", d.Name, d.Value)
	}
	fmt.Fprintf(w, "files: %s\n", strings.Join(v.Files, ", "))
	if len(v.Warnings) > 0 {
		fmt.Fprintln(w, "\nflagged:")
		for _, x := range v.Warnings {
			fmt.Fprintf(w, "  ! %s\n", x)
		}
	}
	if len(v.Runs) > 0 {
		fmt.Fprintln(w, "\nruns:")
		t := &report.Table{Header: []string{"ATTEMPT", "STATUS", "SUMMARY", "COMMAND", "EXIT", "STARTED", "COMPLETED"}}
		for _, r := range v.Runs {
			cmd := r.Command
			if r.Verifier != "" {
				cmd = "verify: " + r.Verifier
			}
			t.Append(r.Attempt, r.Status, r.Summary, cmd, r.ExitCode, r.StartedAt, r.CompletedAt)
		}
		t.Render(w, tty)
	}
	fmt.Fprintln(w, "\nhistory:")
	if len(v.History) == 0 {
		fmt.Fprintln(w, "  (none recorded)")
		return
	}
	t := &report.Table{Header: []string{"LINE", "AT", "EVENT", "STATUS", "DETAIL"}}
	for _, e := range v.History {
		t.Append(strconv.FormatInt(e.Line, 10), e.At, e.Kind, e.Status, e.Detail)
	}
	t.Render(w, tty)
}
