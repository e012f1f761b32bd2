package db

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// A bulk load is an import into an empty index. Two things that cost the
// import's connection a third of its time wait until the rows are in:
//
//   - The full-text index is built on a second connection, to a scratch
//     database file beside the index, while the import's connection inserts
//     the rows (the two cores share the work), and copied into the index at
//     the end.
//   - The secondary indexes of decisions and outcome_events are dropped, and
//     created again after the rows: one sort each instead of a B-tree insert
//     per row.
//
// Until then the index holds decisions without their full-text entries and
// lacks indexes, so durable marks say so: journal_files rows with negative
// ids (never a file's, which start at 1), written in the transaction that
// drops the indexes, before the first row. Row -1 names the process loading
// (tail_hash), and is deleted in the transaction that copies the full-text
// index in; each row below it holds the CREATE statement of a dropped index
// (tail_hash), deleted when the index is created again. Whoever else finds
// the marks (another process's sync, the next command after a crash
// half-way, a migration) finishes the load (FinishBulk): the indexes created
// from the statements kept, the full-text index rebuilt from the decisions
// table. No answer comes from an index that silently lacks entries.

// bulkMarkID is the id of the mark's journal_files row: negative, so that
// it never takes the id a followed file would get.
const bulkMarkID = -1

// BulkTextKind and bulkIndexKind are the kinds of the marks' journal_files
// rows.
const (
	BulkTextKind  = "bulk-text"
	bulkIndexKind = "bulk-index"
)

// IsBulkMark reports whether a sync state is a bulk load's mark rather than
// a file's.
func (st FileState) IsBulkMark() bool { return st.ID < 0 }

// BeginBulk starts a bulk load that owner (a token of the loading process)
// runs, when the index holds no decision and no other bulk load is
// pending: it writes the marks and drops the secondary indexes of decisions
// and outcome_events. It reports whether it did.
func (tx *Tx) BeginBulk(ctx context.Context, owner string) (bool, error) {
	var n int64
	if err := tx.GetContext(ctx, &n, `SELECT (SELECT count(*) FROM journal_files WHERE id < 0) + (SELECT count(*) FROM (SELECT 1 FROM decisions LIMIT 1))`); err != nil {
		return false, fmt.Errorf("begin bulk load: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	_, err := tx.ExecContext(ctx, `INSERT INTO journal_files (id, path, kind, tail_hash, synced_at) VALUES (?, 'orbit:bulk-text', ?, ?, ?)`,
		bulkMarkID, BulkTextKind, owner, now)
	if err != nil {
		return false, fmt.Errorf("begin bulk load: %w", err)
	}
	var indexes []struct {
		Name string `db:"name"`
		SQL  string `db:"sql"`
	}
	// The id index (UNIQUE, sql NULL) stays: import looks ids up. So do the
	// partial indexes (decisions_request, decisions_verification): they
	// hold the few rows their WHERE keeps, so keeping them costs that WHERE
	// per row, and creating them again a scan of the whole table each
	// (a sixth of the load's end at 1M decisions).
	if err := tx.SelectContext(ctx, &indexes, `SELECT name, sql FROM sqlite_master m WHERE type = 'index' AND tbl_name IN ('decisions', 'outcome_events') AND sql IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM pragma_index_list(m.tbl_name) p WHERE p.name = m.name AND p.partial) ORDER BY name`); err != nil {
		return false, fmt.Errorf("begin bulk load: %w", err)
	}
	for i, ix := range indexes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO journal_files (id, path, kind, tail_hash, synced_at) VALUES (?, ?, ?, ?, ?)`,
			bulkMarkID-1-i, "orbit:bulk-index:"+ix.Name, bulkIndexKind, ix.SQL, now); err != nil {
			return false, fmt.Errorf("begin bulk load: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DROP INDEX "`+ix.Name+`"`); err != nil {
			return false, fmt.Errorf("begin bulk load: %w", err)
		}
	}
	return true, nil
}

// BulkOwner returns the owner of the pending bulk load, "" when none is.
func (s *Store) BulkOwner(ctx context.Context) (string, error) {
	var owner string
	err := s.DB.GetContext(ctx, &owner, `SELECT coalesce((SELECT tail_hash FROM journal_files WHERE id = ?), '')`, bulkMarkID)
	if err != nil {
		return "", fmt.Errorf("read the bulk load's mark: %w", err)
	}
	return owner, nil
}

// FinishBulkIndexes creates again the indexes a bulk load dropped and
// deletes their marks. It does nothing when none is pending.
func (tx *Tx) FinishBulkIndexes(ctx context.Context) error {
	var marks []struct {
		Path string `db:"path"`
		SQL  string `db:"tail_hash"`
	}
	if err := tx.SelectContext(ctx, &marks, `SELECT path, tail_hash FROM journal_files WHERE id < ? AND kind = ? ORDER BY id DESC`, bulkMarkID, bulkIndexKind); err != nil {
		return fmt.Errorf("finish bulk load: %w", err)
	}
	for _, m := range marks {
		name := strings.TrimPrefix(m.Path, "orbit:bulk-index:")
		var exists bool
		if err := tx.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?)`, name); err != nil {
			return fmt.Errorf("finish bulk load: %w", err)
		}
		if exists {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("finish bulk load: create index %s: %w", name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM journal_files WHERE id < ? AND kind = ?`, bulkMarkID, bulkIndexKind); err != nil {
		return fmt.Errorf("finish bulk load: %w", err)
	}
	return nil
}

// FinishBulk finishes a pending bulk load, whoever started it: the indexes
// it dropped are created again, the full-text index is rebuilt from the
// decisions table, and the marks deleted. It does nothing when none is
// pending.
func (tx *Tx) FinishBulk(ctx context.Context) error {
	if err := tx.FinishBulkIndexes(ctx); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM journal_files WHERE id = ?`, bulkMarkID)
	if err != nil {
		return fmt.Errorf("finish bulk load: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO decisions_fts (decisions_fts) VALUES ('rebuild')`); err != nil {
		return fmt.Errorf("finish bulk load: rebuild the full-text index: %w", err)
	}
	return nil
}

// TextRow is what the full-text index holds of a decision: its seq and its
// text columns, as IndexText reads them.
type TextRow struct {
	Seq                                int64
	Input, Reason, NextAction, Context string
}

// insertText adds one decision to the scratch full-text index: the columns
// of IndexText's statement, in the same order.
const insertText = `INSERT INTO decisions_fts (rowid, input, reason, next_action, context) VALUES (?, ?, ?, ?, ?)`

// TextBuilder builds a full-text index in a scratch database file, on its
// own connection, for CopyInto to put into the index.
type TextBuilder struct {
	db   *sqlx.DB
	path string
}

// BulkTextPath is the scratch file of a bulk load into the index at path.
func BulkTextPath(path string) string { return path + "-bulk-text" }

// NewTextBuilder creates the scratch database of a bulk load into s, with
// a full-text table defined as s's (the same tokenizer and options).
func (s *Store) NewTextBuilder(ctx context.Context) (*TextBuilder, error) {
	var def string
	if err := s.DB.GetContext(ctx, &def, `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'decisions_fts'`); err != nil {
		return nil, fmt.Errorf("bulk load: read the full-text table: %w", err)
	}
	path := BulkTextPath(s.Path)
	if err := Remove(path); err != nil {
		return nil, err
	}
	// Scratch: a crash loses it, and the mark makes the next command
	// rebuild the full-text index instead.
	sdb, err := sqlx.Open("sqlite", dsn(path, false, "journal_mode(OFF)", "synchronous(OFF)"))
	if err != nil {
		return nil, fmt.Errorf("bulk load: %w", err)
	}
	// One connection, so that the database attached by CopyInto stays.
	sdb.SetMaxOpenConns(1)
	sdb.SetMaxIdleConns(1)
	sdb.SetConnMaxIdleTime(0)
	b := &TextBuilder{db: sdb, path: path}
	// The content table is the index's: only the full-text index's own
	// tables are built here, and nothing reads the content back.
	for _, q := range []string{`CREATE TABLE decisions (seq INTEGER PRIMARY KEY, input TEXT, reason TEXT, next_action TEXT, context TEXT)`, def} {
		if _, err := sdb.ExecContext(ctx, q); err != nil {
			b.Close()
			return nil, fmt.Errorf("bulk load: create the scratch full-text table: %w", err)
		}
	}
	return b, nil
}

// Add indexes rows in one transaction (the index's way: Store.InTx,
// Tx.execRow).
func (b *TextBuilder) Add(ctx context.Context, rows []TextRow) error {
	scratch := Store{DB: b.db, Path: b.path}
	err := scratch.InTx(ctx, func(tx *Tx) error {
		for _, r := range rows {
			if _, err := tx.execRow(ctx, insertText, r.Seq, r.Input, r.Reason, r.NextAction, r.Context); err != nil {
				return fmt.Errorf("index text of decision %d: %w", r.Seq, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("bulk load: %w", err)
	}
	return nil
}

// Merge merges the scratch full-text index into one segment (as
// Store.MergeText does the index's).
func (b *TextBuilder) Merge(ctx context.Context) error {
	if _, err := b.db.ExecContext(ctx, `INSERT INTO decisions_fts (decisions_fts) VALUES ('optimize')`); err != nil {
		return fmt.Errorf("bulk load: merge the full-text index: %w", err)
	}
	return nil
}

// ErrBulkTextTaken says that the bulk load's mark was gone when its
// full-text index was to be copied in: another sync finished it.
var ErrBulkTextTaken = errors.New("the bulk load was finished by another sync")

// CopyInto replaces the full-text index of the index at path with the one
// built here and deletes owner's mark, in one transaction of the index,
// from this connection (so that the index's own connection, whose full-text
// table may have cached its structure, sees a change by another
// connection). It fails with ErrBulkTextTaken, changing nothing, when
// owner's mark is gone.
func (b *TextBuilder) CopyInto(ctx context.Context, path, owner string) error {
	if _, err := b.db.ExecContext(ctx, `ATTACH DATABASE ? AS orbit`, path); err != nil {
		return fmt.Errorf("bulk load: attach the index: %w", err)
	}
	defer b.db.ExecContext(context.WithoutCancel(ctx), `DETACH DATABASE orbit`)
	var shadows []string
	if err := b.db.SelectContext(ctx, &shadows, `SELECT name FROM main.sqlite_master WHERE type = 'table' AND name LIKE 'decisions\_fts\_%' ESCAPE '\' AND name <> 'decisions_fts_config'
		AND name IN (SELECT name FROM orbit.sqlite_master) ORDER BY name`); err != nil {
		return fmt.Errorf("bulk load: %w", err)
	}
	tx, err := b.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("bulk load: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM orbit.journal_files WHERE id = ? AND tail_hash = ?`, bulkMarkID, owner)
	if err != nil {
		return fmt.Errorf("bulk load: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrBulkTextTaken
	}
	for _, t := range shadows {
		for _, q := range []string{`DELETE FROM orbit.` + t, `INSERT INTO orbit.` + t + ` SELECT * FROM main.` + t} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("bulk load: copy %s: %w", t, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("bulk load: copy the full-text index: %w", err)
	}
	return nil
}

// Close closes the scratch database and removes its file.
func (b *TextBuilder) Close() error {
	err := b.db.Close()
	if rerr := os.Remove(b.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}
