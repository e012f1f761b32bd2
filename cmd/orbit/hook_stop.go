package main

import (
	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/hook"
)

func newCmdHookStop(f *Factory, use, event string) *cobra.Command {
	opts := &hookOptions{f: f, Event: event, Run: hook.Stop}
	return addTimeoutFlag(&cobra.Command{
		Use:   use,
		Short: "The " + event + " hook: go on with the next ORBIT iteration, or tear the loop down",
		Long: `The ` + event + ` hook of the ORBIT loop. With no active loop it prints nothing
and the session ends. Otherwise it tears the loop down (active false, a
session summary in the progress file) when the completion sentinel was
written (last_assistant_message first, the transcript's tail as a
fallback), the iteration cap or the time limit is reached, the token budget
is spent, or the queue is empty and the iteration recorded nothing; else it
answers {"decision":"block","reason":...} with the next iteration's prompt:
iteration N of M, queue status, retrograde results since the last iteration,
accuracy and trust, stale decisions, the alert when it applies, the budget
when one is set, and the top of the progress file, cut to fit Claude Code's
10,000-character cap (least important parts first).

The loop's lock (.claude/orbit-loop.lock) is taken by the session that stops
first and refreshed on every call; another session may take it only when its
heartbeat is older than 5 minutes, and is told so otherwise.`,
		Example: `  # .claude/settings.json (written by orbit init --claude):
  #   {"hooks":{"` + event + `":[{"hooks":[{"type":"command","command":"orbit hook ` + use + `","timeout":30}]}]}}
  echo '{"session_id":"s1","cwd":"'$PWD'","hook_event_name":"` + event + `"}' | orbit hook ` + use,
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
