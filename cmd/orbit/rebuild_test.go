package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/migrations"
)

const indexRel = ".claude/orbit.db"

// answers are the outputs a rebuilt index must reproduce.
func answers(t *testing.T, p *testProject) string {
	t.Helper()
	var b strings.Builder
	for _, args := range [][]string{
		{"log", "--limit", "0", "--json"},
		{"log", "--outcome", "CORRECT"},
		{"export", "--format", "csv"},
	} {
		res := p.run(args...)
		if res.code != exitOK {
			t.Fatalf("orbit %s: exit %d; stderr %q", strings.Join(args, " "), res.code, res.stderr)
		}
		fmt.Fprintf(&b, "$ orbit %s\n%s", strings.Join(args, " "), res.stdout)
	}
	return b.String()
}

// rebuildProject is a project with decisions, outcome events from both
// sources, and a rejected line.
func rebuildProject(t *testing.T) *testProject {
	t.Helper()
	p := projectWith(t, "journal.jsonl")
	p.appendRaw(journalRel, "not json\n")
	p.write(".claude/ceo-loop-retrograde.jsonl",
		`{"ts":"2026-03-08T12:00:00Z","decision_id":"iter-3-1","outcome":"CORRECT","evidence":"held up"}`+"\n")
	return p
}

func TestRebuild(t *testing.T) {
	p := rebuildProject(t)
	before := answers(t, p)
	if !strings.Contains(before, `"id": "iter-3-1"`) {
		t.Fatalf("answers look wrong:\n%s", before)
	}

	res := p.run("rebuild")
	if res.code != exitOK {
		t.Fatalf("rebuild: exit %d; stderr %q", res.code, res.stderr)
	}
	want := "rebuilt: +6 decisions, +4 outcome events, 1 new rejected line\nindex: 6 decisions, 4 outcome events, 1 rejected line, 0 warnings\n"
	if res.stdout != want {
		t.Errorf("rebuild stdout = %q; want %q", res.stdout, want)
	}
	if !strings.HasPrefix(res.stderr, "orbit: .claude/ceo-loop-decisions.jsonl:7: invalid JSON") {
		t.Errorf("rebuild stderr = %q; want the rejected line named again", res.stderr)
	}
	if after := answers(t, p); after != before {
		t.Errorf("answers after rebuild differ:\n%s\nbefore:\n%s", after, before)
	}

	res = p.mustRun("rebuild", "--json=index")
	var got struct {
		Index db.Counts `json:"index"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("rebuild --json does not parse: %v\n%s", err, res.stdout)
	}
	if want := (db.Counts{Decisions: 6, Events: 4, Rejected: 1, Correct: 3, Incorrect: 1}); got.Index != want {
		t.Errorf("rebuild --json index = %+v; want %+v", got.Index, want)
	}
}

func TestIndexDerivedFromFiles(t *testing.T) {
	tests := []struct {
		name       string
		damage     func(t *testing.T, p *testProject)
		wantStderr string // substring of the next command's stderr ("" for empty stderr)
	}{
		{name: "index deleted", damage: func(t *testing.T, p *testProject) {
			if err := os.Remove(p.path(indexRel)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "index and its WAL files deleted", damage: func(t *testing.T, p *testProject) {
			if err := db.Remove(p.path(indexRel)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "index overwritten with garbage", wantStderr: "the index is derived from the journal; rebuilding it", damage: func(t *testing.T, p *testProject) {
			p.write(indexRel, strings.Repeat("this is not an SQLite database\n", 200))
		}},
		{name: "index truncated to a few bytes", wantStderr: "rebuilding it", damage: func(t *testing.T, p *testProject) {
			p.write(indexRel, "SQLite")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := rebuildProject(t)
			before := p.mustRun("log", "--limit", "0", "--json").stdout
			tt.damage(t, p)
			res := p.run("log", "--limit", "0", "--json")
			if res.code != exitOK {
				t.Fatalf("log after the damage: exit %d; stderr %q", res.code, res.stderr)
			}
			if res.stdout != before {
				t.Errorf("log --json after the damage differs:\n%s\nbefore:\n%s", res.stdout, before)
			}
			if tt.wantStderr != "" && !strings.Contains(res.stderr, tt.wantStderr) {
				t.Errorf("stderr = %q; want it to say %q", res.stderr, tt.wantStderr)
			}
			if tt.wantStderr != "" && !strings.Contains(res.stderr, p.path(indexRel)) {
				t.Errorf("stderr = %q; want it to name the index", res.stderr)
			}
			// And the next command finds a sound index again.
			if res := p.mustRun("log", "--limit", "0", "--json"); res.stdout != before || strings.Contains(res.stderr, "rebuilding") {
				t.Errorf("second log after the damage = %q, stderr %q; want the same answer without a rebuild", res.stdout, res.stderr)
			}
		})
	}
}

func TestIndexNewerSchema(t *testing.T) {
	p := rebuildProject(t)
	before := p.mustRun("log", "--limit", "0", "--json").stdout
	store, err := db.Open(context.Background(), p.path(indexRel), db.Options{NoMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.DB.Exec(fmt.Sprintf("PRAGMA user_version = %d", migrations.Version+1)); err != nil {
		t.Fatal(err)
	}
	store.Close()

	res := p.run("log")
	if res.code != exitError {
		t.Errorf("log on a newer index: exit %d; want %d", res.code, exitError)
	}
	if got := lines(res.stderr); len(got) != 1 || !strings.Contains(res.stderr, "index schema is newer than this binary") || !strings.Contains(res.stderr, "orbit rebuild") {
		t.Errorf("stderr = %q; want one line saying the index is newer and to run orbit rebuild", res.stderr)
	}
	// The advice works.
	p.mustRun("rebuild")
	if got := p.mustRun("log", "--limit", "0", "--json").stdout; got != before {
		t.Errorf("log after rebuild = %s; want %s", got, before)
	}
	if _, err := os.Stat(p.path(indexRel)); errors.Is(err, os.ErrNotExist) {
		t.Errorf("no index after rebuild")
	}
}
