package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/hook"
)

// sessionStartInput is a SessionStart hook's stdin, in the field order of
// Claude Code's hooks reference.
func sessionStartInput(tb testing.TB, cwd, session, source string) string {
	tb.Helper()
	b, err := json.Marshal(map[string]string{
		"session_id": session, "transcript_path": "/tmp/none.jsonl", "cwd": cwd,
		"hook_event_name": "SessionStart", "source": source,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return string(b) + "\n"
}

// sessionStart runs `orbit hook session-start` on the project.
func (p *testProject) sessionStart(session, source string) (result, hook.Output) {
	p.tb.Helper()
	return hookStop(p.tb, testNow, p.root, sessionStartInput(p.tb, p.root, session, source), "hook", "session-start")
}

// TestHookSessionStartSources: for every source Claude Code sends, an
// active loop's session gets orbit prime's text as additional context,
// and nothing changes on disk but the hook's log line.
func TestHookSessionStartSources(t *testing.T) {
	t.Parallel()
	for _, source := range []string{"startup", "resume", "clear", "compact"} {
		t.Run(source, func(t *testing.T) {
			t.Parallel()
			p := loopProject(t)
			prime := p.mustRun("prime").stdout
			state := p.read(stateRel)

			res, out := p.sessionStart("s1", source)
			if out.Specific == nil || out.Decision != "" || out.Reason != "" || out.SystemMessage != "" {
				t.Fatalf("session-start (%s) = %s; want hookSpecificOutput only", source, res.stdout)
			}
			if out.Specific.HookEventName != "SessionStart" {
				t.Errorf("hookEventName = %q; want SessionStart", out.Specific.HookEventName)
			}
			if got, want := out.Specific.AdditionalContext, strings.TrimSuffix(prime, "\n"); got != want {
				t.Errorf("additionalContext =\n%s\nwant what orbit prime prints:\n%s", got, want)
			}
			for _, want := range []string{
				"ORBIT loop — iteration 5 of 20. Continue this CEO-LOOP iteration",
				"Time: 10 of 30 minutes used.",
				"Queue: 4 pending; next depth target: heavy.",
				"Accuracy: 2/3 = 66.7%",
				"How to record",
				"- Without Bash: append one line at the end of .claude/ceo-loop-decisions.jsonl",
			} {
				if !strings.Contains(out.Specific.AdditionalContext, want) {
					t.Errorf("additionalContext lacks %q:\n%s", want, out.Specific.AdditionalContext)
				}
			}
			if res.stderr != "" {
				t.Errorf("stderr = %q; want empty", res.stderr)
			}
			if got := p.read(stateRel); got != state {
				t.Errorf("state file changed by session-start:\n%s\nwant\n%s", got, state)
			}
			if p.exists(lockRel) {
				t.Errorf("session-start took the loop's lock; only a Stop may")
			}
			if log := p.lastLog(); !strings.HasPrefix(log, "2026-03-09T12:00:00Z SessionStart session=s1 source="+source+" action=prime iteration=5 context_chars=") {
				t.Errorf("hook log = %q; want the prime action", log)
			}
		})
	}
}

// TestHookSessionStartQuiet: outside an active loop, session-start prints
// nothing at all, whatever the source.
func TestHookSessionStartQuiet(t *testing.T) {
	t.Parallel()
	stopped := strings.Replace(loopState(5, 20), `"active": true`, `"active": false`, 1)
	tests := []struct {
		name  string
		setup func(p *testProject)
	}{
		{"no state file", func(p *testProject) {}},
		{"loop stopped", func(p *testProject) { p.write(stateRel, stopped) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := projectWith(t, "journal.jsonl")
			tt.setup(p)
			for _, source := range []string{"startup", "resume", "clear", "compact"} {
				res, _ := p.sessionStart("s1", source)
				if res.stdout != "" || res.stderr != "" {
					t.Errorf("session-start (%s) printed %q / %q; want nothing", source, res.stdout, res.stderr)
				}
			}
			res := p.mustRun("prime")
			if res.stdout != "" || !strings.Contains(res.stderr, "no active ORBIT loop") {
				t.Errorf("prime = %q / %q; want nothing on stdout and a note on stderr", res.stdout, res.stderr)
			}
		})
	}
	// Outside any project.
	dir := t.TempDir()
	res, _ := hookStop(t, testNow, dir, sessionStartInput(t, dir, "s1", "startup"), "hook", "session-start")
	if res.stdout != "" || res.stderr != "" {
		t.Errorf("session-start outside a project printed %q / %q; want nothing", res.stdout, res.stderr)
	}
}

// TestHookSessionStartOtherSession: while another live session drives the
// loop, a new session is told so, and not told to continue the loop.
func TestHookSessionStartOtherSession(t *testing.T) {
	t.Parallel()
	p := loopProject(t)
	p.write(lockRel, `{"owner":"session:driver","pid":77,"host":"box","acquired_at":"2026-03-09T11:50:00Z","heartbeat_at":"2026-03-09T11:59:00Z"}`)
	_, out := p.sessionStart("s2", "startup")
	want := "An ORBIT loop is active in this project (iteration 5), driven by session:driver (pid 77 on box); this session is not driving it."
	if out.Specific == nil || out.Specific.AdditionalContext != want {
		t.Errorf("session-start from another session = %+v; want the note %q", out, want)
	}
	// The driving session itself is primed.
	_, out = p.sessionStart("driver", "compact")
	if out.Specific == nil || !strings.HasPrefix(out.Specific.AdditionalContext, "orbit keeps this project's ORBIT loop") {
		t.Errorf("session-start from the driving session = %+v; want the prime text", out)
	}
}

// TestPrimeHandWrittenLinesAccepted: the decision and outcome lines the
// guide shows an agent without Bash, appended as its Edit or Write tool
// would with only the placeholders filled, are accepted by orbit: the
// decision is indexed with the id the guide named, and the outcome moves
// the decision's verdict.
func TestPrimeHandWrittenLinesAccepted(t *testing.T) {
	t.Parallel()
	p := loopProject(t)
	text := p.mustRun("prime").stdout
	decision, outcome := guideLines(t, text)
	fill := strings.NewReplacer("<what is decided>", "Pin the eslint version", "<why>", "reproducible lint runs",
		"<what happens next>", "commit the lockfile", "<id>", "iter-3-2", "<what shows it>", "CI green")
	appendTo(t, p.path(journalRel), fill.Replace(decision))
	appendTo(t, p.path(retroRel), fill.Replace(outcome))

	res := p.run("verify")
	if res.code != exitOK {
		t.Fatalf("verify after the hand-written lines: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var rows []struct {
		ID, Input, Outcome string
	}
	if err := json.Unmarshal([]byte(p.mustRun("log", "--json=id,input,outcome").stdout), &rows); err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for _, r := range rows {
		found[r.ID] = r.Input + "/" + r.Outcome
	}
	if got := found["iter-5-1"]; got != "Pin the eslint version/PENDING" {
		t.Errorf("iter-5-1 = %q; want the hand-written decision, PENDING", got)
	}
	if got := found["iter-3-2"]; !strings.HasSuffix(got, "/CORRECT") {
		t.Errorf("iter-3-2 = %q; want CORRECT from the hand-written outcome", got)
	}
	// The next prime names the next free id.
	if next := p.mustRun("prime").stdout; !strings.Contains(next, `{"id":"iter-5-2"`) {
		t.Errorf("prime after iter-5-1 was written does not offer iter-5-2:\n%s", next)
	}
}

// guideLines returns the decision and outcome lines of the guide.
func guideLines(tb testing.TB, text string) (decision, outcome string) {
	tb.Helper()
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, `{"id":`) {
			decision = l
		}
		if _, after, ok := strings.Cut(l, "An outcome: append "); ok {
			outcome, _, _ = strings.Cut(after, " to ")
		}
	}
	if decision == "" || outcome == "" {
		tb.Fatalf("no decision or outcome line in:\n%s", text)
	}
	return decision, outcome
}

func appendTo(tb testing.TB, path, line string) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		tb.Fatal(err)
	}
}

// TestGuideNamesMCPTools: with orbit's server registered in .mcp.json (under
// any name), the Stop hook's prompt and orbit prime name the MCP tools an
// agent without Bash can call, and the queue line says to use them.
func TestGuideNamesMCPTools(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"orbit", "governance"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := loopProject(t)
			p.write(hook.MCPFile, `{"mcpServers": {"other": {"command": "npx", "args": ["x"]}, "`+name+`": {"command": "orbit", "args": ["mcp"]}}}`)
			prime := p.mustRun("prime").stdout
			_, out := p.stop(testNow, stopInput{SessionID: "s1", LastAssistantMessage: "next"})
			tool := func(t string) string { return "mcp__" + name + "__" + t }
			for what, text := range map[string]string{"prime": prime, "stop prompt": out.Reason} {
				for _, want := range []string{
					"- MCP tools (server \"" + name + "\" in .mcp.json): " + tool("queue") + " (list; process: true batches the trivial items), " + tool("decide"),
					"Decide with " + tool("queue") + " {process: true}",
					tool("retro"), tool("precedent"), tool("stale"), tool("trust"), tool("loop_status"), tool("knowledge_match"),
					"- Without Bash or the MCP tools: append one line",
				} {
					if !strings.Contains(text, want) {
						t.Errorf("%s lacks %q:\n%s", what, want, text)
					}
				}
			}
		})
	}
	// Without .mcp.json, no MCP tool is named.
	p := loopProject(t)
	if prime := p.mustRun("prime").stdout; strings.Contains(prime, "mcp__") {
		t.Errorf("prime without .mcp.json names MCP tools:\n%s", prime)
	}
}

// TestPrimeBudget: a loop with a long queue and a long progress file still
// primes under 2,000 tokens, the guide and the header whole.
func TestPrimeBudget(t *testing.T) {
	t.Parallel()
	p := loopProject(t)
	var q strings.Builder
	q.WriteString("[")
	for i := range 200 {
		if i > 0 {
			q.WriteString(",")
		}
		fmt.Fprintf(&q, `{"id":"req-%d","category":"feature","title":"%s","impact":"medium","reversible":true}`, i, strings.Repeat("A long title that goes on ", 12))
	}
	q.WriteString("]")
	p.write(pendingRel, q.String())
	p.write(progressRel, strings.Repeat(strings.Repeat("progress notes the agent wrote ", 12)+"\n", 40))
	res := p.mustRun("prime", "--json")
	var got struct {
		Active bool
		Text   string
		Tokens int
	}
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if !got.Active || got.Tokens > hook.MaxPrimeTokens || got.Tokens != hook.EstimateTokens(got.Text) {
		t.Errorf("prime --json = active %t, %d tokens (estimate of its text %d); want active, at most %d", got.Active, got.Tokens, hook.EstimateTokens(got.Text), hook.MaxPrimeTokens)
	}
	for _, want := range []string{"ORBIT loop — iteration 5 of 20.", "Queue: 200 pending", "How to record", "An outcome: append"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("prime cut %q:\n%s", want, got.Text)
		}
	}
}
