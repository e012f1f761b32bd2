package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/report"
)

type showOptions struct {
	f          *Factory
	ID         string
	Precedents int
	JSON       jsonFlag
}

func newCmdShow(f *Factory, runF func(*showOptions) error) *cobra.Command {
	opts := &showOptions{f: f}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one decision: its fields, its whole outcome history, its precedents",
		Long: `Show one decision with everything orbit knows about it: its journal fields,
where its line is (file:line), every outcome event in order with its time
and evidence (the last one gives its current outcome; a verdict taken back
with orbit retro ID PENDING shows as such), whether it was voided (orbit
void) and why, and the past decisions most like it. --json prints the
decision in its one form with file, events, voids and precedents beside it
(GET /api/v1/decisions/{id} answers the same).`,
		Example: `  orbit show iter-6-2
  orbit show iter-6-2 --json | jq '.events[] | {ts, outcome, evidence}'
  orbit show iter-6-2 --json=id,outcome,evidence`,
		Args:              exactArgs(1, "a decision id"),
		ValidArgsFunction: completeDecisionIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if opts.Precedents < 0 {
				return flagErrorf("--precedents %d: must be 0 or more", opts.Precedents)
			}
			if runF != nil {
				return runF(opts)
			}
			return showRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Precedents, "precedents", 3, "how many similar past decisions to show")
	addJSONFlag(cmd, &opts.JSON, ceo.Shown{})
	return cmd
}

func showRun(ctx context.Context, opts *showOptions) error {
	f := opts.f
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	s, found, err := ceo.Show(ctx, ix, opts.ID, opts.Precedents)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("no decision %q in the journal (`orbit log` lists them)", opts.ID)
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, s)
	}
	w := f.IO.Out
	d := s.DecisionView
	fmt.Fprintf(w, "%s  %s:%d\n", d.ID, s.File, d.Line)
	for _, kv := range [][2]string{
		{"input", d.Input}, {"iteration", fmt.Sprint(d.Iteration)}, {"ts", d.TS}, {"tier", d.Tier}, {"depth", d.Depth},
		{"category", d.Category}, {"decision", d.Decision.Decision}, {"reason", d.Reason}, {"next action", d.NextAction},
		{"confidence", report.ConfidenceText(d.Confidence)}, {"requestor", d.Requestor}, {"context", d.Context},
		{"request id", d.RequestID}, {"outcome", d.Outcome},
	} {
		if kv[1] != "" {
			fmt.Fprintf(w, "  %-12s %s\n", kv[0]+":", oneLine(kv[1]))
		}
	}
	if p := d.Retrograde.PreviousID; p != nil {
		fmt.Fprintf(w, "  %-12s %s %s\n", "retrograde:", *p, d.Retrograde.Outcome)
	}
	if d.Voided {
		fmt.Fprintf(w, "  %-12s %s (recorded by mistake: out of trust, precedents and stale)\n", "voided:", oneLine(d.VoidReason))
	}
	fmt.Fprintf(w, "Outcome history (%d %s):\n", len(s.Events), journal.Plural(len(s.Events), "event", "events"))
	if len(s.Events) == 0 {
		fmt.Fprintln(w, "  none: PENDING until orbit retro records one")
	}
	for _, e := range s.Events {
		by := fmt.Sprintf("%s:%d", e.File, e.Line)
		if e.RecordedBy != "" {
			by = "carried by " + e.RecordedBy + " (" + by + ")"
		}
		what := e.Outcome
		if e.Outcome == "PENDING" {
			what = "PENDING (verdict taken back)"
		}
		fmt.Fprintf(w, "  %s  %s  %s", e.TS, what, by)
		if e.Evidence != "" {
			fmt.Fprintf(w, "  evidence: %s", oneLine(e.Evidence))
		}
		fmt.Fprintln(w)
	}
	if len(s.Voids) > 0 {
		fmt.Fprintf(w, "Voids (%d %s):\n", len(s.Voids), journal.Plural(len(s.Voids), "event", "events"))
		for _, v := range s.Voids {
			what := "voided"
			if !v.Void {
				what = "void taken back"
			}
			fmt.Fprintf(w, "  %s  %s  %s:%d  evidence: %s\n", v.TS, what, v.File, v.Line, oneLine(v.Evidence))
		}
	}
	if len(s.Precedents) > 0 {
		fmt.Fprintln(w, "Precedents (most similar past decisions; AVOID = proved INCORRECT):")
		for _, h := range s.Precedents {
			fmt.Fprintf(w, "  %s\n", h.Describe())
		}
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
