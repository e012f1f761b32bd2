package loop_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/loop"
)

// testNow is the clock of the loop tests.
var testNow = time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)

// fixture is a loop fixture tree under testdata/loops.
func fixture(name string) string {
	return filepath.Join("..", "testdata", "loops", filepath.FromSlash(name))
}

// copyTree copies a fixture tree into a temporary project (with .claude/)
// and returns its root.
func copyTree(tb testing.TB, name string) string {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), "project")
	if err := os.CopyFS(root, os.DirFS(fixture(name))); err != nil {
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

// openHistory opens an index beside the project and its loop history.
func openHistory(tb testing.TB, root string) *loop.History {
	tb.Helper()
	store, err := db.Open(context.Background(), filepath.Join(root, ".claude", "orbit.db"), db.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	return &loop.History{Root: root, Store: store}
}

// viewOf scans root and returns the loop with key framework:id.
func viewOf(tb testing.TB, root, key string) loop.View {
	tb.Helper()
	s := loop.ScanProject(root, testNow)
	for _, v := range s.Loops {
		if v.Key() == key {
			return v
		}
	}
	tb.Fatalf("no loop %s in %s (problems: %v)", key, root, s.Problems)
	return loop.View{}
}

func readJSON(tb testing.TB, path string) map[string]any {
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

func write(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// contains reports whether any of list holds sub.
func contains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
