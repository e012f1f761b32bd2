package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/internal/golden"
	"github.com/orbit-loop/orbit/project"
)

// bulkSource writes a journal of n decisions, every seventh with an outcome
// of an earlier one, every eleventh verified and with a request id (in the
// partial indexes), to a file in dir.
func bulkSource(tb testing.TB, dir string, n int) string {
	tb.Helper()
	var gen bytes.Buffer
	outcomes := []string{"CORRECT", "INCORRECT", "N/A"}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("gen-%d", i)
		if i%7 == 0 {
			gen.WriteString(retroDec(id, i/10, i%600, fmt.Sprintf("gen-%d", i-1-(i*31)%(i-1)), outcomes[i%3]))
		} else {
			line := dec(id, i/10, i%600)
			if i%11 == 0 {
				line = strings.Replace(line, `"verification":"PENDING"`, `"verification":"CONFIRMED"`, 1)
				line = strings.TrimSuffix(line, "}") + fmt.Sprintf(`,"request_id":"req-%d"}`, i)
			}
			gen.WriteString(line)
		}
		gen.WriteByte('\n')
	}
	path := filepath.Join(dir, "source.jsonl")
	if err := os.WriteFile(path, gen.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// syncedDump is the index sync makes of a decision journal, and the
// definitions of its indexes.
func syncedDump(tb testing.TB, journal string) string {
	tb.Helper()
	e := newTestEnv(tb)
	e.write(project.DecisionsFile, journal)
	e.sync()
	return e.bulkDump()
}

// bulkDump is indexDump with the definitions of the tables' indexes, which
// a bulk load drops and creates again.
func (e *testEnv) bulkDump() string {
	e.tb.Helper()
	var defs []string
	if err := e.store.DB.Select(&defs, `SELECT name || ': ' || coalesce(sql, '') FROM sqlite_master WHERE type = 'index' ORDER BY name`); err != nil {
		e.tb.Fatal(err)
	}
	return strings.Join(defs, "\n") + "\n" + e.indexDump()
}

// indexCount counts the indexes of a table.
func (e *testEnv) indexCount(table string) int {
	e.tb.Helper()
	var n int
	if err := e.store.DB.Get(&n, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = ?`, table); err != nil {
		e.tb.Fatal(err)
	}
	return n
}

// bulkPending reports whether the index holds a bulk load's mark.
func (e *testEnv) bulkPending() bool {
	e.tb.Helper()
	_, bulk, err := e.store.SyncStates(e.ctx)
	if err != nil {
		e.tb.Fatal(err)
	}
	return bulk
}

func withImportFlushHook(tb testing.TB, fn func(flush int) error) {
	n := 0
	afterImportFlush = func() error { n++; return fn(n) }
	tb.Cleanup(func() { afterImportFlush = nil })
}

// An import into an empty index builds the full-text index on the side and
// copies it in at the end: the index is the one sync makes.
func TestBulkImportIndexesAsSyncDoes(t *testing.T) {
	src := bulkSource(t, t.TempDir(), ImportFlushRecords+2500)
	e := newTestEnv(t)
	var pending []bool
	withImportFlushHook(t, func(int) error {
		pending = append(pending, e.bulkPending())
		return nil
	})
	e.importFiles(ImportOptions{}, src)
	if len(pending) != 2 || !pending[0] || !pending[1] {
		t.Fatalf("bulk load pending after each flush: %v; want it pending until the end", pending)
	}
	if e.bulkPending() {
		t.Fatal("the bulk load is still pending after the import")
	}
	if _, err := os.Stat(db.BulkTextPath(e.proj.DB)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the scratch database is left behind: %v", err)
	}
	if got, want := e.bulkDump(), syncedDump(t, e.read(project.DecisionsFile)); got != want {
		t.Errorf("the bulk import's index differs from sync's:\n%s", golden.FirstDiff(got, want))
	}
	// Every index holds its table's rows (the partial ones, kept during
	// the load, some).
	var check string
	var partial int
	if err := e.store.DB.Get(&check, `PRAGMA integrity_check`); err != nil || check != "ok" {
		t.Errorf("integrity check: %q, %v", check, err)
	}
	if err := e.store.DB.Get(&partial, `SELECT count(*) FROM decisions INDEXED BY decisions_request WHERE request_id <> ''`); err != nil || partial == 0 {
		t.Errorf("decisions_request holds %d rows (%v); want some", partial, err)
	}
}

// An import cut short half-way leaves decisions whose full-text entries
// were still on the side, and the mark: the next command (another process,
// the index opened again) finishes the load, so its answers are complete.
func TestBulkImportCutShort(t *testing.T) {
	for _, at := range []int{1, 2} {
		t.Run(fmt.Sprintf("after flush %d", at), func(t *testing.T) {
			src := bulkSource(t, t.TempDir(), ImportFlushRecords+2500)
			e := newTestEnv(t)
			crash := errors.New("crash")
			withImportFlushHook(t, func(n int) error {
				if n == at {
					return crash
				}
				return nil
			})
			if _, err := e.ix.Import(e.ctx, []string{src}, ImportOptions{}); !errors.Is(err, crash) {
				t.Fatalf("Import: %v; want the injected crash", err)
			}
			afterImportFlush = nil
			if !e.bulkPending() {
				t.Fatal("no bulk load pending after the import was cut short")
			}
			var missing int
			if err := e.store.DB.Get(&missing, `SELECT (SELECT count(*) FROM decisions) - (SELECT count(*) FROM decisions_fts WHERE decisions_fts MATCH 'decision')`); err != nil {
				t.Fatal(err)
			}
			if missing == 0 {
				t.Fatal("every decision has its full-text entry already: the test cuts nothing short")
			}
			var kept []string
			if err := e.store.DB.Select(&kept, `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'decisions' ORDER BY name`); err != nil {
				t.Fatal(err)
			}
			// The id's index and the partial ones (request_id set,
			// verification not PENDING) stay.
			if want := "decisions_request decisions_verification sqlite_autoindex_decisions_1"; strings.Join(kept, " ") != want {
				t.Fatalf("decisions has the indexes %q half-way; want %s", kept, want)
			}
			// The next command: a new process opens the index and syncs.
			// A crash leaves the scratch database behind, too.
			if err := e.store.Close(); err != nil {
				t.Fatal(err)
			}
			scratch := db.BulkTextPath(e.proj.DB)
			if err := os.WriteFile(scratch, []byte("left by a crash"), 0o644); err != nil {
				t.Fatal(err)
			}
			e.open()
			e.sync()
			if e.bulkPending() {
				t.Fatal("the bulk load is still pending after the next sync")
			}
			if _, err := os.Stat(scratch); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the scratch database a crash left is still there: %v", err)
			}
			journal := e.read(project.DecisionsFile)
			want := ImportFlushRecords
			if at == 2 {
				want += 2500
			}
			if n := strings.Count(journal, "\n"); n != want {
				t.Fatalf("the journal holds %d lines; want %d", n, want)
			}
			if got, want := e.bulkDump(), syncedDump(t, journal); got != want {
				t.Errorf("the index after the next sync differs from sync's:\n%s", golden.FirstDiff(got, want))
			}
		})
	}
}

// A sync by another process during the import finishes its bulk load (the
// full-text index rebuilt from the decisions so far); the import then
// indexes the text of the rest itself and copies nothing in.
func TestBulkImportFinishedByAnotherSync(t *testing.T) {
	src := bulkSource(t, t.TempDir(), ImportFlushRecords+2500)
	e := newTestEnv(t)
	withImportFlushHook(t, func(n int) error {
		if n != 1 {
			return nil
		}
		other := NewIndex(e.store, e.proj).Following(defaultFiles()...)
		if _, err := other.Sync(e.ctx, SyncOptions{}); err != nil {
			return err
		}
		if e.bulkPending() {
			t.Error("another process's sync left the bulk load pending")
		}
		return nil
	})
	e.importFiles(ImportOptions{}, src)
	if got, want := e.bulkDump(), syncedDump(t, e.read(project.DecisionsFile)); got != want {
		t.Errorf("the index differs from sync's:\n%s", golden.FirstDiff(got, want))
	}
}

// A re-import into an index that holds decisions is no bulk load.
func TestBulkImportOnlyIntoAnEmptyIndex(t *testing.T) {
	src := bulkSource(t, t.TempDir(), 100)
	e := newTestEnv(t)
	e.write(project.DecisionsFile, dec("first", 1, 1)+"\n")
	e.sync()
	withImportFlushHook(t, func(int) error {
		if e.bulkPending() {
			t.Error("a bulk load into an index that held a decision")
		}
		return nil
	})
	e.importFiles(ImportOptions{}, src)
	if got, want := e.bulkDump(), syncedDump(t, e.read(project.DecisionsFile)); got != want {
		t.Errorf("the index differs from sync's:\n%s", golden.FirstDiff(got, want))
	}
}

// A sync transaction that finds another process's bulk load pending (one
// that began after the sync read the files' states) finishes it in the
// same transaction, before the decisions it adds count as indexed.
func TestBulkPendingFinishedBySyncBatch(t *testing.T) {
	e := newTestEnv(t)
	e.sync()
	err := e.store.InTx(e.ctx, func(tx *db.Tx) error {
		began, err := tx.BeginBulk(e.ctx, "another process")
		if err == nil && !began {
			err = errors.New("no bulk load began on an empty index")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	journal := dec("a", 1, 1) + "\n" + retroDec("b", 1, 2, "a", "CORRECT") + "\n"
	e.write(project.DecisionsFile, journal)
	// As if this sync had read the states before the mark was written.
	e.ix.bulk = &bulkText{owner: "this process"}
	e.sync()
	e.ix.bulk = nil
	if e.bulkPending() {
		t.Fatal("the sync left another process's bulk load pending")
	}
	if got, want := e.bulkDump(), syncedDump(t, journal); got != want {
		t.Errorf("the index differs from sync's:\n%s", golden.FirstDiff(got, want))
	}
}

// A migration finishes a bulk load cut short before it changes the schema:
// the indexes it dropped are created as they were, the full-text index
// rebuilt.
func TestBulkImportCutShortThenMigrated(t *testing.T) {
	src := bulkSource(t, t.TempDir(), ImportFlushRecords+10)
	e := newTestEnv(t)
	crash := errors.New("crash")
	withImportFlushHook(t, func(int) error { return crash })
	if _, err := e.ix.Import(e.ctx, []string{src}, ImportOptions{}); !errors.Is(err, crash) {
		t.Fatalf("Import: %v; want the injected crash", err)
	}
	afterImportFlush = nil
	// As if the index were of the schema before this binary's.
	if _, err := e.store.DB.Exec(`PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	e.open()
	if e.bulkPending() {
		t.Fatal("the bulk load is still pending after the migration")
	}
	// The migration alone finished it (every line the import appended was
	// indexed before the crash).
	if got, want := e.bulkDump(), syncedDump(t, e.read(project.DecisionsFile)); got != want {
		t.Errorf("the index after the migration differs from sync's:\n%s", golden.FirstDiff(got, want))
	}
	e.sync()
	if got, want := e.bulkDump(), syncedDump(t, e.read(project.DecisionsFile)); got != want {
		t.Errorf("the index after the migration and a sync differs from sync's:\n%s", golden.FirstDiff(got, want))
	}
}

// An import's sync indexes the lines it appended while their fsync runs,
// and commits only after it: an fsync that fails leaves them unindexed
// (the index is never ahead of the journal), and a slow one holds the
// commit back.
func TestImportCommitsAfterTheJournalFsync(t *testing.T) {
	src := bulkSource(t, t.TempDir(), ImportFlushRecords+2500)
	e := newTestEnv(t)
	failed := errors.New("fsync failed")
	var fsyncs int
	fsync = func(f *os.File) error {
		fsyncs++
		// The index holds nothing of this flush yet, even after the
		// time its inserts take: read by another connection while the
		// import's transaction is open.
		time.Sleep(500 * time.Millisecond)
		other, err := db.Open(e.ctx, e.proj.DB, db.Options{ReadOnly: true})
		if err != nil {
			return err
		}
		defer other.Close()
		var n int
		if err := other.DB.Get(&n, `SELECT count(*) FROM decisions`); err != nil {
			return err
		}
		if want := (fsyncs - 1) * ImportFlushRecords; n != want {
			t.Errorf("fsync %d: the index holds %d decisions before the journal's lines are durable; want %d", fsyncs, n, want)
		}
		if fsyncs == 2 {
			return failed
		}
		return f.Sync()
	}
	t.Cleanup(func() { fsync = (*os.File).Sync })
	if _, err := e.ix.Import(e.ctx, []string{src}, ImportOptions{}); !errors.Is(err, failed) {
		t.Fatalf("Import: %v; want the failed fsync", err)
	}
	var n int
	if err := e.store.DB.Get(&n, `SELECT count(*) FROM decisions`); err != nil || n != ImportFlushRecords {
		t.Fatalf("the index holds %d decisions (%v) after the second flush's fsync failed; want the first flush's %d", n, err, ImportFlushRecords)
	}
	// The lines are in the file: the next sync indexes them.
	fsync = (*os.File).Sync
	e.sync()
	if got, want := e.bulkDump(), syncedDump(t, e.read(project.DecisionsFile)); got != want {
		t.Errorf("the index after the next sync differs from sync's:\n%s", golden.FirstDiff(got, want))
	}
}

// A bulk import finds an id of an earlier flush without asking the index
// for every id (bulkText.ids), and so skips a repeated record and reports
// a conflicting one as an import into a non-empty index does.
func TestBulkImportRepeatedIDs(t *testing.T) {
	dir := t.TempDir()
	src := bulkSource(t, dir, ImportFlushRecords+100)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	// In the second flush: gen-3 again, as it is, and gen-4 with another
	// input.
	extra := lines[2] + strings.Replace(lines[3], "input of gen-4", "another input", 1)
	if err := os.WriteFile(src, []byte(string(data)+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	var reps []ImportFile
	for _, empty := range []bool{true, false} {
		e := newTestEnv(t)
		if !empty {
			e.write(project.DecisionsFile, dec("before", 0, 0)+"\n")
			e.sync()
		}
		rep := e.importFiles(ImportOptions{}, src)
		reps = append(reps, *rep.Files[0])
		if len(rep.Problems) != 1 || rep.Problems[0].Code != CodeConflict || rep.Problems[0].RecordID != "gen-4" {
			t.Errorf("empty index %v: problems %+v; want a conflict for gen-4", empty, rep.Problems)
		}
		if n := strings.Count(e.read(project.DecisionsFile), `"id":"gen-3"`); n != 1 {
			t.Errorf("empty index %v: the journal holds gen-3 %d times", empty, n)
		}
	}
	want := ImportFile{Records: ImportFlushRecords + 102, Appended: ImportFlushRecords + 100, Skipped: 1, Conflicts: 1}
	for i, rep := range reps {
		rep.Path = ""
		if rep != want {
			t.Errorf("import %d: %+v; want %+v", i, rep, want)
		}
	}
}
