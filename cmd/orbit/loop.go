package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/loop"
)

func newCmdLoop(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "loop",
		Short: "The ORBIT loop, and the loops of every framework in the project",
		Long: `The ORBIT loop runs one CEO-LOOP iteration per turn; the Stop hook (orbit hook
stop) re-feeds the agent until the loop is done. start, stop and status write
and read its state file, .claude/ceo-loop-state.json, as NXTG-Forge's /forge:ceo-loop does.

list, show, stop ID, pause and resume see and control the loops of every
framework in the project (Citadel, CCW, Cavekit, Conductor and ORBIT), with
their statuses mapped to Citadel's shared stop vocabulary. templates, plan
and run are Citadel's loop contract: its templates, contract
records under .planning/loops/, and the bounded foreground runner.`,
		Example: `  orbit loop start --max-iterations 20 --time-limit 30m
  orbit loop status
  orbit loop stop
  orbit loop list
  orbit loop stop loop-v2-20260122-abc123 --status budget-exhausted --reason "spent"
  orbit loop run --action "npm run lint -- --fix" --verify "npm run lint" --write`,
		Args: noArgs,
	}
	cmd.AddCommand(newCmdLoopStart(f, nil), newCmdLoopStop(f, nil), newCmdLoopStatus(f, nil),
		newCmdLoopTemplates(f, nil), newCmdLoopPlan(f, nil), newCmdLoopRun(f, nil), newCmdLoopList(f, nil),
		newCmdLoopShow(f, nil), newCmdLoopPause(f, nil), newCmdLoopResume(f, nil))
	return cmd
}

// loops opens what the loop commands share: the project root, the index
// (for the loop event journal) and the clock.
func loopHistory(ctx context.Context, f *Factory) (*loop.History, error) {
	ix, err := f.Index(ctx)
	if err != nil {
		return nil, err
	}
	return &loop.History{Root: ix.Project.Root, Store: ix.Store}, nil
}

// scanLoops reads every loop of the project and records what changed since
// orbit last saw it. Files that could not be read are reported on stderr.
func scanLoops(ctx context.Context, f *Factory) (*loop.History, loop.Scan, error) {
	h, err := loopHistory(ctx, f)
	if err != nil {
		return nil, loop.Scan{}, err
	}
	// Reading every loop file allocates a few MB that die young; a larger
	// GC target for this short-lived read saves a sixth of its CPU.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	s, err := frameworks.Scan(ctx, h, f.Now())
	if err != nil {
		return nil, s, err
	}
	for _, p := range s.Problems {
		fmt.Fprintf(f.IO.ErrOut, "orbit: %s\n", p.Error())
	}
	return h, s, nil
}

// problemsError is the exit status of a read that met unreadable files.
func problemsError(s loop.Scan) error {
	if len(s.Problems) == 0 {
		return nil
	}
	return &findingsError{msg: fmt.Sprintf("%d loop files could not be read as loops (listed above)", len(s.Problems))}
}

// findLoop resolves an id given on the command line (loop.Scan.Resolve);
// an ambiguous id is a usage error.
func findLoop(s loop.Scan, id, control string) (loop.View, error) {
	v, err := s.Resolve(id, control)
	var ae *loop.AmbiguousError
	if errors.As(err, &ae) {
		return v, &flagError{err: err}
	}
	return v, err
}

func relTo(root, path string) string {
	if r, ok := strings.CutPrefix(path, root+"/"); ok {
		return r
	}
	return path
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// loopControlRun stops, pauses or resumes the loop named id.
func loopControlRun(ctx context.Context, f *Factory, id, kind, status, reason string) error {
	_, s, err := scanLoops(ctx, f)
	if err != nil {
		return err
	}
	v, err := findLoop(s, id, kind)
	if err != nil {
		return err
	}
	ix, err := f.Index(ctx)
	if err != nil {
		return err
	}
	c := &frameworks.Control{Index: ix, Now: f.Now}
	e, err := c.Apply(ctx, v, kind, status, reason)
	if err != nil {
		return err
	}
	printControl(f.IO.Out, v, e)
	return nil
}

// printControl says what a stop, pause or resume did: the status change,
// what was written in the loop's own files, and what continues the loop.
func printControl(w io.Writer, v loop.View, e loop.Event) {
	wrote := "status in " + v.Path
	if len(e.Wrote) > 0 {
		wrote = strings.Join(e.Wrote, "; ")
	}
	fmt.Fprintf(w, "%s %s: %s -> %s (%s)\n", v.Framework, v.ID, v.Status, e.Status, wrote)
	if e.Next != "" {
		fmt.Fprintf(w, "to continue: %s\n", e.Next)
	}
}
