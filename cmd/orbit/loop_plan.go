package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/citadel"
)

type loopPlanOptions struct {
	f        *Factory
	Template string
	Write    bool
	Plan     citadel.PlanOptions
}

func newCmdLoopPlan(f *Factory, runF func(*loopPlanOptions) error) *cobra.Command {
	opts := &loopPlanOptions{f: f}
	cmd := &cobra.Command{
		Use:   "plan --template NAME",
		Short: "Print or write a Citadel loop contract record from a template",
		Long: `Instantiate a template as a loop contract record with every field the
contract lists (id, type, trigger, input, scope, permissions, budget, verifier,
retry, stopConditions, statePath, reviewArtifact, recovery) and the ones
Citadel's scripts add (version, template, title, status, createdAt,
updatedAt, runs, notes), status planned. The record is printed as JSON; with
--write it is also written to .planning/loops/{id}.json (atomically, under
its lock) and a plan event is recorded.

The template's trigger kind is kept: Citadel's own CLI writes "manual" for
every template, losing e.g. pr-review-repair's "scheduled".`,
		Example: `  orbit loop plan --template docs-drift-check
  orbit loop plan --template pr-review-repair --write
  orbit loop plan --template security-scan --id weekly-security --scope "api/" --write`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Template == "" {
				return flagErrorf("--template is required (one of: %s)", strings.Join(citadel.TemplateNames(), ", "))
			}
			if _, err := citadel.FindTemplate(opts.Template); err != nil {
				return flagErrorf("--template %q is not a template (templates: %s)", opts.Template, strings.Join(citadel.TemplateNames(), ", "))
			}
			if runF != nil {
				return runF(opts)
			}
			return loopPlanRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Template, "template", "", "template name (`orbit loop templates` lists them)")
	cmd.Flags().BoolVar(&opts.Write, "write", false, "write the record to .planning/loops/{id}.json")
	cmd.Flags().StringVar(&opts.Plan.ID, "id", "", "loop id (default: Citadel's {type}-{title}-{time})")
	cmd.Flags().StringVar(&opts.Plan.Title, "title", "", "title (default: the template's)")
	cmd.Flags().StringVar(&opts.Plan.Goal, "goal", "", "goal (default: the template's)")
	cmd.Flags().StringVar(&opts.Plan.Scope, "scope", "", "what the loop may touch (default: current project)")
	cmd.Flags().StringVar(&opts.Plan.ReviewArtifact, "artifact", "", "review artifact path a human inspects")
	return cmd
}

func loopPlanRun(ctx context.Context, opts *loopPlanOptions) error {
	f := opts.f
	tp, err := citadel.FindTemplate(opts.Template)
	if err != nil {
		return err
	}
	now := f.Now()
	c := tp.Plan(opts.Plan, now)
	data, err := c.Bytes()
	if err != nil {
		return err
	}
	if opts.Write {
		h, err := loopHistory(ctx, f)
		if err != nil {
			return err
		}
		path, err := citadel.WritePlan(ctx, h, c, now)
		if err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "wrote %s\n", relTo(h.Root, path))
	}
	_, err = f.IO.Out.Write(data)
	return err
}
