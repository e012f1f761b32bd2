// Package projecttest makes the temporary projects and indexes tests run
// on: one helper instead of one per test file.
package projecttest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// New creates an empty project: a temporary directory holding .claude/.
func New(tb testing.TB) project.Project {
	tb.Helper()
	return At(tb, tb.TempDir())
}

// At makes dir a project (creating dir/.claude/).
func At(tb testing.TB, dir string) project.Project {
	tb.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		tb.Fatal(err)
	}
	p, err := project.New(dir, "")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Open opens the project's index, closed when the test ends; its clock is
// now (the real one when zero).
func Open(tb testing.TB, p project.Project, now time.Time) *journal.Index {
	tb.Helper()
	store, err := db.Open(context.Background(), p.DB, db.Options{})
	if err != nil {
		tb.Fatalf("db.Open(%s): %v", p.DB, err)
	}
	tb.Cleanup(func() { store.Close() })
	ix := journal.NewIndex(store, p)
	if !now.IsZero() {
		ix.Now = func() time.Time { return now }
	}
	return ix
}

// Synced is Open, then a sync that must reject nothing.
func Synced(tb testing.TB, p project.Project, now time.Time) *journal.Index {
	tb.Helper()
	ix := Open(tb, p, now)
	rep, err := ix.Sync(context.Background(), journal.SyncOptions{})
	if err != nil {
		tb.Fatalf("sync: %v", err)
	}
	if rep.Errors() > 0 {
		tb.Fatalf("sync rejected lines: %v", rep.Problems)
	}
	return ix
}
