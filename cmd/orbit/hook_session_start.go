package main

import (
	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/hook"
)

func newCmdHookSessionStart(f *Factory) *cobra.Command {
	opts := &hookOptions{f: f, Event: "SessionStart", Run: hook.SessionStart}
	return addTimeoutFlag(&cobra.Command{
		Use:   "session-start",
		Short: "The SessionStart hook: give a new or compacted session the ORBIT loop's context",
		Long: `The SessionStart hook (sources startup, resume, clear and compact). While an
ORBIT loop is active, it answers {"hookSpecificOutput": {"hookEventName":
"SessionStart", "additionalContext": ...}} with what orbit prime prints: what
orbit is, how to record (the MCP tools when .mcp.json registers orbit's
server, the CLI, or a JSON line appended with Edit or Write), the loop's
iteration and limits, the queue, trust and any alert, stale decisions and
the top of the progress file. After Claude Code compacts the conversation,
the agent has it back at once instead of at the next Stop.

Outside an active loop it prints nothing. A session other than the one
driving the loop (whose lock is live) is only told that the loop belongs to
another session.`,
		Example: `  # .claude/settings.json (written by orbit init --claude):
  #   {"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"orbit hook session-start","timeout":30}]}]}}
  echo '{"session_id":"s1","cwd":"'$PWD'","hook_event_name":"SessionStart","source":"compact"}' | orbit hook session-start`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Timeout <= 0 {
				return flagErrorf("--timeout %s: must be positive", opts.Timeout)
			}
			hookRun(cmd.Context(), opts)
			return nil
		},
	}, opts)
}
