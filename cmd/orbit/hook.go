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
