package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/policy"
)

// Shell completion: cobra's `orbit completion bash|zsh|fish|powershell`,
// with values completed for the enumerations and decision ids.

// completeValues completes a flag from a fixed list.
func completeValues(values ...string) func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, v := range values {
			if strings.HasPrefix(strings.ToLower(v), strings.ToLower(prefix)) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeDecisionIDs completes the latest decision ids of the project.
func completeDecisionIDs(f *Factory) func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer f.Close()
		ix, err := f.Synced(cmd.Context())
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		rows, err := ix.Store.LatestDecisions(cmd.Context(), db.DecisionFilter{Limit: 200})
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for _, r := range rows {
			if strings.HasPrefix(r.ID, prefix) {
				out = append(out, cobra.CompletionWithDesc(r.ID, oneLine(r.Input)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// registerValueCompletions completes every enumeration flag of the tree.
func registerValueCompletions(root *cobra.Command) {
	values := map[string][]string{
		"category": journal.Categories, "impact": policy.Impacts, "depth": journal.Depths,
		"decision": journal.DecisionValues, "outcome": journal.Outcomes, "tier": journal.Tiers,
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, vs := range values {
			if c.Flags().Lookup(name) != nil {
				c.RegisterFlagCompletionFunc(name, completeValues(vs...))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
