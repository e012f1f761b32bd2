package journal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/project"
)

// testEnv is a project in a temporary directory with its index open.
type testEnv struct {
	tb    testing.TB
	ctx   context.Context
	root  string
	proj  project.Project
	store *db.Store
	ix    *Index
}

// fixedNow is the clock of every test index: recovery file names depend on
// it.
var fixedNow = time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)

func newTestEnv(tb testing.TB) *testEnv {
	tb.Helper()
	root := tb.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
		tb.Fatal(err)
	}
	p, err := project.New(root, "")
	if err != nil {
		tb.Fatal(err)
	}
	e := &testEnv{tb: tb, ctx: context.Background(), root: root, proj: p}
	e.open()
	tb.Cleanup(func() { e.store.Close() })
	return e
}

func (e *testEnv) open() {
	e.tb.Helper()
	store, err := db.Open(e.ctx, e.proj.DB, db.Options{})
	if err != nil {
		e.tb.Fatalf("db.Open(%s): %v", e.proj.DB, err)
	}
	e.store = store
	// The decision and retrograde journals only, whatever else the test
	// binary registers (follow_kinds_test.go links every kind).
	e.ix = NewIndex(store, e.proj).Following(defaultFiles()...)
	e.ix.Now = func() time.Time { return fixedNow }
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

// clockAfterWrite sets the index's clock to d after the last write to the
// project file rel, as if sync ran that long after it.
func (e *testEnv) clockAfterWrite(rel string, d time.Duration) {
	e.tb.Helper()
	fi, err := os.Stat(e.path(rel))
	if err != nil {
		e.tb.Fatal(err)
	}
	now := fi.ModTime().Add(d)
	e.ix.Now = func() time.Time { return now }
}

// write replaces a project file.
func (e *testEnv) write(rel, content string) {
	e.tb.Helper()
	if err := os.WriteFile(e.path(rel), []byte(content), 0o644); err != nil {
		e.tb.Fatal(err)
	}
}

// rewrite replaces a project file in place, a second after its last write:
// the tick of a coarse file system clock may not pass between a sync and an
// immediate rewrite, which then leaves no trace in the file's stat.
func (e *testEnv) rewrite(rel, content string) {
	e.tb.Helper()
	fi, err := os.Stat(e.path(rel))
	if err != nil {
		e.tb.Fatal(err)
	}
	e.write(rel, content)
	later := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(e.path(rel), later, later); err != nil {
		e.tb.Fatal(err)
	}
}

// appendRaw appends bytes the way `echo >>` does: no lock, no newline fix-up.
func (e *testEnv) appendRaw(rel, content string) {
	e.tb.Helper()
	f, err := os.OpenFile(e.path(rel), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		e.tb.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		e.tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		e.tb.Fatal(err)
	}
}

func (e *testEnv) read(rel string) string {
	e.tb.Helper()
	b, err := os.ReadFile(e.path(rel))
	if err != nil {
		e.tb.Fatal(err)
	}
	return string(b)
}

func (e *testEnv) sync() SyncReport {
	e.tb.Helper()
	rep, err := e.ix.Sync(e.ctx, SyncOptions{})
	if err != nil {
		e.tb.Fatalf("Sync: %v", err)
	}
	return rep
}

func (e *testEnv) decision(id string) db.DecisionRow {
	e.tb.Helper()
	d, ok, err := e.store.Decision(e.ctx, id)
	if err != nil {
		e.tb.Fatal(err)
	}
	if !ok {
		e.tb.Fatalf("Decision(%q): not indexed", id)
	}
	return d
}

func (e *testEnv) outcome(id string) string {
	e.tb.Helper()
	return e.decision(id).Outcome
}

// snapshot is every answer the index gives about the files, without the
// sequence numbers that depend on the order rows were inserted in.
type snapshot struct {
	Decisions []db.DecisionRow
	Counts    db.Counts
	Findings  []db.LocatedFinding
}

func (e *testEnv) snapshot() snapshot {
	e.tb.Helper()
	ds, err := e.store.LatestDecisions(e.ctx, db.DecisionFilter{})
	if err != nil {
		e.tb.Fatal(err)
	}
	for i := range ds {
		ds[i].Seq = 0
	}
	c, err := e.store.Counts(e.ctx)
	if err != nil {
		e.tb.Fatal(err)
	}
	fs, err := e.store.Findings(e.ctx)
	if err != nil {
		e.tb.Fatal(err)
	}
	for i := range fs {
		fs[i].Seq = 0
	}
	slices.SortStableFunc(fs, func(a, b db.LocatedFinding) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return int(a.Line - b.Line)
		}
		return strings.Compare(a.Code, b.Code)
	})
	return snapshot{Decisions: ds, Counts: c, Findings: fs}
}

// dec returns a seed-format decision line (no newline) with ts minutes after
// 10:00 on the seed's example day.
func dec(id string, iter, minute int) string {
	return fmt.Sprintf(`{"id":%q,"iteration":%d,"ts":%q,"tier":"auto_approve","depth":"trivial","category":"quality","input":"input of %s","decision":"APPROVED","reason":"low risk","next_action":"commit","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"},"confidence":0.9}`,
		id, iter, ts(minute), id)
}

// retroDec is a decision line whose retrograde field gives prev's outcome.
func retroDec(id string, iter, minute int, prev, outcome string) string {
	return fmt.Sprintf(`{"id":%q,"iteration":%d,"ts":%q,"tier":"auto_approve","depth":"trivial","category":"quality","input":"input of %s","decision":"APPROVED","reason":"low risk","next_action":"commit","verification":"PENDING","retrograde":{"previous_id":%q,"outcome":%q},"confidence":0.9}`,
		id, iter, ts(minute), id, prev, outcome)
}

// retroLine is a line of the retrograde journal.
func retroLine(minute int, id, outcome string) string {
	return fmt.Sprintf(`{"ts":%q,"decision_id":%q,"outcome":%q,"evidence":"checked at minute %d"}`, ts(minute), id, outcome, minute)
}

func ts(minute int) string {
	return time.Date(2026, 3, 8, 10, 0, 0, 0, time.UTC).Add(time.Duration(minute) * time.Minute).Format(time.RFC3339)
}

// lines joins records into JSONL text, each line terminated.
func lines(ls ...string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// readAll returns every chunk of data, failing the test on a read error.
func readAll(tb testing.TB, data string, acceptUnterminated bool) []Chunk {
	tb.Helper()
	r := NewReader(strings.NewReader(data), "j.jsonl", 0, 0)
	r.AcceptUnterminated = acceptUnterminated
	var out []Chunk
	for {
		c, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			tb.Fatalf("Next: %v", err)
		}
		out = append(out, c)
		if len(out) > len(data)+1 {
			tb.Fatalf("Next returned more chunks (%d) than the input has bytes", len(out))
		}
	}
}

// checkTiling checks that the chunks cover data exactly, in order, with
// consecutive line numbers.
func checkTiling(tb testing.TB, data string, chunks []Chunk) {
	tb.Helper()
	var off int64
	line := 1
	for i, c := range chunks {
		if c.Offset != off {
			tb.Fatalf("chunk %d (line %d): Offset = %d; want %d (the previous chunk's End)", i, c.Line, c.Offset, off)
		}
		if c.Length <= 0 {
			tb.Fatalf("chunk %d (line %d): Length = %d; want > 0", i, c.Line, c.Length)
		}
		if c.Line != line {
			tb.Fatalf("chunk %d: Line = %d; want %d", i, c.Line, line)
		}
		if c.LineEnd < c.Line {
			tb.Fatalf("chunk %d: LineEnd = %d < Line = %d", i, c.LineEnd, c.Line)
		}
		off = c.End()
		line = c.LineEnd + 1
	}
	if off != int64(len(data)) {
		tb.Fatalf("chunks cover %d bytes; the input has %d", off, len(data))
	}
}

func readTestdata(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
