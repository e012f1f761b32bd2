package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// victimFile is a file outside the project a hostile checkout aims at.
func victimFile(t *testing.T) (path, content string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), ".bashrc")
	content = "# the user's shell start-up\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, content
}

func assertUnchanged(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s was changed: %q; want %q", path, got, want)
	}
}

// TestHookLogLinkRefused reproduces the attack of issue 16: a checkout
// ships .claude/orbit-hook.log as a link to the user's .bashrc and a state
// file whose iteration is "$(touch …)". The hook reports the bad state,
// refuses the log (naming it), and the .bashrc is untouched.
func TestHookLogLinkRefused(t *testing.T) {
	t.Parallel()
	p := loopProject(t)
	bashrc, content := victimFile(t)
	if err := os.Symlink(bashrc, p.path(hookLogRel)); err != nil {
		t.Fatal(err)
	}
	p.write(stateRel, strings.Replace(loopState(5, 20), `"iteration": 5`, `"iteration": "$(touch /tmp/orbit-pwned)"`, 1))
	res, out := p.stop(testNow, stopInput{SessionID: "s1", LastAssistantMessage: "next"})
	if !strings.Contains(out.SystemMessage, "iteration is") {
		t.Errorf("systemMessage = %q; want the state file's fault", out.SystemMessage)
	}
	if !strings.Contains(res.stderr, "hook log: refuse "+p.path(hookLogRel)+": a symbolic link") {
		t.Errorf("stderr = %q; want the refused log named", res.stderr)
	}
	assertUnchanged(t, bashrc, content)
}

// TestHookLogEscapes: whatever the input quotes, a log line holds no
// control character and nothing a shell would run.
func TestHookLogEscapes(t *testing.T) {
	t.Parallel()
	p := loopProject(t)
	p.write(stateRel, strings.Replace(loopState(5, 20), `"iteration": 5`, "\"iteration\": \"$(touch /tmp/x) `id` \\u001b[31m\\u0007\"", 1))
	p.stop(testNow, stopInput{SessionID: "s\x1b]0;title\x07", LastAssistantMessage: "next"})
	log := p.lastLog()
	if log == "" {
		t.Fatal("no log line")
	}
	if strings.ContainsAny(log, "`\x1b\x07\x00") || strings.Contains(log, "$(") {
		t.Errorf("log line %q holds active text", log)
	}
	for _, want := range []string{`\x24(touch /tmp/x)`, `\x60id\x60`, `session=s\x1b]0;title\x07`} {
		if !strings.Contains(log, want) {
			t.Errorf("log line %q lacks %q", log, want)
		}
	}
}

// TestJournalLinkRefused: a decision journal or a lock that is a link
// outside the project makes orbit decide fail, naming the file, and
// nothing is written where the link points.
func TestJournalLinkRefused(t *testing.T) {
	t.Parallel()
	for _, rel := range []string{journalRel, stateRel + ".lock", ".claude/ceo-loop-retrograde.jsonl"} {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			t.Parallel()
			p := projectWith(t, "journal.jsonl")
			target, content := victimFile(t)
			if rel == journalRel {
				os.Remove(p.path(rel))
			}
			if err := os.Symlink(target, p.path(rel)); err != nil {
				t.Fatal(err)
			}
			args := []string{"decide", "--title", "t", "--category", "quality", "--impact", "low", "--reversible", "--decision", "APPROVED", "--reason", "r"}
			switch {
			case strings.Contains(rel, "retrograde"):
				p.write(journalRel, string(readFixture(t, "journal.jsonl")))
				args = []string{"retro", "iter-1-1", "CORRECT", "--evidence", "e"}
			case strings.HasSuffix(rel, ".lock"):
				p.write(stateRel, loopState(5, 20))
				args = []string{"loop", "stop"}
			}
			res := p.run(args...)
			if res.code == exitOK {
				t.Errorf("orbit %s: exit 0; want a refusal", args[0])
			}
			if !strings.Contains(res.stderr, "a symbolic link") {
				t.Errorf("stderr = %q; want the link named", res.stderr)
			}
			assertUnchanged(t, target, content)
		})
	}
}

// TestClaudeDirLinkRefused: .claude itself a link to another directory:
// nothing is created there.
func TestClaudeDirLinkRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(root, ".claude")); err != nil {
		t.Fatal(err)
	}
	res := orbit(t, env{}, "--root", root, "decide", "--title", "t", "--category", "quality", "--impact", "low", "--reversible", "--decision", "APPROVED", "--reason", "r")
	if res.code == exitOK || !strings.Contains(res.stderr, "a symbolic link") {
		t.Errorf("exit %d, stderr %q; want a refusal naming the link", res.code, res.stderr)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("orbit created %v in the link's target", entries)
	}
}

// TestLogEscapesControlCharacters: a decision titled with ESC, BEL and NUL
// prints them escaped, on a terminal and piped.
func TestLogEscapesControlCharacters(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(journalRel, `{"id":"iter-1-1","iteration":1,"ts":"2026-03-08T10:00:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"\u001b[31mred\u0007bell\u0000nul","decision":"APPROVED","reason":"r","next_action":"n","verification":"PENDING","confidence":0.9}`+"\n")
	for _, res := range []result{p.runTTY("log"), p.run("log")} {
		if res.code != exitOK {
			t.Fatalf("orbit log: exit %d: %s", res.code, res.stderr)
		}
		if strings.ContainsAny(res.stdout, "\x1b\x07\x00") {
			t.Errorf("orbit log printed raw control characters: %q", res.stdout)
		}
		if !strings.Contains(res.stdout, `\x1b[31mred\x07bell\x00nul`) {
			t.Errorf("orbit log = %q; want the title escaped", res.stdout)
		}
	}
}
