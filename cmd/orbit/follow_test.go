package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/internal/followtest"
	"github.com/orbit-loop/orbit/journal"
)

// verifyFile is one file of `orbit verify --json`.
type verifyFile struct {
	Path    string `json:"path"`
	Kind    string `json:"kind"`
	Records int    `json:"records"`
	Indexed int    `json:"indexed"`
}

// verifyJSON runs `orbit verify --json` and returns its exit code and the
// file at path.
func verifyJSON(t *testing.T, p *testProject, path string) (int, verifyFile) {
	t.Helper()
	res := p.run("verify", "--json")
	var v struct {
		Files []verifyFile `json:"files"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &v); err != nil {
		t.Fatalf("verify --json: %v\n%s", err, res.stdout)
	}
	for _, f := range v.Files {
		if f.Path == path {
			return res.code, f
		}
	}
	t.Fatalf("verify --json lists no %s: %+v", path, v.Files)
	return 0, verifyFile{}
}

// TestCommandsCoverEveryKind: sync, verify and rebuild read every kind of
// append-only file. A line edited in place is found by verify (file:line,
// exit 3), the next sync rebuilds the file's part of the index and saves
// what it held, and a rebuild from nothing gives back the same index.
func TestCommandsCoverEveryKind(t *testing.T) {
	for _, spec := range journal.Followed() {
		kind := spec.Kind.Name()
		t.Run(kind, func(t *testing.T) {
			line, ok := followtest.Line(kind, 0)
			if !ok {
				t.Fatalf("kind %q has no test lines in internal/followtest", kind)
			}
			// Line 2 lies before the 4 KiB the tail hash covers.
			n := 4096/len(line) + 10
			p := newProject(t)
			p.write(spec.Path, followtest.Lines(kind, 1, n))

			res := p.mustRun("sync", "--json=records_added")
			var added struct {
				Added map[string]int `json:"records_added"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &added); err != nil {
				t.Fatal(err)
			}
			if added.Added[kind] != n-1 || len(added.Added) != len(journal.Followed()) {
				t.Errorf("sync --json records_added = %v; want %d %s and every kind named", added.Added, n-1, kind)
			}
			if code, f := verifyJSON(t, p, spec.Path); code != exitOK || f.Kind != kind || f.Indexed != n-1 || f.Records != n-1 {
				t.Errorf("verify after sync: exit %d, %+v; want 0 and %d records indexed", code, f, n-1)
			}

			// Line 2 edited in place, the file's size kept.
			l2, _ := followtest.Line(kind, 2)
			edited, _ := followtest.Line(kind, 900002)
			p.write(spec.Path, strings.Replace(p.read(spec.Path), l2, edited, 1))
			res = p.run("verify")
			if want := spec.Path + ":2: append-only promise broken"; res.code != exitFindings || !strings.Contains(res.stdout, "\n"+want) {
				t.Errorf("verify after an edit: exit %d; want %d and %q in\n%s", res.code, exitFindings, want, res.stdout)
			}

			// The next sync rebuilds the file's part and saves what it held.
			res = p.mustRun("sync")
			if want := "orbit: " + spec.Path + ":2: append-only promise broken"; !strings.Contains(res.stderr, want) {
				t.Errorf("sync after verify: stderr %q; want %q", res.stderr, want)
			}
			saved, err := filepath.Glob(p.path(".claude/orbit-recovered-*.jsonl"))
			if err != nil || len(saved) != 1 {
				t.Fatalf("recovery files %q, %v; want one", saved, err)
			}
			if got, err := os.ReadFile(saved[0]); err != nil || string(got) != followtest.Lines(kind, 2, n) {
				t.Errorf("recovery file holds\n%s\nwant lines 2..%d as the index held them (%v)", got, n-1, err)
			}
			if code, f := verifyJSON(t, p, spec.Path); code != exitOK || f.Indexed != n-1 {
				t.Errorf("verify after the sync: exit %d, %+v; want 0 and %d indexed", code, f, n-1)
			}

			// A rebuild from nothing gives back the same index.
			before := p.mustRun("verify", "--json").stdout
			res = p.mustRun("rebuild", "--json=records_added")
			if err := json.Unmarshal([]byte(res.stdout), &added); err != nil {
				t.Fatal(err)
			}
			if added.Added[kind] != n-1 {
				t.Errorf("rebuild records_added = %v; want %d %s", added.Added, n-1, kind)
			}
			if after := p.mustRun("verify", "--json").stdout; after != before {
				t.Errorf("verify after rebuild:\n%s\nbefore:\n%s", after, before)
			}
		})
	}
}

// TestRebuildRestoresLoopHistory: the loop events journal is the truth of
// every loop's history; a rebuilt index shows the same.
func TestRebuildRestoresLoopHistory(t *testing.T) {
	p := frameworkProject(t, "project")
	const id = "ccw:loop-v2-20260122-abc123"
	p.mustRun("loop", "list")
	p.mustRun("loop", "stop", id, "--reason", "operator")
	before := p.mustRun("loop", "show", id, "--json=history").stdout
	if !strings.Contains(before, `"event": "seen"`) || !strings.Contains(before, `"event": "stop"`) {
		t.Fatalf("history before the rebuild:\n%s\nwant seen and stop", before)
	}
	res := p.mustRun("rebuild")
	if want := fmt.Sprintf(", +%d %s records,", len(lines(p.read(".claude/orbit-loop-events.jsonl"))), "loop-events"); !strings.Contains(res.stdout, want) {
		t.Errorf("rebuild = %q; want it to count the loop events (%q)", res.stdout, want)
	}
	if after := p.mustRun("loop", "show", id, "--json=history").stdout; after != before {
		t.Errorf("history after the rebuild:\n%s\nwant\n%s", after, before)
	}
	// A tampered event line is found by verify.
	events := p.read(".claude/orbit-loop-events.jsonl")
	p.write(".claude/orbit-loop-events.jsonl", strings.Replace(events, `"event":"stop"`, `"event":"stap"`, 1))
	if res := p.run("verify"); res.code != exitFindings || !strings.Contains(res.stdout, ".claude/orbit-loop-events.jsonl:") {
		t.Errorf("verify of a tampered loop event: exit %d\n%s", res.code, res.stdout)
	}
}
