package journal_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/internal/projecttest"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/synth"
)

// generated returns a synthetic journal of n decisions.
func generated(tb testing.TB, n int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := synth.Generate(&buf, synth.Options{Decisions: n, Seed: 1}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// benchProject makes a project in a new directory under dir whose decision
// journal holds data, and opens its (new) index.
func benchProject(tb testing.TB, dir string, data []byte) (*journal.Index, func()) {
	tb.Helper()
	root, err := os.MkdirTemp(dir, "project-")
	if err != nil {
		tb.Fatal(err)
	}
	p := projecttest.At(tb, root)
	if data != nil {
		if err := os.WriteFile(p.Path(project.DecisionsFile), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	store, err := db.Open(context.Background(), p.DB, db.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return journal.NewIndex(store, p), func() { store.Close() }
}

func BenchmarkParseDecision(b *testing.B) {
	var ls [][]byte
	sc := bufio.NewScanner(bytes.NewReader(generated(b, 1000)))
	total := 0
	for sc.Scan() {
		ls = append(ls, bytes.Clone(sc.Bytes()))
		total += len(sc.Bytes())
	}
	b.SetBytes(int64(total / len(ls)))
	i := 0
	for b.Loop() {
		if _, _, bad := journal.ParseDecision(ls[i%len(ls)]); bad != nil {
			b.Fatalf("line %d rejected", i%len(ls)+1)
		}
		i++
	}
}

func BenchmarkReader(b *testing.B) {
	data := generated(b, 10000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r := journal.NewReader(bytes.NewReader(data), "bench.jsonl", 0, 0)
		n := 0
		for {
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 10000 {
			b.Fatalf("read %d chunks; want 10000", n)
		}
	}
}

// BenchmarkRebuild is a sync into a new index: what the first command after
// deleting the index costs.
func BenchmarkRebuild(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("decisions=%d", n), func(b *testing.B) {
			data := generated(b, n)
			dir := b.TempDir()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				ix, done := benchProject(b, dir, data)
				rep, err := ix.Sync(context.Background(), journal.SyncOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Decisions != n {
					b.Fatalf("synced %d decisions; want %d", rep.Decisions, n)
				}
				done()
			}
		})
	}
}

// BenchmarkDecideHookPath appends one decision under the lock and syncs it
// into an index that already holds a journal: the cost of `orbit decide`
// after process start.
func BenchmarkDecideHookPath(b *testing.B) {
	ix, done := benchProject(b, b.TempDir(), generated(b, 10000))
	defer done()
	ctx := context.Background()
	if _, err := ix.Sync(ctx, journal.SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	path := ix.Project.Path(project.DecisionsFile)
	i := 0
	for b.Loop() {
		i++
		line := fmt.Sprintf(`{"id":"bench-%d","iteration":9999,"ts":"2026-03-09T10:00:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"benchmark decision","decision":"APPROVED","reason":"r","next_action":"n","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"},"confidence":0.9}`+"\n", i)
		a, err := journal.OpenAppender("", path)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Append([]byte(line)); err != nil {
			b.Fatal(err)
		}
		if err := a.Close(); err != nil {
			b.Fatal(err)
		}
		rep, err := ix.Sync(ctx, journal.SyncOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Decisions != 1 {
			b.Fatalf("synced %d decisions; want 1", rep.Decisions)
		}
	}
}

// BenchmarkSyncUnchanged is a sync with nothing new: one stat per file.
func BenchmarkSyncUnchanged(b *testing.B) {
	ix, done := benchProject(b, b.TempDir(), generated(b, 1000))
	defer done()
	ctx := context.Background()
	if _, err := ix.Sync(ctx, journal.SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rep, err := ix.Sync(ctx, journal.SyncOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Decisions != 0 {
			b.Fatalf("synced %d decisions; want 0", rep.Decisions)
		}
	}
}

func BenchmarkImport(b *testing.B) {
	const n = 1000
	dir := b.TempDir()
	src := filepath.Join(dir, "source.jsonl")
	data := generated(b, n)
	if err := os.WriteFile(src, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ix, done := benchProject(b, dir, nil)
		rep, err := ix.Import(context.Background(), []string{src}, journal.ImportOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Files[0].Appended != n {
			b.Fatalf("imported %d decisions; want %d", rep.Files[0].Appended, n)
		}
		done()
	}
}

func BenchmarkAppend(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	line := generated(b, 1)
	for b.Loop() {
		a, err := journal.OpenAppender("", path)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Append(line); err != nil {
			b.Fatal(err)
		}
		if err := a.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
