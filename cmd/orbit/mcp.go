package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/knowledge"
	"github.com/orbit-loop/orbit/mcpserver"
)

type mcpOptions struct {
	f *Factory
}

func newCmdMCP(f *Factory, runF func(*mcpOptions) error) *cobra.Command {
	opts := &mcpOptions{f: f}
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve orbit's tools to an agent over the Model Context Protocol (stdio)",
		Long: `Serve orbit to an agent as a Model Context Protocol server on stdin and stdout,
for an agent that has no Bash tool (the ORBIT CEO loop's nxtg-ceo-loop agent) or prefers typed
tools. orbit init --claude --mcp registers it in the project's .mcp.json.

Tools: decide (orbit decide, and --request with request), retro, queue (the
pending queue; process: orbit decide --queue), precedent, trust, stale,
loop_status and knowledge_match. Each calls the same code as the command it
mirrors: the same checks, the same append under the journal's lock, the same
sync. A result is two text blocks: a short rendering, then the JSON the
command prints with --json. An error is a tool error with the command's
one-line message, and a refused call writes nothing.

The project is found as for every command (--root, ORBIT_ROOT, else up from
the working directory), and the index is opened for each call and closed
after it. Diagnostics go to stderr; stdout carries the protocol only.`,
		Example: `  # .mcp.json (written by orbit init --claude --mcp):
  #   {"mcpServers": {"orbit": {"command": "orbit", "args": ["mcp"]}}}
  orbit mcp --root ~/src/my-agent-project`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return mcpRun(cmd.Context(), opts)
		},
	}
}

func mcpRun(ctx context.Context, opts *mcpOptions) error {
	f := opts.f
	in := f.IO.In
	if r, ok := in.(*replayReader); ok {
		// A session reads stdin for as long as it lasts: nothing to replay.
		in = r.r
	}
	// stdout carries the protocol only: anything else goes to stderr.
	out := f.IO.Out
	f.IO.Out = f.IO.ErrOut
	return mcpserver.Run(ctx, mcpserver.Options{
		Project:   f.Project,
		Index:     f.Index,
		Synced:    f.Synced,
		Knowledge: func(ctx context.Context) (*knowledge.Index, error) { return knowledgeSynced(ctx, f) },
		Done:      f.Close,
		DropIndex: f.dropIndex,
		Now:       f.Now,
		Version:   version(),
	}, in, out)
}
