package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/policy"
	"github.com/orbit-loop/orbit/report"
	"github.com/orbit-loop/orbit/trust"
)

type policyOptions struct {
	f     *Factory
	Level string
	JSON  jsonFlag
}

func newCmdPolicy(f *Factory, runF func(*policyOptions) error) *cobra.Command {
	opts := &policyOptions{f: f}
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Print the impact x reversibility matrix in force",
		Long: `Print the tier each impact and reversibility gets at the current trust level
(computed from the recorded outcomes), or at the level given with --level.

  standard  the ORBIT CEO loop's matrix as written; High + irreversible is deep_think
  demoted   every medium- and high-impact item escalates to a human
  elevated  medium + reversible is auto-approved as well`,
		Example: `  orbit policy
  orbit policy --level demoted
  orbit policy --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Level != "" && !slices.Contains(trust.Levels, trust.Level(opts.Level)) {
				return flagErrorf("--level %q is not allowed (allowed: standard, elevated, demoted)", opts.Level)
			}
			if runF != nil {
				return runF(opts)
			}
			return policyRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Level, "level", "", "show the matrix at this trust level instead of the current one")
	addJSONFlag(cmd, &opts.JSON, policyOutput{})
	return cmd
}

// policyOutput is what `orbit policy --json` prints; Scored is null for a
// level given with --level.
type policyOutput struct {
	Level  trust.Level   `json:"level"`
	Scored *int          `json:"scored"`
	Cells  []policy.Cell `json:"cells"`
}

func policyRun(ctx context.Context, opts *policyOptions) error {
	f := opts.f
	level := trust.Level(opts.Level)
	scored := -1
	if level == "" {
		ix, err := f.Synced(ctx)
		if err != nil {
			return err
		}
		h, err := trust.Current(ctx, ix.Store)
		if err != nil {
			return err
		}
		level, scored = h.Level, h.Scored()
	}
	cells, err := policy.Matrix(level)
	if err != nil {
		return err
	}
	if opts.JSON.on {
		out := policyOutput{Level: level, Cells: cells}
		if scored >= 0 {
			out.Scored = &scored
		}
		return opts.JSON.write(f.IO.Out, out)
	}
	if scored >= 0 {
		fmt.Fprintf(f.IO.ErrOut, "trust level %s (%d scored decisions)\n", level, scored)
	}
	t := &report.Table{Header: []string{"IMPACT", "REVERSIBLE", "TIER", "AT STANDARD"}}
	for _, c := range cells {
		rev := "yes"
		if !c.Reversible {
			rev = "no"
		}
		t.Append(c.Impact, rev, c.Tier, c.Standard)
	}
	return t.Render(f.IO.Out, f.IO.OutTTY)
}
