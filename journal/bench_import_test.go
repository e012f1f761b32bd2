package journal

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/project"
)

func BenchmarkImportTmp(b *testing.B) {
	src := os.Getenv("ORBIT_BENCH_SRC")
	if src == "" {
		b.Skip("ORBIT_BENCH_SRC not set")
	}
	for b.Loop() {
		dir := b.TempDir()
		os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
		p, _ := project.New(dir, "")
		store, err := db.Open(context.Background(), p.DB, db.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ix := NewIndex(store, p)
		if _, err := ix.Import(context.Background(), []string{src}, ImportOptions{}); err != nil {
			b.Fatal(err)
		}
		store.Close()
	}
}

func BenchmarkRebuildTmp(b *testing.B) {
	src := os.Getenv("ORBIT_BENCH_SRC")
	if src == "" {
		b.Skip("ORBIT_BENCH_SRC not set")
	}
	for b.Loop() {
		dir := b.TempDir()
		os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
		os.Symlink(src, filepath.Join(dir, ".claude", "ceo-loop-decisions.jsonl"))
		p, _ := project.New(dir, "")
		store, err := db.Open(context.Background(), p.DB, db.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ix := NewIndex(store, p)
		if _, err := ix.Sync(context.Background(), SyncOptions{}); err != nil {
			b.Fatal(err)
		}
		store.Close()
	}
}
