package db

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// LocatedFinding is a finding with the path of its file.
type LocatedFinding struct {
	FindingRow
	Path string `db:"path"`
}

// Findings returns every finding the index holds, in file and line order.
func (s *Store) Findings(ctx context.Context) ([]LocatedFinding, error) {
	var out []LocatedFinding
	err := s.DB.SelectContext(ctx, &out, `SELECT f.seq, f.file_id, f.line, f.line_end, f.byte_offset, f.length, f.severity, f.code,
			f.record_id, f.message, f.excerpt, j.path
		FROM findings f JOIN journal_files j ON j.id = f.file_id ORDER BY j.id, f.line, f.seq`)
	if err != nil {
		return nil, fmt.Errorf("read findings: %w", err)
	}
	return out, nil
}

// Counts summarises the index.
type Counts struct {
	Decisions int64 `db:"decisions" json:"decisions"`
	Events    int64 `db:"events" json:"outcome_events"`
	Rejected  int64 `db:"rejected" json:"rejected_lines"`
	Warnings  int64 `db:"warnings" json:"warnings"`
	Correct   int64 `db:"correct" json:"correct"`
	Incorrect int64 `db:"incorrect" json:"incorrect"`
}

// Counts returns how many records and findings the index holds.
func (s *Store) Counts(ctx context.Context) (Counts, error) {
	var c Counts
	err := s.DB.GetContext(ctx, &c, `SELECT
		(SELECT count(*) FROM decisions) AS decisions,
		(SELECT count(*) FROM outcome_events) AS events,
		(SELECT count(*) FROM findings WHERE severity = 'error') AS rejected,
		(SELECT count(*) FROM findings WHERE severity = 'warning') AS warnings,
		(SELECT count(*) FROM decision_outcomes o JOIN decisions d ON d.id = o.decision_id WHERE o.outcome = 'CORRECT') AS correct,
		(SELECT count(*) FROM decision_outcomes o JOIN decisions d ON d.id = o.decision_id WHERE o.outcome = 'INCORRECT') AS incorrect`)
	if err != nil {
		return c, fmt.Errorf("count index: %w", err)
	}
	return c, nil
}

// decisionSelect reads decisions with their current outcome.
const decisionSelect = `SELECT d.seq, d.id, d.file_id, d.line, d.line_end, d.byte_offset, d.iteration, d.ts, d.ts_ns, d.tier, d.depth,
	d.category, d.input, d.decision, d.reason, d.next_action, d.verification, d.retro_prev_id, d.retro_outcome, d.confidence,
	d.requestor, d.context, d.raw, coalesce(o.outcome, 'PENDING') AS outcome
	FROM decisions d LEFT JOIN decision_outcomes o ON o.decision_id = d.id`

// DecisionFilter narrows a listing of decisions.
type DecisionFilter struct {
	Category  string
	Outcome   string
	Iteration *int64
	// Limit keeps the newest Limit decisions (0: all).
	Limit int
}

func (f DecisionFilter) where() (string, []any) {
	var conds []string
	var args []any
	if f.Category != "" {
		conds = append(conds, "d.category = ?")
		args = append(args, f.Category)
	}
	if f.Outcome != "" {
		conds = append(conds, "coalesce(o.outcome, 'PENDING') = ?")
		args = append(args, f.Outcome)
	}
	if f.Iteration != nil {
		conds = append(conds, "d.iteration = ?")
		args = append(args, *f.Iteration)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// LatestDecisions returns the newest decisions matching f, newest first.
func (s *Store) LatestDecisions(ctx context.Context, f DecisionFilter) ([]DecisionRow, error) {
	where, args := f.where()
	q := decisionSelect + where + ` ORDER BY d.seq DESC`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	var out []DecisionRow
	if err := s.DB.SelectContext(ctx, &out, q, args...); err != nil {
		return nil, fmt.Errorf("list decisions: %w", err)
	}
	return out, nil
}

// EachDecision calls fn for every decision matching f in journal order,
// streaming.
func (s *Store) EachDecision(ctx context.Context, f DecisionFilter, fn func(*DecisionRow) error) error {
	where, args := f.where()
	rows, err := s.DB.QueryxContext(ctx, decisionSelect+where+` ORDER BY d.seq`, args...)
	if err != nil {
		return fmt.Errorf("read decisions: %w", err)
	}
	defer rows.Close()
	var d DecisionRow
	for rows.Next() {
		d = DecisionRow{}
		if err := rows.StructScan(&d); err != nil {
			return fmt.Errorf("read decisions: %w", err)
		}
		if err := fn(&d); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Decision returns one decision by id.
func (s *Store) Decision(ctx context.Context, id string) (DecisionRow, bool, error) {
	var d DecisionRow
	err := s.DB.GetContext(ctx, &d, decisionSelect+` WHERE d.id = ?`, id)
	if isNoRows(err) {
		return d, false, nil
	}
	if err != nil {
		return d, false, fmt.Errorf("read decision %s: %w", id, err)
	}
	return d, true, nil
}

// Files returns the sync state of every file the index has read.
func (s *Store) Files(ctx context.Context) ([]FileState, error) {
	var out []FileState
	if err := s.DB.SelectContext(ctx, &out, `SELECT `+fileCols+` FROM journal_files ORDER BY id`); err != nil {
		return nil, fmt.Errorf("read sync state: %w", err)
	}
	return out, nil
}

// IndexedRecord is where an indexed decision stands and its text.
type IndexedRecord struct {
	ID   string `db:"id"`
	Raw  string `db:"raw"`
	Line int64  `db:"line"`
}

// DecisionsByID returns the indexed decisions among ids, by id: one query
// for a whole batch (SQLite probes the id index for each).
func (s *Store) DecisionsByID(ctx context.Context, ids []string) (map[string]IndexedRecord, error) {
	out := map[string]IndexedRecord{}
	if len(ids) == 0 {
		return out, nil
	}
	arr, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	var rows []IndexedRecord
	if err := s.DB.SelectContext(ctx, &rows, `SELECT d.id, d.raw, d.line FROM json_each(?) j JOIN decisions d ON d.id = j.value`, string(arr)); err != nil {
		return nil, fmt.Errorf("look up decisions: %w", err)
	}
	for _, r := range rows {
		out[r.ID] = r
	}
	return out, nil
}
