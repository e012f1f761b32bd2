package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/citadel"
	"github.com/orbit-loop/orbit/loop"
)

type loopRunOptions struct {
	f    *Factory
	Run  citadel.RunOptions
	JSON jsonFlag
}

func newCmdLoopRun(f *Factory, runF func(*loopRunOptions) error) *cobra.Command {
	opts := &loopRunOptions{f: f}
	cmd := &cobra.Command{
		Use:   "run --action CMD --verify CMD",
		Short: "Run a bounded foreground loop: action, then verifier, until it passes",
		Long: `Run the action, then the verifier (each with sh -c in the project root), until
the verifier passes (verifier-passed) or the attempts run out (attempt-limit).
An action that fails stops the loop as blocked; a verifier that cannot run
(exit 126 or 127, or no shell) as verifier-failed; Ctrl-C as stopped, with
the record saved. The commands' output goes to stderr as they run.

With --write, the loop's contract record is kept in .planning/loops/{id}.json
as Citadel's loop-runner writes it: every action and verifier run is appended
as it ends (command, exit code, start and end, the output's last lines as
evidence), each as an event in orbit's loop event journal, and a review
artifact (markdown) is written where the record's reviewArtifact says
(default .planning/loops/{id}.md). The record is re-read under its lock for
every write, so ` + "`orbit loop stop ID`" + ` from another terminal stops the loop
(killing the running command) and is never overwritten; ` + "`orbit loop pause ID`" + `
makes it wait before its next step until resumed.

--loop ID runs an existing record (one planned from a template, say) with its
trigger command and verifier command unless --action or --verify are given,
waiting its retry.backoff between attempts (unless --backoff), and within
its budget: with budget.maxSpend and budget.costPerRun, each attempt costs
costPerRun (the attempts its runs already hold count too), and the loop
stops as budget-exhausted before the attempt that would pass maxSpend.
The commands are printed before anything runs; when any comes from the
record (a file of the checkout, which anyone who wrote the checkout chose),
nothing runs without --yes.

Exit status: 0 only on verifier-passed; 3 on any other end.`,
		Example: `  orbit loop run --action "npm run lint -- --fix" --verify "npm run lint" --max-attempts 3 --write
  orbit loop run --verify "go test ./..." --max-attempts 1
  orbit loop run --action "make fmt" --verify "make check" --backoff 2s --write --json
  orbit loop run --loop docs-drift          # prints the record's commands, runs nothing
  orbit loop run --loop docs-drift --yes    # runs them`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Run.Verify == "" && opts.Run.Loop == "" {
				return flagErrorf("--verify is required (the verifier decides when the loop is done)")
			}
			if cmd.Flags().Changed("max-attempts") && opts.Run.MaxAttempts < 1 {
				return flagErrorf("--max-attempts %d: must be at least 1", opts.Run.MaxAttempts)
			}
			if opts.Run.Backoff < 0 {
				return flagErrorf("--backoff %s: must not be negative", opts.Run.Backoff)
			}
			if opts.Run.Loop != "" && !cmd.Flags().Changed("max-attempts") {
				opts.Run.MaxAttempts = 0 // the record's budget
			}
			if runF != nil {
				return runF(opts)
			}
			return loopRunRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Run.Action, "action", "", "command run first in each attempt")
	cmd.Flags().StringVar(&opts.Run.Verify, "verify", "", "command that decides: exit 0 passes")
	cmd.Flags().IntVar(&opts.Run.MaxAttempts, "max-attempts", 3, "attempts before stopping as attempt-limit")
	cmd.Flags().DurationVar(&opts.Run.Backoff, "backoff", 0, "wait this long between attempts (e.g. 2s; with --loop, default the record's retry.backoff)")
	cmd.Flags().BoolVar(&opts.Run.Write, "write", false, "keep the record, the events and the review artifact")
	cmd.Flags().StringVar(&opts.Run.Loop, "loop", "", "run this existing Citadel record (implies --write)")
	cmd.Flags().BoolVar(&opts.Run.Yes, "yes", false, "with --loop: run the commands the record names (they are printed first)")
	cmd.Flags().StringVar(&opts.Run.Artifact, "artifact", "", "review artifact path (default .planning/loops/{id}.md)")
	addJSONFlag(cmd, &opts.JSON, citadel.RunResult{})
	return cmd
}

func loopRunRun(ctx context.Context, opts *loopRunOptions) error {
	f := opts.f
	h, err := loopHistory(ctx, f)
	if err != nil {
		return err
	}
	r := &citadel.Runner{Root: h.Root, History: h, Now: f.Now}
	ro := opts.Run
	ro.Output, ro.Progress = f.IO.ErrOut, f.IO.ErrOut
	if !ro.Write && ro.Loop == "" {
		r.History = nil
	}
	res, err := r.Run(ctx, ro)
	if err != nil {
		return err
	}
	if opts.JSON.on {
		if err := opts.JSON.write(f.IO.Out, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(f.IO.Out, "%s after %d of %d attempts: %s\n", res.Status, res.Attempts, res.MaxAttempts, loop.StopMeaning(res.Status))
		if res.Path != "" {
			fmt.Fprintf(f.IO.Out, "record: %s\n", res.Path)
		}
		if res.ReviewArtifact != "" && res.Path != "" {
			fmt.Fprintf(f.IO.Out, "review: %s\n", res.ReviewArtifact)
		}
	}
	if res.Status != "verifier-passed" {
		return &findingsError{msg: fmt.Sprintf("loop %s ended %s", res.ID, res.Status)}
	}
	return nil
}
