package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/orbit-loop/orbit/migrations"
	"github.com/orbit-loop/orbit/project"
)

// schemaVersion is the index schema version init reports.
var schemaVersion = strconv.Itoa(migrations.Version)

// dirListing returns the names under dir, recursively, sorted.
func dirListing(tb testing.TB, dir string) []string {
	tb.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		names = append(names, rel)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// identityLine is what init says of the project identity it created (or
// found) under root.
func identityLine(tb testing.TB, root, verb string) string {
	tb.Helper()
	p, err := project.New(root, "")
	if err != nil {
		tb.Fatal(err)
	}
	id, err := p.ReadIdentity()
	if err != nil {
		tb.Fatal(err)
	}
	return "  " + verb + "  " + project.IdentityFile + " (project id " + id.ID + ")\n"
}

func TestInit(t *testing.T) {
	root := t.TempDir()

	res := orbit(t, env{}, "--root", root, "init")
	if res.code != exitOK {
		t.Fatalf("first init: exit %d; stderr %q", res.code, res.stderr)
	}
	want := "orbit project in " + root + "\n" +
		"  created  .claude/\n" +
		identityLine(t, root, "created") +
		"  created  .claude/ceo-loop-decisions.jsonl\n" +
		"  created  .claude/orbit.db (schema v" + schemaVersion + ", 0 decisions indexed)\n"
	if res.stdout != want {
		t.Errorf("first init stdout = %q; want %q", res.stdout, want)
	}
	if res.stderr != "" {
		t.Errorf("first init stderr = %q; want empty", res.stderr)
	}
	if fi, err := os.Stat(filepath.Join(root, journalRel)); err != nil || fi.Size() != 0 {
		t.Fatalf("journal after init: %v, %v; want an empty file", fi, err)
	}
	if _, err := os.Stat(filepath.Join(root, ".claude", "orbit.db")); err != nil {
		t.Fatalf("index after init: %v", err)
	}
	before := dirListing(t, root)

	res = orbit(t, env{}, "--root", root, "init")
	if res.code != exitOK {
		t.Fatalf("second init: exit %d; stderr %q", res.code, res.stderr)
	}
	want = "orbit project in " + root + "\n" +
		"  exists   .claude/\n" +
		identityLine(t, root, "exists ") +
		"  exists   .claude/ceo-loop-decisions.jsonl\n" +
		"  exists   .claude/orbit.db (schema v" + schemaVersion + ", 0 decisions indexed)\n"
	if res.stdout != want {
		t.Errorf("second init stdout = %q; want %q", res.stdout, want)
	}
	if after := dirListing(t, root); !slices.Equal(after, before) {
		t.Errorf("second init changed the tree: %q; want %q", after, before)
	}
	if fi, err := os.Stat(filepath.Join(root, journalRel)); err != nil || fi.Size() != 0 {
		t.Errorf("journal after second init: %v, %v; want still empty", fi, err)
	}
}

// TestInitKeepsJournal runs init where a journal already exists: it is
// indexed, never truncated.
func TestInitKeepsJournal(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	journal := p.read(journalRel)
	res := p.mustRun("init")
	want := "orbit project in " + p.root + "\n" +
		"  exists   .claude/\n" +
		identityLine(t, p.root, "created") +
		"  exists   .claude/ceo-loop-decisions.jsonl\n" +
		"  created  .claude/orbit.db (schema v" + schemaVersion + ", 6 decisions indexed)\n"
	if res.stdout != want {
		t.Errorf("init stdout = %q; want %q", res.stdout, want)
	}
	if got := p.read(journalRel); got != journal {
		t.Errorf("init changed the journal")
	}
}

func TestInitInWorkingDirectory(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	wd := t.TempDir()
	res := orbit(t, env{wd: wd}, "init")
	if res.code != exitOK {
		t.Fatalf("init: exit %d; stderr %q", res.code, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, journalRel)); err != nil {
		t.Errorf("init in the working directory did not create the journal: %v", err)
	}
}

func TestInitNotADirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		root string
	}{
		{name: "a file", root: file},
		{name: "missing", root: filepath.Join(dir, "missing")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := orbit(t, env{}, "--root", tt.root, "init")
			if res.code != exitError {
				t.Errorf("init --root %s: exit %d; want %d", tt.root, res.code, exitError)
			}
			if want := "orbit: init: " + tt.root + " is not a directory\n"; res.stderr != want {
				t.Errorf("stderr = %q; want %q", res.stderr, want)
			}
			if res.stdout != "" {
				t.Errorf("stdout = %q; want empty", res.stdout)
			}
			if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
				t.Errorf("init created the missing root")
			}
		})
	}
}
