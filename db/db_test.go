package db_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/migrations"
)

// openStore opens (creating) the index at path and closes it when the test
// ends.
func openStore(tb testing.TB, path string, opts db.Options) *db.Store {
	tb.Helper()
	store, err := db.Open(context.Background(), path, opts)
	if err != nil {
		tb.Fatalf("Open(%q) error: %v", path, err)
	}
	tb.Cleanup(func() { store.Close() })
	return store
}

// newStore opens a fresh index in a temporary directory.
func newStore(tb testing.TB) *db.Store {
	tb.Helper()
	return openStore(tb, filepath.Join(tb.TempDir(), "orbit.db"), db.Options{})
}

// queryInt runs a query returning one integer.
func queryInt(tb testing.TB, store *db.Store, query string, args ...any) int64 {
	tb.Helper()
	var n int64
	if err := store.DB.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

// setUserVersion writes PRAGMA user_version into the database at path.
func setUserVersion(tb testing.TB, path string, v int64) {
	tb.Helper()
	store, err := db.Open(context.Background(), path, db.Options{NoMigrate: true})
	if err != nil {
		tb.Fatalf("Open(%q, NoMigrate) error: %v", path, err)
	}
	defer store.Close()
	if _, err := store.DB.Exec(fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		tb.Fatalf("set user_version: %v", err)
	}
}

func TestOpenCreatesSchema(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)

	v, err := store.UserVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v != migrations.Version {
		t.Errorf("UserVersion() = %d; want migrations.Version %d", v, migrations.Version)
	}
	for _, table := range []string{"goose_db_version", "journal_files", "decisions", "outcome_events", "decision_outcomes", "findings", "decisions_fts"} {
		if n := queryInt(t, store, `SELECT count(*) FROM sqlite_master WHERE name = ?`, table); n != 1 {
			t.Errorf("table %s: %d entries in sqlite_master; want 1", table, n)
		}
	}
	if n := queryInt(t, store, `SELECT count(*) FROM goose_db_version WHERE version_id = ? AND is_applied`, migrations.Version); n != 1 {
		t.Errorf("goose_db_version rows for version %d = %d; want 1", migrations.Version, n)
	}
}

func TestOpenFTS5Match(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	rows := []db.DecisionRow{
		{ID: "iter-1-1", Line: 1, LineEnd: 1, Iteration: 1, Tier: "auto_approve", Depth: "trivial", Category: "quality",
			Input: "Add ESLint auto-fix to CI pipeline", Decision: "APPROVED", Reason: "Low risk", Raw: "{}"},
		{ID: "iter-1-2", Line: 2, LineEnd: 2, Iteration: 1, Tier: "deep_think", Depth: "heavy", Category: "architecture",
			Input: "SQLite vs Postgres for agent memory storage", Decision: "APPROVED", Reason: "Postgres adds an operational dependency", Raw: "{}"},
	}
	err := store.InTx(ctx, func(tx *db.Tx) error {
		st := db.FileState{Path: ".claude/ceo-loop-decisions.jsonl", Kind: "decisions"}
		if err := tx.SaveFileState(ctx, &st); err != nil {
			return err
		}
		for i := range rows {
			rows[i].FileID = st.ID
			if ok, err := tx.InsertDecision(ctx, &rows[i]); err != nil || !ok {
				return fmt.Errorf("InsertDecision(%s) = %v, %v", rows[i].ID, ok, err)
			}
		}
		return tx.IndexText(ctx, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		match string
		want  []string
	}{
		{name: "input word", match: "eslint", want: []string{"iter-1-1"}},
		{name: "porter stem", match: "dependencies", want: []string{"iter-1-2"}},
		{name: "reason column", match: "reason:risk", want: []string{"iter-1-1"}},
		{name: "no match", match: "kubernetes", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := store.DB.SelectContext(ctx, &got, `SELECT d.id FROM decisions_fts JOIN decisions d ON d.seq = decisions_fts.rowid
				WHERE decisions_fts MATCH ? ORDER BY d.seq`, tt.match)
			if err != nil {
				t.Fatalf("MATCH %q: %v", tt.match, err)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("MATCH %q = %v; want %v", tt.match, got, tt.want)
			}
		})
	}
}

func TestOpenCurrentSchemaSkipsGoose(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orbit.db")
	store, err := db.Open(ctx, path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// If goose ran again, it would find no applied migration and try to
	// create the tables a second time, which fails.
	if _, err := store.DB.Exec(`DELETE FROM goose_db_version WHERE version_id > 0`); err != nil {
		t.Fatal(err)
	}
	before := queryInt(t, store, `SELECT count(*) FROM goose_db_version`)
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	store = openStore(t, path, db.Options{})
	if v, err := store.UserVersion(ctx); err != nil || v != migrations.Version {
		t.Errorf("UserVersion() after reopen = %d, %v; want %d", v, err, migrations.Version)
	}
	if after := queryInt(t, store, `SELECT count(*) FROM goose_db_version`); after != before {
		t.Errorf("goose_db_version rows after reopen = %d; want %d (goose ran again)", after, before)
	}
}

func TestOpenReopenKeepsVersionAndRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orbit.db")
	first, err := db.Open(ctx, path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gooseRows := queryInt(t, first, `SELECT count(*) FROM goose_db_version`)
	first.Close()
	for i := range 3 {
		store, err := db.Open(ctx, path, db.Options{})
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		v, err := store.UserVersion(ctx)
		if err != nil || v != migrations.Version {
			t.Errorf("reopen %d: UserVersion() = %d, %v; want %d", i, v, err, migrations.Version)
		}
		if n := queryInt(t, store, `SELECT count(*) FROM goose_db_version`); n != gooseRows {
			t.Errorf("reopen %d: goose_db_version rows = %d; want %d", i, n, gooseRows)
		}
		store.Close()
	}
}

func TestOpenMigratesOlderSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orbit.db")
	// An index created without migrating: user_version 0, no tables.
	setUserVersion(t, path, 0)
	store := openStore(t, path, db.Options{})
	if v, err := store.UserVersion(ctx); err != nil || v != migrations.Version {
		t.Errorf("UserVersion() = %d, %v; want %d", v, err, migrations.Version)
	}
	if n := queryInt(t, store, `SELECT count(*) FROM decisions`); n != 0 {
		t.Errorf("decisions = %d; want 0", n)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orbit.db")
	openStore(t, path, db.Options{}).Close()
	setUserVersion(t, path, migrations.Version+1)

	store, err := db.Open(context.Background(), path, db.Options{})
	if err == nil {
		store.Close()
		t.Fatalf("Open(index v%d) succeeded; want ErrNewerSchema", migrations.Version+1)
	}
	if !errors.Is(err, db.ErrNewerSchema) {
		t.Errorf("Open(index v%d) error = %v; want one wrapping ErrNewerSchema", migrations.Version+1, err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("Open error %q does not name %s", err, path)
	}
	// The refusal must leave the file as it was.
	store = openStore(t, path, db.Options{NoMigrate: true})
	if v, _ := store.UserVersion(context.Background()); v != migrations.Version+1 {
		t.Errorf("user_version after refused Open = %d; want %d", v, migrations.Version+1)
	}
}

func TestOpenUnreadable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return b
	}
	tests := []struct {
		name    string
		content []byte
	}{
		{name: "short text", content: []byte("this is not a database\n")},
		{name: "100 random bytes", content: random(100)},
		{name: "16 KiB random bytes", content: random(16 << 10)},
		{name: "text page", content: bytes.Repeat([]byte("garbage "), 1024)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "orbit.db")
			if err := os.WriteFile(path, tt.content, 0o644); err != nil {
				t.Fatal(err)
			}
			store, err := db.Open(context.Background(), path, db.Options{})
			if err == nil {
				store.Close()
				t.Fatalf("Open(garbage) succeeded; want ErrUnreadable")
			}
			if !errors.Is(err, db.ErrUnreadable) {
				t.Errorf("Open(garbage) error = %v; want one wrapping ErrUnreadable", err)
			}
		})
	}
}

func TestOpenJournalModeWAL(t *testing.T) {
	store := newStore(t)
	var mode string
	if err := store.DB.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q; want wal", mode)
	}
	for _, tt := range []struct {
		pragma string
		want   int64
	}{
		{pragma: "foreign_keys", want: 1},
		{pragma: "busy_timeout", want: 10000},
		{pragma: "synchronous", want: 1}, // NORMAL
		// Set before the journal mode, which fixes it once the file
		// exists: with the pragmas in the driver's sorted list, WAL came
		// first and every index had 4 KiB pages.
		{pragma: "page_size", want: 16384},
	} {
		if got := queryInt(t, store, "PRAGMA "+tt.pragma); got != tt.want {
			t.Errorf("PRAGMA %s = %d; want %d", tt.pragma, got, tt.want)
		}
	}
}

func TestOpenPathWithSpecialCharacters(t *testing.T) {
	for _, name := range []string{"with space", "per%20cent", "hash#mark", "question?mark", "ampersand&x=1"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "orbit.db")
			store := openStore(t, path, db.Options{})
			if v, err := store.UserVersion(context.Background()); err != nil || v != migrations.Version {
				t.Errorf("UserVersion() = %d, %v; want %d", v, err, migrations.Version)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("index not created at %s: %v", path, err)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orbit.db")
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(files) != migrations.Version {
		t.Fatalf("migrations %q, %v; want %d files", files, err, migrations.Version)
	}
	names := func(ms []db.MigrationStatus, applied bool) []string {
		var out []string
		for _, m := range ms {
			if m.Applied == applied && (!applied || !m.AppliedAt.IsZero()) {
				out = append(out, fmt.Sprintf("%d %s", m.Version, m.Name))
			}
		}
		return out
	}
	var want []string
	for i, f := range files {
		want = append(want, fmt.Sprintf("%d %s", i+1, f))
	}

	fresh := openStore(t, path, db.Options{NoMigrate: true})
	st, err := fresh.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(st, false); !slices.Equal(got, want) || len(st) != len(want) {
		t.Errorf("Status() before migrating = %+v; want %q pending", st, want)
	}
	applied, err := fresh.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range applied {
		got = append(got, fmt.Sprintf("%d %s", m.Version, m.Name))
	}
	if !slices.Equal(got, want) {
		t.Errorf("Migrate() = %q; want %q", got, want)
	}
	again, err := fresh.Migrate(ctx)
	if err != nil || len(again) != 0 {
		t.Errorf("second Migrate() = %+v, %v; want nothing applied", again, err)
	}
	st, err = fresh.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(st, true); !slices.Equal(got, want) || len(st) != len(want) {
		t.Errorf("Status() after migrating = %+v; want %q applied with a time", st, want)
	}
}

// TestMigrateFromV1: an index of schema v1 that holds decisions keeps them
// through v2 (journal_files is rebuilt under them), loses the unused
// decisions_vocab, forgets the knowledge journal's events (the next sync
// reads them again into journal_files), and then takes a file of any kind.
func TestMigrateFromV1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orbit.db")
	store := openStore(t, path, db.Options{NoMigrate: true})
	p, err := goose.NewProvider(goose.DialectSQLite3, store.DB.DB, migrations.FS, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO journal_files (id, path, kind, synced_offset, records) VALUES (1, '.claude/ceo-loop-decisions.jsonl', 'decisions', 100, 1)`,
		`INSERT INTO decisions (id, file_id, line, line_end, byte_offset, iteration, tier, depth, category, input, decision, raw)
			VALUES ('iter-1-1', 1, 1, 1, 0, 1, 'quick_review', 'light', 'feature', 'x', 'APPROVED', '{}')`,
		`INSERT INTO findings (file_id, line, line_end, byte_offset, length, severity, code, message) VALUES (1, 2, 2, 100, 5, 'error', 'invalid-json', 'bad')`,
		`INSERT INTO knowledge_files (id, path, kind) VALUES (1, '.claude/orbit-knowledge.jsonl', 'journal'), (2, 'conductor/knowledge/errors.json', 'errors')`,
		`INSERT INTO knowledge_events (file_id, line, event, path) VALUES (1, 1, 'hit', 'conductor/knowledge/errors.json')`,
	} {
		if _, err := store.DB.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, store, `SELECT count(*) FROM decisions d JOIN journal_files f ON f.id = d.file_id WHERE f.synced_offset = 100`); n != 1 {
		t.Errorf("decisions of the journal after the migration = %d; want 1", n)
	}
	if n := queryInt(t, store, `SELECT count(*) FROM findings`); n != 1 {
		t.Errorf("findings after the migration = %d; want 1", n)
	}
	if n := queryInt(t, store, `SELECT count(*) FROM sqlite_schema WHERE name = 'decisions_vocab'`); n != 0 {
		t.Errorf("decisions_vocab still exists")
	}
	if n := queryInt(t, store, `SELECT count(*) FROM knowledge_events`) + queryInt(t, store, `SELECT count(*) FROM knowledge_files WHERE kind = 'journal'`); n != 0 {
		t.Errorf("knowledge journal rows after the migration = %d; want none (read again by the next sync)", n)
	}
	if n := queryInt(t, store, `SELECT count(*) FROM knowledge_files`); n != 1 {
		t.Errorf("knowledge files after the migration = %d; want errors.json kept", n)
	}
	if _, err := store.DB.ExecContext(ctx, `INSERT INTO journal_files (path, kind) VALUES ('.claude/orbit-knowledge.jsonl', 'knowledge')`); err != nil {
		t.Errorf("journal_files refuses another kind: %v", err)
	}
	if _, err := store.DB.ExecContext(ctx, `INSERT INTO findings (file_id, line, line_end, byte_offset, length, severity, code, message) VALUES (99, 1, 1, 0, 1, 'error', 'x', 'x')`); err == nil {
		t.Errorf("a finding of no file was accepted: the foreign key to journal_files is gone")
	}
	var fk []string
	if err := store.DB.SelectContext(ctx, &fk, `SELECT "table" FROM pragma_foreign_key_check`); err != nil || len(fk) != 0 {
		t.Errorf("foreign key check = %q, %v; want nothing", fk, err)
	}

	// Down to v1: the decisions stay, the files v1 does not follow go.
	if _, err := p.DownTo(ctx, 1); err != nil {
		t.Fatalf("down to v1: %v", err)
	}
	if n := queryInt(t, store, `SELECT count(*) FROM decisions`) + queryInt(t, store, `SELECT count(*) FROM sqlite_schema WHERE name = 'decisions_vocab'`); n != 2 {
		t.Errorf("after down: decisions + decisions_vocab = %d; want 2", n)
	}
	if n := queryInt(t, store, `SELECT count(*) FROM journal_files WHERE kind = 'knowledge'`); n != 0 {
		t.Errorf("after down: %d knowledge journal states; want none", n)
	}
	if _, err := store.DB.ExecContext(ctx, `INSERT INTO knowledge_events (file_id, line, event, path) VALUES (2, 1, 'hit', 'x')`); err != nil {
		t.Errorf("after down, knowledge_events does not take a knowledge file: %v", err)
	}
}

func TestRemove(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "orbit.db")
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Remove(path); err != nil {
		t.Fatalf("Remove() = %v", err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there after Remove (stat error %v)", filepath.Base(p), err)
		}
	}
	if err := db.Remove(path); err != nil {
		t.Errorf("Remove() of a missing index = %v; want nil", err)
	}
}

// TestConcurrentWriters runs read-then-write transactions from several
// stores on one file: every write transaction begins IMMEDIATE, so none fails
// with SQLITE_BUSY and no increment is lost.
func TestConcurrentWriters(t *testing.T) {
	const writers, txs = 8, 20
	path := filepath.Join(t.TempDir(), "orbit.db")
	openStore(t, path, db.Options{}).Close()
	runWriters(t, path, writers, txs)
	store := openStore(t, path, db.Options{})
	st, found, err := store.FileState(context.Background(), "counter")
	if err != nil || !found {
		t.Fatalf("FileState(counter) = %v, %v", found, err)
	}
	if st.SyncedLines != writers*txs {
		t.Errorf("counter = %d; want %d (lost updates)", st.SyncedLines, writers*txs)
	}
}

// TestOpenWaitsForWriterOnNewIndex models two processes creating the index
// at once: the first holds the write lock of a database still in rollback
// mode (as while it switches the file to WAL), the second opens it. Open has
// a busy timeout, so it must wait for the lock and succeed, not fail with
// SQLITE_BUSY.
func TestOpenWaitsForWriterOnNewIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orbit.db")
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetMaxOpenConns(1)
	if _, err := other.Exec(`CREATE TABLE other (x)`); err != nil {
		t.Fatal(err)
	}
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO other VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	const hold = 200 * time.Millisecond
	released := make(chan error, 1)
	go func() {
		time.Sleep(hold)
		released <- tx.Commit()
	}()
	defer func() {
		if err := <-released; err != nil {
			t.Errorf("commit of the other writer: %v", err)
		}
	}()

	start := time.Now()
	store, err := db.Open(context.Background(), path, db.Options{})
	if err != nil {
		t.Fatalf("Open while another connection holds the write lock failed after %v: %v; want it to wait (busy timeout) and succeed",
			time.Since(start).Round(time.Millisecond), err)
	}
	defer store.Close()
	if v, err := store.UserVersion(context.Background()); err != nil || v != migrations.Version {
		t.Errorf("UserVersion() = %d, %v; want %d", v, err, migrations.Version)
	}
}

// runWriters opens one store per writer on path and has each increment a
// counter (a journal_files row) txs times, each in one read-then-write
// transaction.
func runWriters(t *testing.T, path string, writers, txs int) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, writers*txs+writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			store, err := db.Open(ctx, path, db.Options{})
			if err != nil {
				errs <- fmt.Errorf("writer %d: open: %w", w, err)
				return
			}
			defer store.Close()
			for i := range txs {
				err := store.InTx(ctx, func(tx *db.Tx) error {
					st, _, err := tx.FileState(ctx, "counter")
					if err != nil {
						return err
					}
					st.Kind = "decisions"
					st.SyncedLines++
					return tx.SaveFileState(ctx, &st)
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d, transaction %d: %w", w, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		n++
		if n <= 5 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Errorf("%d of %d transactions failed", n, writers*txs)
	}
}
