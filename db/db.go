package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/migrations"
)

func init() {
	// sqlx does not know modernc's driver name.
	sqlx.BindDriver("sqlite", sqlx.QUESTION)
}

// Store is an open index. It holds one connection: every write transaction
// begins IMMEDIATE, so concurrent processes queue on SQLite's lock instead of
// failing with SQLITE_BUSY half-way through a read-then-write.
type Store struct {
	DB   *sqlx.DB
	Path string
}

// ErrUnreadable reports an index file SQLite cannot read (not a database,
// corrupt). The index is derived, so the caller may delete it and rebuild.
var ErrUnreadable = errors.New("index is unreadable")

// ErrNewerSchema reports an index written by a newer orbit.
var ErrNewerSchema = errors.New("index schema is newer than this binary")

// Options tune Open.
type Options struct {
	// NoMigrate leaves the schema as it is (for `orbit migrate status`).
	NoMigrate bool
	// ReadOnly opens the database read-only (no migration either).
	ReadOnly bool
	// Conns is the connection pool size of a read-only store (default 1;
	// a writable store always has one connection).
	Conns int
}

// DSN returns the modernc connection string for path: every per-connection
// pragma is in the DSN, because db.Exec("PRAGMA …") reaches one pooled
// connection only.
func DSN(path string, readOnly bool) string {
	return dsn(path, readOnly, "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(1)")
}

// dsn is the connection string of a database orbit opens at path: its page
// size and busy timeout, the pragmas given, immediate transactions.
func dsn(path string, readOnly bool, pragmas ...string) string {
	q := url.Values{}
	// page_size takes effect only when the file is created (a no-op after),
	// and only before the journal mode is set: the driver runs the _pragma
	// list sorted by name, so journal_mode goes in its _journal_mode key,
	// which it applies after the list. 16 KiB pages cost an import of 1M
	// decisions 19% less CPU than 4 KiB.
	q.Add("_pragma", "page_size(16384)")
	q.Add("_pragma", "busy_timeout(10000)")
	for _, p := range pragmas {
		if mode, ok := strings.CutPrefix(p, "journal_mode("); ok {
			q.Set("_journal_mode", strings.TrimSuffix(mode, ")"))
			continue
		}
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	if readOnly {
		q.Set("mode", "ro")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Open opens the index at path, creating it if absent, checks that it is in
// WAL mode, and migrates it when its schema version differs from
// migrations.Version (unless opts.NoMigrate).
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	sdb, err := sqlx.Open("sqlite", DSN(path, opts.ReadOnly))
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	conns := 1
	if opts.ReadOnly && opts.Conns > 1 {
		conns = opts.Conns
	}
	sdb.SetMaxOpenConns(conns)
	sdb.SetMaxIdleConns(conns)
	sdb.SetConnMaxIdleTime(0)
	s := &Store{DB: sdb, Path: path}
	if err := s.checkRetry(ctx); err != nil {
		sdb.Close()
		return nil, err
	}
	if opts.NoMigrate || opts.ReadOnly {
		return s, nil
	}
	v, err := s.UserVersion(ctx)
	if err != nil {
		sdb.Close()
		return nil, err
	}
	if v == migrations.Version {
		return s, nil
	}
	if v > migrations.Version {
		sdb.Close()
		return nil, fmt.Errorf("open index %s: %w (index v%d, binary v%d); run `orbit rebuild` to rebuild it for this binary", path, ErrNewerSchema, v, migrations.Version)
	}
	if _, err := s.Migrate(ctx); err != nil {
		sdb.Close()
		return nil, err
	}
	return s, nil
}

// SmallCache shrinks the page cache of the store's connection to
// smallCachePages until restore is called (a writable store has one
// connection; on a pool it reaches one of them, which only costs speed).
// A search that reads a few hundred scattered pages once each gains
// nothing from SQLite's default 2 MB: every page read into it is fresh
// memory, and a process pays a page fault for each 4 KiB of it; recycling
// a few pages instead cut orbit precedent's CPU by about a fifth at 1M
// decisions.
func (s *Store) SmallCache(ctx context.Context) (restore func(), err error) {
	var size int64
	if err := s.DB.GetContext(ctx, &size, `PRAGMA cache_size`); err != nil {
		return nil, err
	}
	if _, err := s.DB.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d`, smallCachePages)); err != nil {
		return nil, err
	}
	// Restoring is best effort: the size only decides how fast the
	// connection reads.
	return func() { _, _ = s.DB.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d`, size)) }, nil
}

// smallCachePages is SmallCache's page cache, in pages whatever their size
// (a positive cache_size counts pages). 8: with 4 KiB pages, 32 pages took
// 0.29 ms more CPU per orbit precedent at 1M (60 fewer page faults for 44
// more reads of the file, which the OS has cached).
const smallCachePages = 8

// openTimeout bounds how long Open waits for another process that holds
// the database while it creates it (SQLite's busy handler does not run when
// switching a new database to WAL).
const openTimeout = 10 * time.Second

// checkRetry runs check, retrying while the database is busy.
func (s *Store) checkRetry(ctx context.Context) error {
	deadline := time.Now().Add(openTimeout)
	delay := 2 * time.Millisecond
	for {
		err := s.check(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay = min(delay*2, 100*time.Millisecond)
	}
}

func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_BUSY || se.Code()&0xff == sqlite3.SQLITE_LOCKED)
}

// check reads back journal_mode; an unreadable file becomes ErrUnreadable.
func (s *Store) check(ctx context.Context) error {
	var mode string
	if err := s.DB.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return s.wrap("open", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("open index %s: journal_mode is %q, want wal", s.Path, mode)
	}
	return nil
}

// IsCorrupt reports whether err says the index is damaged: not a database,
// or a page SQLite cannot read (found at open, or only when a query reaches
// it). The index is derived from the files, so the cure is to rebuild it.
func IsCorrupt(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnreadable) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return true
		}
	}
	// Errors that passed through a %v lose their type, not their text.
	msg := err.Error()
	return strings.Contains(msg, "database disk image is malformed") || strings.Contains(msg, "file is not a database")
}

// wrap names the index in err and maps corruption to ErrUnreadable.
func (s *Store) wrap(op string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("%s index %s: %w: %v", op, s.Path, ErrUnreadable, err)
		}
	}
	return fmt.Errorf("%s index %s: %w", op, s.Path, err)
}

// Close checkpoints and closes the index.
func (s *Store) Close() error { return s.DB.Close() }

// UserVersion returns PRAGMA user_version: the schema version orbit recorded
// after its last successful migration.
func (s *Store) UserVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.DB.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, s.wrap("read version of", err)
	}
	return v, nil
}

// MigrationStatus is one migration and whether it is applied.
type MigrationStatus struct {
	Version   int64     `json:"version"`
	Name      string    `json:"name"`
	Applied   bool      `json:"applied"`
	AppliedAt time.Time `json:"applied_at,omitzero"`
}

func (s *Store) provider() (*goose.Provider, error) {
	// Never call Close on the provider: it would close the store's *sql.DB.
	p, err := goose.NewProvider(goose.DialectSQLite3, s.DB.DB, migrations.FS, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	return p, nil
}

// Status lists every migration the binary carries and whether it is applied.
func (s *Store) Status(ctx context.Context) ([]MigrationStatus, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	st, err := p.Status(ctx)
	if err != nil {
		return nil, s.wrap("read migrations of", err)
	}
	out := make([]MigrationStatus, 0, len(st))
	for _, m := range st {
		out = append(out, MigrationStatus{
			Version:   m.Source.Version,
			Name:      filepath.Base(m.Source.Path),
			Applied:   m.State == goose.StateApplied,
			AppliedAt: m.AppliedAt,
		})
	}
	return out, nil
}

// Migrate applies pending migrations under an flock beside the database (goose
// has no SQLite locker) and records the schema version in user_version. It
// returns the migrations it applied.
func (s *Store) Migrate(ctx context.Context) ([]MigrationStatus, error) {
	unlock, err := flock.Path(ctx, "", s.Path+".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.checkFTS5(ctx); err != nil {
		return nil, err
	}
	// A bulk load cut short is finished first: the statements it kept to
	// create its indexes again are those of the schema it began on.
	if v, err := s.UserVersion(ctx); err != nil {
		return nil, err
	} else if v > 0 {
		if err := s.InTx(ctx, func(tx *Tx) error { return tx.FinishBulk(ctx) }); err != nil {
			return nil, fmt.Errorf("migrate index %s: %w; the index is derived from the journal, so `orbit rebuild` recreates it", s.Path, err)
		}
	}
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	res, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate index %s: %w; the index is derived from the journal, so `orbit rebuild` recreates it", s.Path, err)
	}
	if _, err := s.DB.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", migrations.Version)); err != nil {
		return nil, s.wrap("record version of", err)
	}
	var applied []MigrationStatus
	for _, r := range res {
		applied = append(applied, MigrationStatus{Version: r.Source.Version, Name: filepath.Base(r.Source.Path), Applied: true})
	}
	return applied, nil
}

// checkFTS5 fails loudly when the SQLite build lacks FTS5, rather than letting
// precedent search fall back to LIKE.
func (s *Store) checkFTS5(ctx context.Context) error {
	var ok bool
	if err := s.DB.QueryRowContext(ctx, "SELECT sqlite_compileoption_used('ENABLE_FTS5')").Scan(&ok); err != nil {
		return s.wrap("check FTS5 in", err)
	}
	if !ok {
		return fmt.Errorf("index %s: this SQLite build has no FTS5; orbit needs it for precedent search", s.Path)
	}
	return nil
}

// Remove deletes the index file and its WAL and shared-memory files.
func Remove(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove index: %w", err)
		}
	}
	return nil
}

// InTx runs fn in one IMMEDIATE transaction and commits it when fn returns nil.
func (s *Store) InTx(ctx context.Context, fn func(*Tx) error) error {
	// On a connection of its own, which execRow reaches.
	conn, err := s.DB.Connx(ctx)
	if err != nil {
		return s.wrap("begin transaction on", err)
	}
	defer conn.Close()
	stx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return s.wrap("begin transaction on", err)
	}
	tx := &Tx{Tx: stx, conn: conn}
	defer tx.close()
	if err := fn(tx); err != nil {
		stx.Rollback()
		return err
	}
	if err := stx.Commit(); err != nil {
		return s.wrap("commit to", err)
	}
	return nil
}

// Tx is a write transaction with its prepared statements.
type Tx struct {
	*sqlx.Tx
	// conn is the connection the transaction runs on; rows are execRow's
	// statements, args its arguments.
	conn  *sqlx.Conn
	stmts map[string]*sqlx.Stmt
	rows  map[string]driver.Stmt
	args  []driver.NamedValue
	// canon is InsertDecision's scratch space for a row's canonical text.
	canon []byte
}

// Uncancelled checks ctx, then returns it without its cancellation, for
// short statements run one after another: handed a cancellable context,
// the driver starts a goroutine per statement to watch it (4% of an
// import's CPU, and as much again scheduling them; 2% of an orbit
// precedent's). A cancelled ctx still stops the work between statements.
func Uncancelled(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

// stmt returns the prepared statement for query, a statement run once per
// row of a batch, preparing it once per transaction, and the context to run
// it in (Uncancelled). A cancelled ctx still stops the batch: stmt returns
// its error, and so do the batch's other statements and its commit.
func (tx *Tx) stmt(ctx context.Context, query string) (*sqlx.Stmt, context.Context, error) {
	rowCtx, err := Uncancelled(ctx)
	if err != nil {
		return nil, nil, err
	}
	if st, ok := tx.stmts[query]; ok {
		return st, rowCtx, nil
	}
	st, err := tx.PreparexContext(ctx, query)
	if err != nil {
		return nil, nil, fmt.Errorf("prepare %.40q: %w", query, err)
	}
	if tx.stmts == nil {
		tx.stmts = map[string]*sqlx.Stmt{}
	}
	tx.stmts[query] = st
	return st, rowCtx, nil
}

// execRow runs query, an insert run once per row of a batch, with args,
// on the driver's connection itself (the transaction's: the statement runs
// in it): database/sql checked and converted each argument and locked the
// connection for every statement, a sixth of the CPU of an import's
// inserts. The statement is prepared once per transaction, and runs
// without ctx's cancellation, as stmt's do.
func (tx *Tx) execRow(ctx context.Context, query string, args ...any) (res driver.Result, err error) {
	ctx, err = Uncancelled(ctx)
	if err != nil {
		return nil, err
	}
	tx.args = tx.args[:0]
	for i, a := range args {
		v, err := driverValue(a)
		if err != nil {
			return nil, err
		}
		tx.args = append(tx.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	err = tx.conn.Raw(func(dc any) error {
		st, ok := tx.rows[query]
		if !ok {
			if st, err = dc.(driver.ConnPrepareContext).PrepareContext(ctx, query); err != nil {
				return fmt.Errorf("prepare %.40q: %w", query, err)
			}
			if tx.rows == nil {
				tx.rows = map[string]driver.Stmt{}
			}
			tx.rows[query] = st
		}
		res, err = st.(driver.StmtExecContext).ExecContext(ctx, tx.args)
		return err
	})
	return res, err
}

// driverValue is what database/sql would bind for a: the values the
// inserts bind, converted without reflection.
func driverValue(a any) (driver.Value, error) {
	switch v := a.(type) {
	case nil, int64, float64, string, bool, []byte:
		return v, nil
	case int:
		return int64(v), nil
	case sql.NullInt64:
		if !v.Valid {
			return nil, nil
		}
		return v.Int64, nil
	case sql.NullFloat64:
		if !v.Valid {
			return nil, nil
		}
		return v.Float64, nil
	case sql.NullString:
		if !v.Valid {
			return nil, nil
		}
		return v.String, nil
	}
	return driver.DefaultParameterConverter.ConvertValue(a)
}

func (tx *Tx) close() {
	for _, st := range tx.stmts {
		st.Close()
	}
	if len(tx.rows) > 0 {
		_ = tx.conn.Raw(func(any) error {
			for _, st := range tx.rows {
				st.Close()
			}
			return nil
		})
	}
}

// isNoRows reports sql.ErrNoRows.
func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
