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

// RejectedSince returns the rejected lines (error findings) indexed after
// the finding afterSeq, oldest first, at most n, and the highest finding
// seq the index holds (the mark for the next call).
func (s *Store) RejectedSince(ctx context.Context, afterSeq int64, n int) (rejected []LocatedFinding, mark int64, err error) {
	if err := s.DB.GetContext(ctx, &mark, `SELECT coalesce(max(seq), 0) FROM findings`); err != nil {
		return nil, 0, fmt.Errorf("read findings: %w", err)
	}
	err = s.DB.SelectContext(ctx, &rejected, `SELECT f.seq, f.file_id, f.line, f.line_end, f.byte_offset, f.length, f.severity, f.code,
			f.record_id, f.message, f.excerpt, j.path
		FROM findings f JOIN journal_files j ON j.id = f.file_id WHERE f.seq > ? AND f.severity = 'error' ORDER BY f.seq LIMIT ?`, afterSeq, n)
	if err != nil {
		return nil, 0, fmt.Errorf("read findings: %w", err)
	}
	return rejected, mark, nil
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

// Counts returns how many records and findings the index holds, from the
// per-file counters sync keeps (no count over the tables).
func (s *Store) Counts(ctx context.Context) (Counts, error) {
	var c Counts
	err := s.DB.GetContext(ctx, &c, `SELECT
		(SELECT coalesce(sum(records), 0) FROM journal_files WHERE kind = 'decisions') AS decisions,
		(SELECT coalesce(sum(events), 0) FROM journal_files) AS events,
		(SELECT coalesce(sum(rejected), 0) FROM journal_files) AS rejected,
		(SELECT coalesce(sum(warnings), 0) FROM journal_files) AS warnings,
		(SELECT n FROM outcome_totals WHERE outcome = 'CORRECT') AS correct,
		(SELECT n FROM outcome_totals WHERE outcome = 'INCORRECT') AS incorrect`)
	if err != nil {
		return c, fmt.Errorf("count index: %w", err)
	}
	return c, nil
}

// decisionSelect reads decisions with their current outcome, without their
// raw text (an empty string as raw): every reader but EachDecision's (export) does
// without it, and SQLite parses the SQL that renders it in every process.
var decisionSelect = decisionColumns("''")

// decisionColumns is decisionSelect with raw as the SQL given.
func decisionColumns(raw string) string {
	return `SELECT d.seq, d.id, d.file_id, d.line, d.line_end, d.byte_offset, d.iteration, d.ts, d.ts_ns, d.tier, d.depth,
	d.category, d.input, d.decision, d.reason, d.next_action, d.verification, d.retro_prev_id, d.retro_outcome, d.confidence,
	d.requestor, d.context, d.request_id, ` + raw + ` AS raw, coalesce(o.outcome, 'PENDING') AS outcome,
	coalesce(e.ts, '') AS outcome_ts, coalesce(e.evidence, '') AS outcome_evidence, coalesce(e.recorded_by, '') AS outcome_by,
	coalesce(v.void, 0) AS voided, CASE WHEN v.void THEN ve.ts ELSE '' END AS void_ts, CASE WHEN v.void THEN ve.evidence ELSE '' END AS void_reason
	FROM decisions d LEFT JOIN decision_outcomes o ON o.decision_id = d.id LEFT JOIN outcome_events e ON e.seq = o.event_seq
	LEFT JOIN decision_voids v ON v.decision_id = d.id LEFT JOIN void_events ve ON ve.seq = v.event_seq`
}

// DecisionFilter narrows a listing of decisions.
type DecisionFilter struct {
	Category  string
	Outcome   string
	Tier      string
	Decision  string
	Requestor string
	// SinceNS keeps decisions whose ts is at or after it (0: any).
	SinceNS int64
	// UntilNS keeps decisions whose ts is at or before it (0: any). A
	// session counted by time ends now: a history dated after the loop's
	// start (a clock set back, a synthetic journal) is not this session's,
	// and without the bound the count reads all of it at every Stop.
	UntilNS int64
	// Grep keeps decisions whose input, reason, next action or context
	// holds this text (case-insensitive for ASCII).
	Grep      string
	Iteration *int64
	// BeforeSeq keeps decisions before this journal position (a paging
	// cursor; 0: no bound).
	BeforeSeq int64
	// Limit keeps the newest Limit decisions (0: all).
	Limit int
}

func (f DecisionFilter) where() (string, []any) {
	var conds []string
	var args []any
	if f.Category != "" {
		cond, arg := CategoryFilter("d")
		conds = append(conds, cond)
		args = append(args, arg(f.Category))
	}
	if f.Outcome != "" {
		conds = append(conds, "coalesce(o.outcome, 'PENDING') = ?")
		args = append(args, f.Outcome)
	}
	if f.Iteration != nil {
		conds = append(conds, "d.iteration = ?")
		args = append(args, *f.Iteration)
	}
	for _, c := range []struct{ col, v string }{{"d.tier", f.Tier}, {"d.decision", f.Decision}, {"d.requestor", f.Requestor}} {
		if c.v != "" {
			conds = append(conds, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	if f.SinceNS > 0 {
		conds = append(conds, "d.ts_ns >= ?")
		args = append(args, f.SinceNS)
	}
	if f.Grep != "" {
		like := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(f.Grep) + "%"
		conds = append(conds, `(d.input LIKE ? ESCAPE '\' OR d.reason LIKE ? ESCAPE '\' OR d.next_action LIKE ? ESCAPE '\' OR d.context LIKE ? ESCAPE '\')`)
		args = append(args, like, like, like, like)
	}
	if f.BeforeSeq > 0 {
		conds = append(conds, "d.seq < ?")
		args = append(args, f.BeforeSeq)
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
// streaming, each with its raw text.
func (s *Store) EachDecision(ctx context.Context, f DecisionFilter, fn func(*DecisionRow) error) error {
	where, args := f.where()
	rows, err := s.DB.QueryxContext(ctx, decisionColumns(DecisionRawSQL("d"))+where+` ORDER BY d.seq`, args...)
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

// Decision returns one decision by id, with its raw text.
func (s *Store) Decision(ctx context.Context, id string) (DecisionRow, bool, error) {
	var d DecisionRow
	err := s.DB.GetContext(ctx, &d, decisionColumns(DecisionRawSQL("d"))+` WHERE d.id = ?`, id)
	if isNoRows(err) {
		return d, false, nil
	}
	if err != nil {
		return d, false, fmt.Errorf("read decision %s: %w", id, err)
	}
	return d, true, nil
}

// DecisionExists reports whether id is indexed: an id-index probe, none
// of Decision's columns read.
func (s *Store) DecisionExists(ctx context.Context, id string) (bool, error) {
	var ok bool
	if err := s.DB.QueryRowxContext(ctx, decisionExists, id).Scan(&ok); err != nil {
		return false, fmt.Errorf("look up decision %s: %w", id, err)
	}
	return ok, nil
}

// Files returns the sync state of every file the index has read.
func (s *Store) Files(ctx context.Context) ([]FileState, error) {
	out, _, err := s.SyncStates(ctx)
	return out, err
}

// SyncStates returns the sync state of every file the index has read, and
// whether a bulk load's mark is pending (FinishBulk): one query.
func (s *Store) SyncStates(ctx context.Context) (files []FileState, bulk bool, err error) {
	var all []FileState
	if err := s.DB.SelectContext(ctx, &all, `SELECT `+fileCols+` FROM journal_files ORDER BY id`); err != nil {
		return nil, false, fmt.Errorf("read sync state: %w", err)
	}
	files = all[:0]
	for _, st := range all {
		if st.IsBulkMark() {
			bulk = true
			continue
		}
		files = append(files, st)
	}
	return files, bulk, nil
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
	if err := s.DB.SelectContext(ctx, &rows, `SELECT d.id, `+DecisionRawSQL("d")+` AS raw, d.line FROM json_each(?) j JOIN decisions d ON d.id = j.value`, string(arr)); err != nil {
		return nil, fmt.Errorf("look up decisions: %w", err)
	}
	for _, r := range rows {
		out[r.ID] = r
	}
	return out, nil
}

// OutcomeTotals returns how many indexed decisions are currently CORRECT and
// INCORRECT (kept by triggers: no count at read time).
func (s *Store) OutcomeTotals(ctx context.Context) (correct, incorrect int, err error) {
	err = s.DB.QueryRowxContext(ctx, `SELECT (SELECT n FROM outcome_totals WHERE outcome = 'CORRECT'), (SELECT n FROM outcome_totals WHERE outcome = 'INCORRECT')`).Scan(&correct, &incorrect)
	if err != nil {
		return 0, 0, fmt.Errorf("read outcome totals: %w", err)
	}
	return correct, incorrect, nil
}

// LatestScored returns the current outcomes of the n latest scored decisions
// in journal order, newest first (true for CORRECT).
func (s *Store) LatestScored(ctx context.Context, n int) ([]bool, error) {
	var outs []string
	err := s.DB.SelectContext(ctx, &outs, `SELECT outcome FROM decision_outcomes INDEXED BY decision_outcomes_scored
		WHERE outcome IN ('CORRECT', 'INCORRECT') AND decision_seq IS NOT NULL ORDER BY decision_seq DESC LIMIT ?`, n)
	if err != nil {
		return nil, fmt.Errorf("read latest outcomes: %w", err)
	}
	res := make([]bool, len(outs))
	for i, o := range outs {
		res[i] = o == "CORRECT"
	}
	return res, nil
}

// IDsOfIteration returns the ids of an iteration's decisions.
func (s *Store) IDsOfIteration(ctx context.Context, iteration int64) ([]string, error) {
	var ids []string
	if err := s.DB.SelectContext(ctx, &ids, `SELECT id FROM decisions WHERE iteration = ?`, iteration); err != nil {
		return nil, fmt.Errorf("read ids of iteration %d: %w", iteration, err)
	}
	return ids, nil
}

// MaxIteration returns the highest iteration in the journal (0 if empty).
func (s *Store) MaxIteration(ctx context.Context) (int64, error) {
	var n int64
	if err := s.DB.GetContext(ctx, &n, `SELECT coalesce(max(iteration), 0) FROM decisions`); err != nil {
		return 0, fmt.Errorf("read highest iteration: %w", err)
	}
	return n, nil
}

// LastDeepIteration returns the highest iteration from first to last (both
// included) that holds a decision deeper than trivial (0 when none): where
// seed 000's depth escalation counter last reset.
func (s *Store) LastDeepIteration(ctx context.Context, first, last int64) (int64, error) {
	var n int64
	if err := s.DB.GetContext(ctx, &n, `SELECT coalesce(max(iteration), 0) FROM decisions
		WHERE iteration BETWEEN ? AND ? AND depth <> 'trivial'`, first, last); err != nil {
		return 0, fmt.Errorf("read the last deep iteration: %w", err)
	}
	return n, nil
}

// DecisionByRequest returns the decision recorded for a pending request id.
func (s *Store) DecisionByRequest(ctx context.Context, requestID string) (DecisionRow, bool, error) {
	var d DecisionRow
	err := s.DB.GetContext(ctx, &d, decisionSelect+` WHERE d.request_id = ? ORDER BY d.seq LIMIT 1`, requestID)
	if isNoRows(err) {
		return d, false, nil
	}
	if err != nil {
		return d, false, fmt.Errorf("read decision for request %s: %w", requestID, err)
	}
	return d, true, nil
}

// SessionStats summarises a set of decisions (see Stats).
type SessionStats struct {
	Total     int64 `db:"total" json:"total"`
	Auto      int64 `db:"auto" json:"auto_approved"`
	Deep      int64 `db:"deep" json:"deep"`
	Escalated int64 `db:"escalated" json:"escalated"`
	Trivial   int64 `db:"trivial" json:"trivial"`
	Approved  int64 `db:"approved" json:"approved"`
	Rejected  int64 `db:"rejected" json:"rejected"`
	Review    int64 `db:"review" json:"needs_review"`
	Correct   int64 `db:"correct" json:"correct"`
	Incorrect int64 `db:"incorrect" json:"incorrect"`
	// Of the trivial decisions (the batch), how many were not approved.
	TrivialRejected int64 `db:"trivial_rejected" json:"trivial_rejected"`
	TrivialReview   int64 `db:"trivial_review" json:"trivial_needs_review"`
}

// StatsFilter selects the decisions Stats counts.
type StatsFilter struct {
	// SinceNS keeps decisions whose ts is at or after it (0: any).
	SinceNS int64
	// UntilNS keeps decisions whose ts is at or before it (0: any). A
	// session counted by time ends now: a history dated after the loop's
	// start (a clock set back, a synthetic journal) is not this session's,
	// and without the bound the count reads all of it at every Stop.
	UntilNS int64
	// Iteration, when set, keeps that iteration only.
	Iteration *int64
	// FromIteration keeps iterations at or after it (0: any): a loop's
	// decisions, numbering going on across loops.
	FromIteration int64
}

// Stats counts the decisions the filter keeps, as seed 000's session
// statistics count them: auto-approved (trivial) are the trivial batch's
// auto_approve decisions APPROVED, deep those of the deep mode (depth
// light, medium or heavy, whatever their tier), escalated those of tier
// escalate or decided NEEDS_REVIEW (left to a human). A deep decision
// escalated counts in both, as in the seed.
func (s *Store) Stats(ctx context.Context, f StatsFilter) (SessionStats, error) {
	var st SessionStats
	q := `SELECT count(*) AS total,
		coalesce(sum(d.depth = 'trivial' AND d.tier = 'auto_approve' AND d.decision = 'APPROVED'), 0) AS auto,
		coalesce(sum(d.depth <> 'trivial'), 0) AS deep,
		coalesce(sum(d.tier = 'escalate' OR d.decision = 'NEEDS_REVIEW'), 0) AS escalated,
		coalesce(sum(d.depth = 'trivial'), 0) AS trivial,
		coalesce(sum(d.decision = 'APPROVED'), 0) AS approved,
		coalesce(sum(d.decision = 'REJECTED'), 0) AS rejected,
		coalesce(sum(d.decision = 'NEEDS_REVIEW'), 0) AS review,
		coalesce(sum(o.outcome = 'CORRECT' AND o.decision_seq IS NOT NULL), 0) AS correct,
		coalesce(sum(o.outcome = 'INCORRECT' AND o.decision_seq IS NOT NULL), 0) AS incorrect,
		coalesce(sum(d.depth = 'trivial' AND d.decision = 'REJECTED'), 0) AS trivial_rejected,
		coalesce(sum(d.depth = 'trivial' AND d.decision = 'NEEDS_REVIEW'), 0) AS trivial_review
		FROM decisions d LEFT JOIN decision_outcomes o ON o.decision_id = d.id WHERE 1`
	var args []any
	if f.SinceNS > 0 {
		q += ` AND d.ts_ns >= ?`
		args = append(args, f.SinceNS)
	}
	if f.UntilNS > 0 {
		q += ` AND d.ts_ns <= ?`
		args = append(args, f.UntilNS)
	}
	if f.Iteration != nil {
		q += ` AND d.iteration = ?`
		args = append(args, *f.Iteration)
	}
	if f.FromIteration > 0 {
		q += ` AND d.iteration >= ?`
		args = append(args, f.FromIteration)
	}
	if err := s.DB.GetContext(ctx, &st, q, args...); err != nil {
		return st, fmt.Errorf("count session decisions: %w", err)
	}
	return st, nil
}

// Event is an outcome event with the decision it judges.
type Event struct {
	EventRow
	Input string `db:"input"`
	Path  string `db:"path"`
}

// LatestEvents returns the n latest outcome events (by event time), newest
// first.
func (s *Store) LatestEvents(ctx context.Context, n int) ([]Event, error) {
	var out []Event
	err := s.DB.SelectContext(ctx, &out, `SELECT e.seq, e.decision_id, e.outcome, e.at_ns, e.src_rank, e.ts, e.evidence, e.file_id, e.line,
			e.recorded_by, e.raw, coalesce(d.input, '') AS input, f.path
		FROM outcome_events e JOIN journal_files f ON f.id = e.file_id LEFT JOIN decisions d ON d.id = e.decision_id
		ORDER BY e.at_ns DESC, e.src_rank DESC, e.line DESC LIMIT ?`, n)
	if err != nil {
		return nil, fmt.Errorf("read latest outcomes: %w", err)
	}
	return out, nil
}

// DecisionEvents returns every outcome event for a decision, in event
// order (the last one gives its current outcome).
func (s *Store) DecisionEvents(ctx context.Context, id string) ([]Event, error) {
	var out []Event
	err := s.DB.SelectContext(ctx, &out, `SELECT e.seq, e.decision_id, e.outcome, e.at_ns, e.src_rank, e.ts, e.evidence, e.file_id, e.line,
			e.recorded_by, e.raw, coalesce(d.input, '') AS input, f.path
		FROM outcome_events e JOIN journal_files f ON f.id = e.file_id LEFT JOIN decisions d ON d.id = e.decision_id
		WHERE e.decision_id = ? ORDER BY e.at_ns, e.src_rank, e.line`, id)
	if err != nil {
		return nil, fmt.Errorf("read outcomes of %s: %w", id, err)
	}
	return out, nil
}

// DecisionVoids returns every void event for a decision, in event order
// (the last one says whether it is voided).
func (s *Store) DecisionVoids(ctx context.Context, id string) ([]LocatedVoid, error) {
	var out []LocatedVoid
	err := s.DB.SelectContext(ctx, &out, `SELECT `+voidCols+`, f.path FROM void_events e JOIN journal_files f ON f.id = e.file_id
		WHERE e.decision_id = ? ORDER BY e.at_ns, e.line`, id)
	if err != nil {
		return nil, fmt.Errorf("read voids of %s: %w", id, err)
	}
	return out, nil
}

// StaleFilter selects decisions still without an outcome.
type StaleFilter struct {
	// BeforeIteration keeps decisions of iterations below it (0: any).
	BeforeIteration int64
	// BeforeNS keeps decisions whose ts is before it (0: any).
	BeforeNS int64
	Limit    int
	// Cap bounds the count (0: 10,000); a count equal to it means "at
	// least".
	Cap int64
	// NotRequestor leaves out the decisions of this requestor ("" none).
	NotRequestor string
}

// CountCap is the cap of the count.
func (f StaleFilter) CountCap() int64 {
	if f.Cap > 0 {
		return f.Cap
	}
	return 10000
}

// Unverified returns decisions whose current outcome is PENDING (no event,
// or a PENDING one) matching f, oldest first (by iteration, or by time, as
// f filters; then by journal position), and how many match in all.
func (s *Store) Unverified(ctx context.Context, f StaleFilter) ([]DecisionRow, int64, error) {
	// A voided decision is never stale: there is nothing to verify.
	where := ` WHERE coalesce(o.outcome, 'PENDING') = 'PENDING' AND NOT coalesce(v.void, 0)`
	var args []any
	if f.BeforeIteration > 0 {
		where += ` AND d.iteration < ?`
		args = append(args, f.BeforeIteration)
	}
	if f.BeforeNS > 0 {
		where += ` AND d.ts_ns < ?`
		args = append(args, f.BeforeNS)
	}
	if f.NotRequestor != "" {
		where += ` AND d.requestor <> ?`
		args = append(args, f.NotRequestor)
	}
	// The count stops at CountCap: on a million decisions a full count is
	// a scan, and "more than 10,000" is all a report needs.
	var total int64
	countArgs := append(append([]any(nil), args...), f.CountCap())
	if err := s.DB.GetContext(ctx, &total, `SELECT count(*) FROM (SELECT 1 FROM decisions d LEFT JOIN decision_outcomes o ON o.decision_id = d.id
		LEFT JOIN decision_voids v ON v.decision_id = d.id`+where+` LIMIT ?)`, countArgs...); err != nil {
		return nil, 0, fmt.Errorf("count unverified decisions: %w", err)
	}
	// Oldest first in the order of the filter's own index (iteration or
	// time, then journal position), so that a LIMIT stops early: ordered by
	// seq alone, SQLite's planner read every match through that index and
	// sorted them (1 s on 1M decisions for LIMIT 1).
	order := ` ORDER BY d.seq`
	switch {
	case f.BeforeIteration > 0 && f.BeforeNS == 0:
		order = ` ORDER BY d.iteration, d.seq`
	case f.BeforeNS > 0 && f.BeforeIteration == 0:
		order = ` ORDER BY d.ts_ns, d.seq`
	}
	q := decisionSelect + where + order
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	var out []DecisionRow
	if err := s.DB.SelectContext(ctx, &out, q, args...); err != nil {
		return nil, 0, fmt.Errorf("read unverified decisions: %w", err)
	}
	return out, total, nil
}

// DecisionsBySeq returns the decisions with the given journal positions.
func (s *Store) DecisionsBySeq(ctx context.Context, seqs []int64) ([]DecisionRow, error) {
	if len(seqs) == 0 {
		return nil, nil
	}
	arr, err := json.Marshal(seqs)
	if err != nil {
		return nil, err
	}
	var out []DecisionRow
	if err := s.DB.SelectContext(ctx, &out, decisionSelect+` WHERE d.seq IN (SELECT value FROM json_each(?))`, string(arr)); err != nil {
		return nil, fmt.Errorf("read decisions: %w", err)
	}
	return out, nil
}

// EventsSince returns the outcome events whose time is at or after sinceNS,
// oldest first, at most n.
func (s *Store) EventsSince(ctx context.Context, sinceNS int64, n int) ([]Event, error) {
	var out []Event
	err := s.DB.SelectContext(ctx, &out, `SELECT e.seq, e.decision_id, e.outcome, e.at_ns, e.src_rank, e.ts, e.evidence, e.file_id, e.line,
			e.recorded_by, e.raw, coalesce(d.input, '') AS input, f.path
		FROM outcome_events e JOIN journal_files f ON f.id = e.file_id LEFT JOIN decisions d ON d.id = e.decision_id
		WHERE e.at_ns >= ? ORDER BY e.at_ns, e.src_rank, e.line LIMIT ?`, sinceNS, n)
	if err != nil {
		return nil, fmt.Errorf("read outcomes since: %w", err)
	}
	return out, nil
}

// TallyRow is how many decisions have one tier, category and decision.
type TallyRow struct {
	Tier     string `db:"tier"`
	Category string `db:"category"`
	Decision string `db:"decision"`
	N        int64  `db:"n"`
	// Last is the highest journal position counted in the row.
	Last int64 `db:"last"`
}

// DecisionTally counts the decisions after journal position seq (all with
// 0) by tier, category and decision: a range of the table, so a caller
// that keeps a tally counts only what is new.
func (s *Store) DecisionTally(ctx context.Context, seq int64) ([]TallyRow, error) {
	var out []TallyRow
	if err := s.DB.SelectContext(ctx, &out, `SELECT tier, category, decision, count(*) AS n, max(seq) AS last
		FROM decisions WHERE seq > ? GROUP BY 1, 2, 3`, seq); err != nil {
		return nil, fmt.Errorf("tally decisions: %w", err)
	}
	return out, nil
}

// Candidate is what precedent search reads of a decision it scores: its
// place, id, category and current outcome (for ranking) and the text
// full-text search indexes (for bm25).
type Candidate struct {
	Seq        int64  `db:"seq"`
	ID         string `db:"id"`
	Category   string `db:"category"`
	Outcome    string `db:"outcome"`
	Input      string `db:"input"`
	Reason     string `db:"reason"`
	NextAction string `db:"next_action"`
	Context    string `db:"context"`
	// Iteration and Decision complete what a table of hits shows (read by
	// the project's index; a hub reads each hit in full).
	Iteration int64  `db:"iteration"`
	Decision  string `db:"decision"`
}

// Candidates returns the decisions at the given journal positions as
// precedent search scores and ranks them (one read for both), leaving out
// voided decisions (no one's precedent).
func (s *Store) Candidates(ctx context.Context, seqs []int64) ([]Candidate, error) {
	if len(seqs) == 0 {
		return nil, nil
	}
	arr, err := json.Marshal(seqs)
	if err != nil {
		return nil, err
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT d.seq, d.id, d.category, coalesce(o.outcome, 'PENDING') AS outcome,
			d.input, d.reason, d.next_action, d.context, d.iteration, d.decision
		FROM decisions d LEFT JOIN decision_outcomes o ON o.decision_id = d.id
		WHERE d.seq IN (SELECT value FROM json_each(?)) AND NOT EXISTS (SELECT 1 FROM decision_voids v WHERE v.decision_id = d.id AND v.void)`, string(arr))
	if err != nil {
		return nil, fmt.Errorf("read decisions: %w", err)
	}
	defer rows.Close()
	// Scanned by hand: sqlx's reflection was a tenth of the read.
	out := make([]Candidate, 0, len(seqs))
	for rows.Next() {
		var c Candidate
		// The integers into anys: database/sql copies an int64 into an
		// *int64 by reflection.
		var seq, iteration any
		if err := rows.Scan(&seq, &c.ID, &c.Category, &c.Outcome, &c.Input, &c.Reason, &c.NextAction, &c.Context, &iteration, &c.Decision); err != nil {
			return nil, fmt.Errorf("read decisions: %w", err)
		}
		var ok, oki bool
		c.Seq, ok = seq.(int64)
		c.Iteration, oki = iteration.(int64)
		if !ok || !oki {
			return nil, fmt.Errorf("read decisions: seq %v and iteration %v are not integers", seq, iteration)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read decisions: %w", err)
	}
	return out, nil
}
