package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/journal"
)

// verifyFixture is what verify says of the journal.jsonl fixture's project:
// its decisions, and every other followed file empty.
const verifyFixture = ".claude/ceo-loop-decisions.jsonl: 6 records, 6 indexed, 0 rejected lines\n" +
	".claude/ceo-loop-retrograde.jsonl: 0 records, 0 indexed, 0 rejected lines\n" +
	".claude/orbit-knowledge.jsonl: 0 records, 0 indexed, 0 rejected lines\n" +
	".claude/orbit-loop-events.jsonl: 0 records, 0 indexed, 0 rejected lines\n"

const verifyClean = verifyFixture + "verify: journal and index agree (0 warnings)\n"

func TestVerifyClean(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	p.mustRun("sync")
	res := p.run("verify")
	if res.code != exitOK {
		t.Errorf("verify: exit %d; want 0", res.code)
	}
	if res.stdout != verifyClean || res.stderr != "" {
		t.Errorf("verify = %q, stderr %q; want %q, \"\"", res.stdout, res.stderr, verifyClean)
	}
}

// TestVerifyEditedPast rewrites the journal's past in different ways: each
// is found, named by file and line, and exits 3.
func TestVerifyEditedPast(t *testing.T) {
	fixture := lines(string(readFixture(t, "journal.jsonl")))
	join := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	tests := []struct {
		name     string
		edit     func(p *testProject)
		wantLine string // the finding's location
	}{
		{name: "one byte changed in place, same size", wantLine: ".claude/ceo-loop-decisions.jsonl:2: append-only promise broken: line 2 changed", edit: func(p *testProject) {
			p.write(journalRel, strings.Replace(p.read(journalRel), "Streaming needs it.", "Streaming needs IT.", 1))
		}},
		{name: "same size and the old mtime restored", wantLine: ".claude/ceo-loop-decisions.jsonl:3: append-only promise broken: line 3 changed", edit: func(p *testProject) {
			fi, err := os.Stat(p.path(journalRel))
			if err != nil {
				t.Fatal(err)
			}
			p.write(journalRel, strings.Replace(p.read(journalRel), "CI takes 25 minutes.", "CI takes 52 minutes.", 1))
			if err := os.Chtimes(p.path(journalRel), time.Time{}, fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "line made longer", wantLine: ".claude/ceo-loop-decisions.jsonl:1: append-only promise broken: line 1 changed", edit: func(p *testProject) {
			p.write(journalRel, strings.Replace(p.read(journalRel), "Focus beats breadth.", "Focus beats breadth, always.", 1))
		}},
		{name: "line deleted", wantLine: ".claude/ceo-loop-decisions.jsonl:4: append-only promise broken", edit: func(p *testProject) {
			p.write(journalRel, join(append(append([]string{}, fixture[:3]...), fixture[4:]...)...))
		}},
		{name: "last line deleted", wantLine: ".claude/ceo-loop-decisions.jsonl:6: append-only promise broken: line 6 is gone", edit: func(p *testProject) {
			p.write(journalRel, join(fixture[:5]...))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := projectWith(t, "journal.jsonl")
			p.mustRun("sync")
			tt.edit(p)
			res := p.run("verify")
			if res.code != exitFindings {
				t.Errorf("verify: exit %d; want %d\nstdout:\n%s", res.code, exitFindings, res.stdout)
			}
			if !strings.Contains(res.stdout, "\n"+tt.wantLine) {
				t.Errorf("verify stdout does not contain %q:\n%s", tt.wantLine, res.stdout)
			}
			if want := "orbit: verify: 1 problem\n"; res.stderr != want {
				t.Errorf("verify stderr = %q; want %q", res.stderr, want)
			}
			// verify changes nothing: it finds the same again.
			if again := p.run("verify"); again.stdout != res.stdout || again.code != exitFindings {
				t.Errorf("second verify = exit %d\n%s\nwant the same as the first", again.code, again.stdout)
			}
		})
	}
}

func TestVerifyTornLastLine(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	p.mustRun("sync")
	p.appendRaw(journalRel, `{"id":"iter-4-1","iteration":4,"ts":"2026-03-`)
	res := p.run("verify")
	if res.code != exitOK {
		t.Errorf("verify with a torn last line: exit %d; want 0", res.code)
	}
	want := verifyFixture +
		".claude/ceo-loop-decisions.jsonl:7: warning: last line has no newline (a write in progress, or one cut short); not indexed\n" +
		"verify: journal and index agree (1 warning)\n"
	if res.stdout != want || res.stderr != "" {
		t.Errorf("verify = %q, stderr %q; want %q, \"\"", res.stdout, res.stderr, want)
	}
}

func TestVerifyRejectedLine(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	p.appendRaw(journalRel, "[1,2]\n")
	p.mustRun("sync")
	res := p.run("verify")
	if res.code != exitFindings {
		t.Errorf("verify with a rejected line: exit %d; want %d", res.code, exitFindings)
	}
	if !strings.Contains(res.stdout, ".claude/ceo-loop-decisions.jsonl:7: record is a JSON array, not an object\n") {
		t.Errorf("verify stdout does not name the rejected line:\n%s", res.stdout)
	}
}

func TestVerifyJSON(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	p.mustRun("sync")
	res := p.mustRun("verify", "--json")
	var got struct {
		OK       bool  `json:"ok"`
		Files    []any `json:"files"`
		Findings []any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("verify --json does not parse: %v\n%s", err, res.stdout)
	}
	if want := len(journal.Followed()); !got.OK || len(got.Files) != want || got.Findings == nil || len(got.Findings) != 0 {
		t.Errorf("verify --json = %+v; want ok, %d files (every followed file), empty findings", got, want)
	}

	p.write(journalRel, strings.Replace(p.read(journalRel), "iter-1-1", "iter-1-9", 1))
	res = p.run("verify", "--json=ok")
	if res.code != exitFindings {
		t.Errorf("verify --json on an edited journal: exit %d; want %d", res.code, exitFindings)
	}
	if got := strings.Join(strings.Fields(res.stdout), ""); got != `{"ok":false}` {
		t.Errorf("verify --json=ok = %q; want {\"ok\": false}", res.stdout)
	}
}
