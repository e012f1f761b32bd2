package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/hook"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

func newCmdHook(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Claude Code hooks that drive the ORBIT loop",
		Long: `Commands Claude Code runs as hooks (orbit init --claude registers them). They
read the hook's JSON from stdin, find the project from its cwd, and always exit
0 with a JSON answer or nothing: never a stray exit 2, never an unparseable
stdout. Every failure is reported on stderr, in .claude/orbit-hook.log, and as
a systemMessage the person watching sees.`,
		Example: `  echo '{"session_id":"s1","cwd":"'$PWD'","hook_event_name":"Stop"}' | orbit hook stop`,
		Args:    noArgs,
	}
	cmd.AddCommand(newCmdHookStop(f, "stop", "Stop"), newCmdHookStop(f, "subagent-stop", "SubagentStop"), newCmdHookSessionStart(f))
	return cmd
}

type hookOptions struct {
	f     *Factory
	Event string
	// Run is the hook itself.
	Run func(ctx context.Context, env hook.Env, in hook.Input) hook.Result
	// Timeout bounds the whole run (stdin, locks, the index): past it the
	// hook answers with a systemMessage saying what it was waiting for.
	Timeout time.Duration
}

// addTimeoutFlag registers --timeout on a hook command.
func addTimeoutFlag(cmd *cobra.Command, opts *hookOptions) *cobra.Command {
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", hook.DefaultTimeout, "give up after this long (keep it under the hook's timeout in settings.json, 30s as orbit init registers it)")
	return cmd
}

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

// hookRun never fails: whatever happens becomes a systemMessage, a line on
// stderr and a line in the hook log, and the exit status stays 0.
func hookRun(ctx context.Context, opts *hookOptions) {
	f := opts.f
	var res hook.Result
	defer func() {
		if p := recover(); p != nil {
			res.Err = fmt.Errorf("internal error: %v", p)
			res.Output = hook.Output{SystemMessage: "orbit hook: " + res.Err.Error()}
		}
		f.IO.Out.Write(res.Output.Bytes())
		if res.Err != nil {
			fmt.Fprintf(f.IO.ErrOut, "orbit hook %s: %v\n", opts.Event, res.Err)
		}
		if err := hook.AppendLog(res.Project, res.Log); err != nil {
			fmt.Fprintf(f.IO.ErrOut, "orbit hook %s: %v\n", opts.Event, err)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	data, err := readInput(ctx, f.IO.In, opts.Timeout)
	var in hook.Input
	if err == nil {
		in, err = hook.ParseInput(data)
	}
	if err != nil {
		res.Err = err
		res.Output = hook.Output{SystemMessage: "orbit hook: " + err.Error()}
		if wd, werr := f.Getwd(); werr == nil {
			if root, ferr := project.Find(wd); ferr == nil && f.Owner().Check(root) == nil {
				res.Project = root
				res.Log = fmt.Sprintf("%s %s error=%q", f.Now().UTC().Format("2006-01-02T15:04:05Z"), opts.Event, err.Error())
			}
		}
		return
	}
	if in.HookEventName == "" {
		in.HookEventName = opts.Event
	}
	projectDir := f.Getenv("CLAUDE_PROJECT_DIR")
	if root := f.RootFlag; root != "" {
		in.CWD, projectDir = root, ""
	}
	host, _ := os.Hostname()
	env := hook.Env{
		Now: f.Now, PID: os.Getppid(), Host: host, Getwd: f.Getwd,
		ProjectDir: projectDir, Owner: f.Owner(),
		Open: func(ctx context.Context, p project.Project) (*journal.Index, error) {
			f.RootFlag = p.Root
			return f.Synced(ctx)
		},
	}
	res = opts.Run(ctx, env, in)
}

// readInput reads the hook's stdin, at most hook.MaxInput bytes, and gives
// up when ctx is done (a stdin nobody closes must not hang the hook).
func readInput(ctx context.Context, in io.Reader, timeout time.Duration) ([]byte, error) {
	type read struct {
		data []byte
		err  error
	}
	done := make(chan read, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(in, hook.MaxInput+1))
		done <- read{data, err}
	}()
	select {
	case r := <-done:
		if r.err == nil && len(r.data) > hook.MaxInput {
			r.err = fmt.Errorf("hook input is over %d bytes", hook.MaxInput)
		}
		return r.data, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("no end of the hook input on stdin after %s (run by hand? pipe the JSON in, or < /dev/null)", timeout)
	}
}
