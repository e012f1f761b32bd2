package knowledge

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/internal/golden"
	"github.com/orbit-loop/orbit/internal/projecttest"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// fixedNow is the clock of every test index.
var fixedNow = time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)

// fixture is the path of a file under testdata/knowledge.
func fixture(name string) string { return filepath.Join("..", "testdata", "knowledge", name) }

func readFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(fixture(name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// goldenFile compares got with testdata/knowledge/name (-update rewrites
// it).
func goldenFile(tb testing.TB, name string, got []byte) {
	tb.Helper()
	golden.Check(tb, fixture(name), got)
}

// goldenJSON compares v, as indented JSON, with a golden file.
func goldenJSON(tb testing.TB, name string, v any) {
	tb.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		tb.Fatal(err)
	}
	goldenFile(tb, name, b.Bytes())
}

// testEnv is a project in a temporary directory with its index open.
type testEnv struct {
	tb    testing.TB
	ctx   context.Context
	root  string
	proj  project.Project
	store *db.Store
	k     *Index
	jix   *journal.Index
	now   time.Time
}

func newTestEnv(tb testing.TB) *testEnv {
	tb.Helper()
	p := projecttest.New(tb)
	e := &testEnv{tb: tb, ctx: context.Background(), root: p.Root, proj: p, now: fixedNow}
	e.open()
	return e
}

// open opens the index (closed when the test ends), its clock e.now.
func (e *testEnv) open() {
	e.tb.Helper()
	e.jix = projecttest.Open(e.tb, e.proj, time.Time{})
	e.jix.Now = func() time.Time { return e.now }
	e.store = e.jix.Store
	e.k = New(e.store, e.proj)
	e.k.Now = e.jix.Now
}

// rebuild deletes the index and opens an empty one.
func (e *testEnv) rebuild() {
	e.tb.Helper()
	if err := e.store.Close(); err != nil {
		e.tb.Fatal(err)
	}
	if err := db.Remove(e.proj.DB); err != nil {
		e.tb.Fatal(err)
	}
	e.open()
}

func (e *testEnv) path(rel string) string { return e.proj.Path(rel) }

// write replaces a project file, creating its directory.
func (e *testEnv) write(rel string, content []byte) {
	e.tb.Helper()
	p := e.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.tb.Fatal(err)
	}
	if err := os.WriteFile(p, content, 0o644); err != nil {
		e.tb.Fatal(err)
	}
}

func (e *testEnv) read(rel string) []byte {
	e.tb.Helper()
	b, err := os.ReadFile(e.path(rel))
	if err != nil {
		e.tb.Fatal(err)
	}
	return b
}

// knowledgeFile is the path of a file of the default knowledge directory.
func knowledgeFile(name string) string { return filepath.Join(DefaultDir, name) }

// withErrors puts a fixture in place as conductor/knowledge/errors.json.
func (e *testEnv) withErrors(name string) {
	e.tb.Helper()
	e.write(knowledgeFile(ErrorsFile), readFixture(e.tb, name))
}

func (e *testEnv) sync() SyncReport {
	e.tb.Helper()
	rep, err := e.k.Sync(e.ctx)
	if err != nil {
		e.tb.Fatalf("Sync: %v", err)
	}
	return rep
}

func (e *testEnv) match(text string, k int) []Match {
	e.tb.Helper()
	ms, err := e.k.Match(e.ctx, text, MatchOptions{K: k, Record: true})
	if err != nil {
		e.tb.Fatalf("Match(%q): %v", text, err)
	}
	return ms
}

func keys(ms []Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Via + ":" + m.Key
	}
	return out
}

// appendJournal appends whole lines to the knowledge journal under its lock.
func (k *Index) appendJournal(lines []byte) error {
	app, err := journal.OpenAppender(k.Project.Root, JournalFile)
	if err != nil {
		return err
	}
	if err := app.Append(lines); err != nil {
		app.Close()
		return err
	}
	return app.Close()
}
