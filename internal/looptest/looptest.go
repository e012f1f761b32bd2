// Package looptest owns the fixtures the loop packages' tests share (loop,
// frameworks, citadel): the fixture trees under testdata/loops copied into
// a temporary project, an index beside it, and small readers.
package looptest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
)

// Now is the clock of the loop tests.
var Now = time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)

// Fixture is a loop fixture tree under testdata/loops (the tests run in a
// top-level package's directory).
func Fixture(name string) string {
	return filepath.Join("..", "testdata", "loops", filepath.FromSlash(name))
}

// CopyTree copies a fixture tree into a temporary project (with .claude/)
// and returns its root.
func CopyTree(tb testing.TB, name string) string {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), "project")
	if err := os.CopyFS(root, os.DirFS(Fixture(name))); err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
		tb.Fatal(err)
	}
	// CopyFS keeps the read-only modes of copied examples.
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chmod(p, 0o644)
		}
		return nil
	})
	return root
}

// OpenHistory opens an index beside the project and its loop history.
func OpenHistory(tb testing.TB, root string) *loop.History {
	tb.Helper()
	store, err := db.Open(context.Background(), filepath.Join(root, ".claude", "orbit.db"), db.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	return &loop.History{Root: root, Store: store}
}

// ViewOf scans root and returns the loop with key framework:id.
func ViewOf(tb testing.TB, root, key string) loop.View {
	tb.Helper()
	s := frameworks.ScanProject(root, Now)
	for _, v := range s.Loops {
		if v.Key() == key {
			return v
		}
	}
	tb.Fatalf("no loop %s in %s (problems: %v)", key, root, s.Problems)
	return loop.View{}
}

// ReadJSON reads a JSON object file.
func ReadJSON(tb testing.TB, path string) map[string]any {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return m
}

// Write writes a file, and its directories.
func Write(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// Contains reports whether any of list holds sub.
func Contains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// KindsOf lists the indexed history of one loop as event:status.
func KindsOf(tb testing.TB, h *loop.History, framework, id string) []string {
	tb.Helper()
	hist, err := h.Of(context.Background(), framework, id)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range hist {
		out = append(out, e.Kind+":"+e.Status)
	}
	return out
}

// Index is the index h's journal is kept in, over h's project, for what
// needs the whole index (frameworks.Control, the ORBIT loop's stop).
func Index(tb testing.TB, h *loop.History) *journal.Index {
	tb.Helper()
	p, err := project.New(h.Root, filepath.Join(h.Root, ".claude", "orbit.db"))
	if err != nil {
		tb.Fatal(err)
	}
	return journal.NewIndex(h.Store, p)
}
