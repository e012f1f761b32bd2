package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/hook"
)

type primeOptions struct {
	f    *Factory
	JSON jsonFlag
}

func newCmdPrime(f *Factory, runF func(*primeOptions) error) *cobra.Command {
	opts := &primeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "prime",
		Short: "Print what an agent needs to go on with the active ORBIT loop",
		Long: `Print what an agent needs to go on with the active ORBIT loop after Claude Code
compacted its conversation, or in a new session: what orbit is, how to
record (the MCP tools when .mcp.json registers orbit's server, the CLI, and
the exact JSON line to append with Edit or Write for an agent with neither),
the loop's iteration and limits, the queue and its next depth, trust and any
alert, retrograde results since the iteration began, stale decisions and the
top of the progress file. The same facts as the Stop hook's prompt, built by
the same code, kept under 2,000 tokens (least important parts cut first).

It reads only: no lock is taken and no counter moves. With no active loop it
prints nothing on stdout and says so on stderr. orbit hook session-start
gives the same text to Claude Code as the session's additional context.`,
		Example: `  orbit prime
  orbit prime --json=active,tokens`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return primeRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, []string{"active", "text", "tokens"})
	return cmd
}

func primeRun(ctx context.Context, opts *primeOptions) error {
	f := opts.f
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	text, err := hook.Prime(ctx, ix, f.Now())
	if err != nil {
		return err
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, struct {
			Active bool   `json:"active"`
			Text   string `json:"text"`
			Tokens int    `json:"tokens"`
		}{text != "", text, hook.EstimateTokens(text)})
	}
	if text == "" {
		fmt.Fprintln(f.IO.ErrOut, "no active ORBIT loop: nothing to prime (`orbit loop start` starts one)")
		return nil
	}
	fmt.Fprintln(f.IO.Out, text)
	return nil
}
