package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// LoopRow is what the latest indexed event said about one loop of any
// framework: the "last seen" state.
type LoopRow struct {
	ID            int64           `db:"id"`
	Framework     string          `db:"framework"`
	LoopID        string          `db:"loop_id"`
	Path          string          `db:"path"`
	Title         string          `db:"title"`
	Status        string          `db:"status"`
	NativeStatus  string          `db:"native_status"`
	Iteration     sql.NullInt64   `db:"iteration"`
	MaxIterations sql.NullInt64   `db:"max_iterations"`
	UpdatedAt     string          `db:"updated_at"`
	BudgetUsed    sql.NullFloat64 `db:"budget_used"`
	BudgetLimit   sql.NullFloat64 `db:"budget_limit"`
	LastEvent     int64           `db:"last_event"`
	Events        int64           `db:"events"`
	// LastKind is the kind of the latest event (Loops fills it).
	LastKind string `db:"last_kind"`
}

// LoopEventRow is one line of the loop event journal, indexed.
type LoopEventRow struct {
	Seq          int64  `db:"seq"`
	FileID       int64  `db:"file_id"`
	LoopRef      int64  `db:"loop_ref"`
	Line         int64  `db:"line"`
	At           string `db:"at"`
	Kind         string `db:"kind"`
	Status       string `db:"status"`
	NativeStatus string `db:"native_status"`
	Detail       string `db:"detail"`
	Raw          string `db:"raw"`
}

// Loops returns every loop the index has seen, by framework and id, with
// the kind of its latest event.
func (s *Store) Loops(ctx context.Context) ([]LoopRow, error) {
	var out []LoopRow
	err := s.DB.SelectContext(ctx, &out, `SELECT l.id, l.framework, l.loop_id, l.path, l.title, l.status, l.native_status, l.iteration,
			l.max_iterations, l.updated_at, l.budget_used, l.budget_limit, l.last_event, l.events, coalesce(e.kind, '') AS last_kind
		FROM loops l LEFT JOIN loop_events e ON e.seq = l.last_event ORDER BY l.framework, l.loop_id`)
	if err != nil {
		return nil, fmt.Errorf("read loops: %w", err)
	}
	return out, nil
}

// LoopSeen is what the index last saw of a loop: its status and the kind
// of its latest event.
type LoopSeen struct {
	Framework, LoopID, Status, LastKind string
}

// LoopsSeen returns the last seen status of every loop (the one query
// `orbit loop list` makes when nothing changed).
func (s *Store) LoopsSeen(ctx context.Context) ([]LoopSeen, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT l.framework, l.loop_id, l.status, coalesce(e.kind, '')
		FROM loops l LEFT JOIN loop_events e ON e.seq = l.last_event`)
	if err != nil {
		return nil, fmt.Errorf("read loops: %w", err)
	}
	defer rows.Close()
	var out []LoopSeen
	for rows.Next() {
		var l LoopSeen
		if err := rows.Scan(&l.Framework, &l.LoopID, &l.Status, &l.LastKind); err != nil {
			return nil, fmt.Errorf("read loops: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read loops: %w", err)
	}
	return out, nil
}

// LoopEvents returns the indexed events of one loop, oldest first.
func (s *Store) LoopEvents(ctx context.Context, framework, loopID string) ([]LoopEventRow, error) {
	var out []LoopEventRow
	err := s.DB.SelectContext(ctx, &out, `SELECT e.seq, e.file_id, e.loop_ref, e.line, e.at, e.kind, e.status, e.native_status, e.detail, e.raw
		FROM loop_events e JOIN loops l ON l.id = e.loop_ref
		WHERE l.framework = ? AND l.loop_id = ? ORDER BY e.seq`, framework, loopID)
	if err != nil {
		return nil, fmt.Errorf("read events of loop %s %s: %w", framework, loopID, err)
	}
	return out, nil
}

// ResetLoopEvents forgets the events indexed from one loop events journal,
// and the loops no event describes any more (its past changed: it is
// indexed again from the start).
func (tx *Tx) ResetLoopEvents(ctx context.Context, fileID int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM loop_events WHERE file_id = ?`, fileID); err != nil {
		return fmt.Errorf("reset loop index: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM loops WHERE NOT EXISTS (SELECT 1 FROM loop_events e WHERE e.loop_ref = loops.id)`); err != nil {
		return fmt.Errorf("reset loop index: %w", err)
	}
	return nil
}

const upsertLoop = `INSERT INTO loops (framework, loop_id, path, title, status, native_status, iteration, max_iterations, updated_at,
		budget_used, budget_limit)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (framework, loop_id) DO UPDATE SET
		path = CASE WHEN excluded.path <> '' THEN excluded.path ELSE path END,
		title = CASE WHEN excluded.title <> '' THEN excluded.title ELSE title END,
		status = CASE WHEN excluded.status <> '' THEN excluded.status ELSE status END,
		native_status = CASE WHEN excluded.status <> '' THEN excluded.native_status ELSE native_status END,
		iteration = coalesce(excluded.iteration, iteration),
		max_iterations = coalesce(excluded.max_iterations, max_iterations),
		updated_at = CASE WHEN excluded.updated_at <> '' THEN excluded.updated_at ELSE updated_at END,
		budget_used = coalesce(excluded.budget_used, budget_used),
		budget_limit = coalesce(excluded.budget_limit, budget_limit)
	RETURNING id`

const insertLoopEvent = `INSERT INTO loop_events (file_id, loop_ref, line, at, kind, status, native_status, detail, raw)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

// InsertLoopEvent indexes one event of the loop l: the loop's row takes what
// the event says (fields the event leaves empty keep their value), and the
// event is added.
func (tx *Tx) InsertLoopEvent(ctx context.Context, l *LoopRow, e *LoopEventRow) error {
	up, rowCtx, err := tx.stmt(ctx, upsertLoop)
	if err != nil {
		return err
	}
	if err := up.QueryRowxContext(rowCtx, l.Framework, l.LoopID, l.Path, l.Title, l.Status, l.NativeStatus, l.Iteration, l.MaxIterations,
		l.UpdatedAt, l.BudgetUsed, l.BudgetLimit).Scan(&l.ID); err != nil {
		return fmt.Errorf("index loop %s %s: %w", l.Framework, l.LoopID, err)
	}
	e.LoopRef = l.ID
	res, err := tx.execRow(ctx, insertLoopEvent, e.FileID, e.LoopRef, e.Line, e.At, e.Kind, e.Status, e.NativeStatus, e.Detail, e.Raw)
	if err != nil {
		return fmt.Errorf("index event of loop %s %s: %w", l.Framework, l.LoopID, err)
	}
	if e.Seq, err = res.LastInsertId(); err != nil {
		return err
	}
	if _, err := tx.execRow(ctx, `UPDATE loops SET last_event = ?, events = events + 1 WHERE id = ?`, e.Seq, l.ID); err != nil {
		return fmt.Errorf("index event of loop %s %s: %w", l.Framework, l.LoopID, err)
	}
	return nil
}

// The ORBIT loop's row in the loops table and the kind of the event that
// records the counters orbit adopted from it (the loop package's names for
// them; db knows no feature package).
const (
	orbitFramework = "orbit"
	orbitLoop      = "orbit"
	// AdoptEvent is the kind of the loop event recording the counters a
	// loop kept before orbit came (data.correct_decisions,
	// data.incorrect_decisions).
	AdoptEvent = "adopt"
)

// Adoption is what orbit recorded when it first met the ORBIT loop's
// counters: the part of them its outcome events could not explain, kept
// as a baseline (0, 0 when the journal explained them all).
type Adoption struct {
	Correct, Incorrect int
	// At is when it was recorded.
	At string
}

// Adoption returns the first adopt event of the ORBIT loop in the loop
// event journal; found is false when orbit has not met the loop's counters
// yet. The journal is a file, so the baseline survives a rebuild of the
// index.
func (s *Store) Adoption(ctx context.Context) (a Adoption, found bool, err error) {
	err = s.DB.QueryRowContext(ctx, `SELECT coalesce(json_extract(e.raw, '$.data.correct_decisions'), 0),
			coalesce(json_extract(e.raw, '$.data.incorrect_decisions'), 0), e.at
		FROM loop_events e JOIN loops l ON l.id = e.loop_ref
		WHERE l.framework = ? AND l.loop_id = ? AND e.kind = ? ORDER BY e.seq LIMIT 1`, orbitFramework, orbitLoop, AdoptEvent).Scan(&a.Correct, &a.Incorrect, &a.At)
	if errors.Is(err, sql.ErrNoRows) {
		return a, false, nil
	}
	if err != nil {
		return a, false, fmt.Errorf("read adopted baseline: %w", err)
	}
	return a, true, nil
}

// Baseline returns the counters adopted from before orbit (0, 0 without
// any): what trust counts besides the outcome events.
func (s *Store) Baseline(ctx context.Context) (correct, incorrect int, err error) {
	a, _, err := s.Adoption(ctx)
	return a.Correct, a.Incorrect, err
}
