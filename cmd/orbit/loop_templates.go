package main

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/citadel"
	"github.com/orbit-loop/orbit/report"
)

type loopTemplatesOptions struct {
	f    *Factory
	JSON jsonFlag
}

func newCmdLoopTemplates(f *Factory, runF func(*loopTemplatesOptions) error) *cobra.Command {
	opts := &loopTemplatesOptions{f: f}
	cmd := &cobra.Command{
		Use:   "templates",
		Short: "List Citadel's eight loop templates with their defaults",
		Long: `List the loop templates of Citadel's loop contract (core/loops/templates.js) with
their defaults: workflow type, trigger kind and cadence, attempts, verifier
and stop conditions. ` + "`orbit loop plan --template NAME`" + ` instantiates one.`,
		Example: "  orbit loop templates\n  orbit loop templates --json=id,triggerKind,maxAttempts",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return loopTemplatesRun(opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, citadel.Templates())
	return cmd
}

func loopTemplatesRun(opts *loopTemplatesOptions) error {
	f := opts.f
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, citadel.Templates())
	}
	t := &report.Table{Header: []string{"TEMPLATE", "TYPE", "TRIGGER", "ATTEMPTS", "VERIFIER", "STOP CONDITIONS", "GOAL"}}
	for _, tp := range citadel.Templates() {
		trigger := tp.TriggerKind
		if tp.Cadence != "" {
			trigger += " (" + tp.Cadence + ")"
		}
		verifier := tp.VerifierProfile
		if tp.VerifierCommand != "" {
			verifier = tp.VerifierCommand + " [" + tp.VerifierProfile + "]"
		}
		t.Append(tp.Name, tp.Type, trigger, strconv.Itoa(tp.MaxAttempts), verifier, strings.Join(tp.StopConditions, ", "), tp.Goal)
	}
	return t.Render(f.IO.Out, f.IO.OutTTY)
}
