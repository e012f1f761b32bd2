package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/demo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

type demoOptions struct {
	f    *Factory
	Keep bool
	Dir  string
}

func newCmdDemo(f *Factory, runF func(*demoOptions) error) *cobra.Command {
	opts := &demoOptions{f: f}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run orbit on embedded sample data in a temporary project",
		Long: `Create a temporary project, import the embedded sample journal (320 decisions
over 27 iterations) and an agent-written journal with the faults real ones
have, then show what orbit makes of them: every rejected line by file:line,
outcomes, the latest decisions, a verify, a rebuild from nothing that gives
the same answers, and an export that gives back the imported bytes.

Each step prints the command it runs, so you can repeat it by hand.`,
		Example: `  orbit demo
  orbit demo --keep        # keep the project to explore it afterwards`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return demoRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Keep, "keep", false, "keep the temporary project and print its path")
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "build the demo project in this (empty or new) directory instead of a temporary one")
	return cmd
}

// demoSession runs orbit commands in-process against the demo project.
type demoSession struct {
	ctx  context.Context
	f    *Factory
	root string
}

// step prints a heading and the command, then runs it with the demo's
// streams; it returns the exit code.
func (s *demoSession) step(title string, args ...string) int {
	return s.stepIn(title, "", args...)
}

// stepIn is step with stdin.
func (s *demoSession) stepIn(title, stdin string, args ...string) int {
	out := s.f.IO.Out
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = a
		if strings.ContainsAny(a, " ;'\"") {
			shown[i] = strconv.Quote(a)
		}
	}
	prefix := ""
	if stdin != "" {
		prefix = "echo '" + strings.TrimSpace(stdin) + "' | "
	}
	fmt.Fprintf(out, "\n== %s\n$ %sorbit %s\n", title, prefix, strings.Join(shown, " "))
	sub := NewFactory(&IOStreams{In: strings.NewReader(stdin), Out: out, ErrOut: out, OutTTY: s.f.IO.OutTTY})
	sub.Getenv = func(string) string { return "" }
	return run(s.ctx, sub, append([]string{"--root", s.root}, args...))
}

// capture runs a command quietly and returns its standard output.
func (s *demoSession) capture(args ...string) (string, int) {
	var out, errOut bytes.Buffer
	sub := NewFactory(&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	sub.Getenv = func(string) string { return "" }
	code := run(s.ctx, sub, append([]string{"--root", s.root}, args...))
	return out.String(), code
}

func demoRun(ctx context.Context, opts *demoOptions) error {
	f := opts.f
	root := opts.Dir
	if root == "" {
		dir, err := os.MkdirTemp("", "orbit-demo-")
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		root = dir
		if !opts.Keep {
			defer os.RemoveAll(dir)
		}
	} else if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	samples, err := demo.WriteSamples(root)
	if err != nil {
		return err
	}
	// Commands name the sample files as a person in the project would.
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.Chdir(root); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer os.Chdir(wd)
	s := &demoSession{ctx: ctx, f: f, root: root}
	out := f.IO.Out
	rel := func(name string) string { return filepath.Base(samples[name]) }
	fmt.Fprintf(out, "orbit demo: a temporary project in %s\n", root)

	if s.step("Create the journal and the index", "init") != 0 {
		return fmt.Errorf("demo: init failed")
	}
	s.step("Import a loop's journal (the ORBIT CEO loop's format)", "import", rel(demo.JournalFile))
	s.step("Import an agent-written journal: each bad line is named, the good ones still import", "import", rel(demo.AgentFile))
	fmt.Fprintln(out, "   (exit status 3: some lines were rejected; they stay in the source file)")

	// Outcomes recorded on their own, and a line a bash hook appends.
	retro, _ := demo.Read(demo.RetroFile)
	if err := journal.WriteFileAtomic(root, project.RetroFile, retro, 0o644); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	hookLine := `{"id":"iter-28-1","iteration":28,"ts":"2026-03-08T16:45:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"Add fuzz target for the cli parser","decision":"APPROVED","reason":"Appended by a bash hook with echo >>","next_action":"Commit.","verification":"PENDING","retrograde":{"previous_id":"iter-27-2","outcome":"CORRECT"},"confidence":0.93}` + "\n"
	if err := appendRaw(root, project.DecisionsFile, hookLine); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n== Outcomes recorded on their own, and a line appended by a hook with echo >>\n$ cp %s %s\n$ echo '{\"id\":\"iter-28-1\",...}' >> %s\n",
		rel(demo.RetroFile), project.RetroFile, project.DecisionsFile)
	s.step("Every command syncs first: only the new bytes are read", "sync")
	s.step("The latest decisions with their current outcome", "log", "--limit", "8")
	s.step("Decisions proved wrong (a later verdict corrects an earlier one)", "log", "--outcome", "INCORRECT", "--limit", "5")
	s.step("Journal and index agree?", "verify")

	before, _ := s.capture("log", "--limit", "0", "--json")
	s.step("Delete the index and rebuild it from the files", "rebuild")
	after, _ := s.capture("log", "--limit", "0", "--json")
	fmt.Fprintf(out, "   same answers after the rebuild: %s\n", yesNo(before == after && before != ""))

	// The ORBIT protocol: a state file and a pending queue, as a loop has.
	for name, dst := range map[string]string{demo.QueueFile: project.PendingFile, demo.StateFile: project.StateFile} {
		data, _ := demo.Read(name)
		if err := journal.WriteFileAtomic(root, dst, data, 0o644); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	fmt.Fprintf(out, "\n== A loop's state file and pending queue (the ORBIT CEO loop's worked example)\n$ cp %s %s\n$ cp %s %s\n",
		rel(demo.StateFile), project.StateFile, rel(demo.QueueFile), project.PendingFile)
	s.step("The matrix in force at the current trust level", "policy")
	s.step("REASON: decide the trivial items in one batch, name the deep focus", "decide", "--queue")
	s.step("The agent decides the deep focus, with its verdict on an earlier decision", "decide", "--request", "req-103",
		"--decision", "APPROVED", "--reason", "Single user and reversible: SQLite now, behind an interface.",
		"--next-action", "Implement the store on SQLite behind an interface.", "--confidence", "0.8", "--retro", "iter-27-3=CORRECT")
	s.step("A later check finds an earlier decision wrong", "retro", "iter-26-2", "INCORRECT", "--evidence", "cache served stale pages; reverted")
	s.step("Decisions still unverified 2 iterations on", "stale", "--limit", "5")
	s.step("The progress file the next iteration reads (first lines)", "report", "progress")
	state, _ := project.ReadFile(root, project.StateFile, 1<<20)
	fmt.Fprintf(out, "\n== The state file's counters now follow the outcomes\n$ cat %s\n%s", project.StateFile, state)

	s.step("What did we decide last time something like this came up?", "precedent", "Should loop state move to Postgres?", "--category", "architecture")
	s.step("How accurate has the loop been, and does its confidence mean anything?", "trust", "--bins", "5")

	s.step("Start a new ORBIT loop (the old one was still marked active)", "loop", "start", "--max-iterations", "30", "--force")
	queued := `[
  {"id": "req-201", "requestor": "forge:builder", "category": "quality", "title": "Enable strict type checking in billing",
   "description": "Two null-handling bugs shipped last week.", "impact": "low", "reversible": true},
  {"id": "req-202", "requestor": "forge:planner", "category": "deploy", "title": "Run database migration 21 in production",
   "description": "Drops the legacy invoices.amount column.", "impact": "high", "reversible": false}
]
`
	if err := journal.WriteFileAtomic(root, project.PendingFile, []byte(queued), 0o644); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(out, "\n== Agents queue two new requests\n$ cat %s\n%s", project.PendingFile, queued)
	s.step("Iteration 1: the trivial item is decided, the deep one named", "decide", "--queue", "--precedents", "0")
	stop := fmt.Sprintf(`{"session_id":"demo-session","transcript_path":"","cwd":%q,"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Iteration 1 done: queue processed."}`, root)
	s.stepIn("Claude Code's Stop hook re-feeds the next iteration (orbit hook stop replaces ceo-loop-stop.sh)", stop, "hook", "stop")
	done := strings.Replace(stop, "Iteration 1 done: queue processed.", "All done. <promise>ORBIT COMPLETE</promise>", 1)
	s.stepIn("The agent writes the completion sentinel: the hook tears the loop down", done, "hook", "stop")
	s.step("Everything in order?", "doctor")

	exported, _ := s.capture("export", "--category", "")
	sample, _ := demo.Read(demo.JournalFile)
	fmt.Fprintf(out, "\n== Export gives back the imported lines\n$ orbit export | head -%d | cmp - %s\n   byte-identical: %s\n",
		bytes.Count(sample, []byte("\n")), rel(demo.JournalFile), yesNo(strings.HasPrefix(exported, string(sample))))
	if opts.Keep || opts.Dir != "" {
		fmt.Fprintf(out, "\nThe project is kept in %s; try: orbit --root %s log\n", root, root)
	}
	return nil
}

// appendRaw appends a line as a hook's `echo >>` would (orbit's appender
// takes the journal's lock, as flock(1) around echo would).
func appendRaw(root, path, line string) error {
	a, err := journal.OpenAppender(root, path)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := a.Append([]byte(line)); err != nil {
		a.Close()
		return fmt.Errorf("demo: %w", err)
	}
	return a.Close()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}
