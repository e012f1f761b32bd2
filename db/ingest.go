package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
)

// FileState is the sync state of one authoritative file.
type FileState struct {
	ID           int64  `db:"id"`
	Path         string `db:"path"`
	Kind         string `db:"kind"`
	Dev          int64  `db:"dev"`
	Ino          int64  `db:"ino"`
	Size         int64  `db:"size"`
	MtimeNS      int64  `db:"mtime_ns"`
	SyncedOffset int64  `db:"synced_offset"`
	SyncedLines  int64  `db:"synced_lines"`
	TailHash     string `db:"tail_hash"`
	LastTSNS     int64  `db:"last_ts_ns"`
	TornLine     int64  `db:"torn_line"`
	TornSize     int64  `db:"torn_size"`
	// Records counts the records indexed from the file, Events the outcome
	// events, Rejected and Warnings its findings.
	Records  int64  `db:"records"`
	Events   int64  `db:"events"`
	Rejected int64  `db:"rejected"`
	Warnings int64  `db:"warnings"`
	SyncedAt string `db:"synced_at"`
}

// DecisionRow is a decision as the index stores it.
type DecisionRow struct {
	Seq          int64           `db:"seq"`
	ID           string          `db:"id"`
	FileID       int64           `db:"file_id"`
	Line         int64           `db:"line"`
	LineEnd      int64           `db:"line_end"`
	ByteOffset   int64           `db:"byte_offset"`
	Iteration    int64           `db:"iteration"`
	TS           string          `db:"ts"`
	TSNS         sql.NullInt64   `db:"ts_ns"`
	Tier         string          `db:"tier"`
	Depth        string          `db:"depth"`
	Category     string          `db:"category"`
	Input        string          `db:"input"`
	Decision     string          `db:"decision"`
	Reason       string          `db:"reason"`
	NextAction   string          `db:"next_action"`
	Verification string          `db:"verification"`
	RetroPrevID  sql.NullString  `db:"retro_prev_id"`
	RetroOutcome string          `db:"retro_outcome"`
	Confidence   sql.NullFloat64 `db:"confidence"`
	Requestor    string          `db:"requestor"`
	Context      string          `db:"context"`
	RequestID    string          `db:"request_id"`
	// Raw is the record's text as it stands in the file, read by
	// EachDecision and Decision only ("" from the other reads).
	Raw string `db:"raw"`
	// Outcome is the current outcome (read only): the latest event's, or
	// PENDING; OutcomeTS and OutcomeEvidence are that event's ts and
	// evidence ("" without an event).
	Outcome         string `db:"outcome"`
	OutcomeTS       string `db:"outcome_ts"`
	OutcomeEvidence string `db:"outcome_evidence"`
	// OutcomeBy is the decision whose line carried that event ("" for a
	// retrograde journal line).
	OutcomeBy string `db:"outcome_by"`
	// Voided is true when the decision's latest void event voids it; VoidTS
	// and VoidReason are that event's ts and evidence ("" when not voided).
	Voided     bool   `db:"voided"`
	VoidTS     string `db:"void_ts"`
	VoidReason string `db:"void_reason"`
}

// EventRow is an outcome event.
type EventRow struct {
	Seq        int64  `db:"seq"`
	DecisionID string `db:"decision_id"`
	Outcome    string `db:"outcome"`
	AtNS       int64  `db:"at_ns"`
	SrcRank    int64  `db:"src_rank"`
	TS         string `db:"ts"`
	Evidence   string `db:"evidence"`
	FileID     int64  `db:"file_id"`
	Line       int64  `db:"line"`
	RecordedBy string `db:"recorded_by"`
	// Raw is the line's text for events read from the retrograde journal
	// (empty for a decision line's retrograde field).
	Raw string `db:"raw"`
}

// VoidRow is a void event: a line of the retrograde journal that voids a
// decision recorded by mistake (Void), or takes a void back.
type VoidRow struct {
	Seq        int64  `db:"seq"`
	DecisionID string `db:"decision_id"`
	Void       bool   `db:"void"`
	AtNS       int64  `db:"at_ns"`
	TS         string `db:"ts"`
	Evidence   string `db:"evidence"`
	FileID     int64  `db:"file_id"`
	Line       int64  `db:"line"`
	Raw        string `db:"raw"`
}

// FindingRow is a line that was rejected (error) or accepted with a remark
// (warning).
type FindingRow struct {
	Seq        int64  `db:"seq"`
	FileID     int64  `db:"file_id"`
	Line       int64  `db:"line"`
	LineEnd    int64  `db:"line_end"`
	ByteOffset int64  `db:"byte_offset"`
	Length     int64  `db:"length"`
	Severity   string `db:"severity"`
	Code       string `db:"code"`
	RecordID   string `db:"record_id"`
	Message    string `db:"message"`
	Excerpt    string `db:"excerpt"`
}

const fileCols = `id, path, kind, dev, ino, size, mtime_ns, synced_offset, synced_lines, tail_hash, last_ts_ns, torn_line, torn_size, records, events, rejected, warnings, synced_at`

// FileState returns the sync state of path, or found=false.
func (tx *Tx) FileState(ctx context.Context, path string) (FileState, bool, error) {
	return fileState(ctx, tx, path)
}

// FileState returns the sync state of path outside any transaction: the one
// read the hook path makes when nothing changed.
func (s *Store) FileState(ctx context.Context, path string) (FileState, bool, error) {
	return fileState(ctx, s.DB, path)
}

func fileState(ctx context.Context, q sqlx.QueryerContext, path string) (st FileState, found bool, err error) {
	err = sqlx.GetContext(ctx, q, &st, `SELECT `+fileCols+` FROM journal_files WHERE path = ?`, path)
	if isNoRows(err) {
		return FileState{Path: path}, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("read sync state of %s: %w", path, err)
	}
	return st, true, nil
}

// SaveFileState inserts or updates st, setting st.ID on insert.
func (tx *Tx) SaveFileState(ctx context.Context, st *FileState) error {
	if st.ID == 0 {
		// The id SQLite would give, the bulk load's mark (id -1) aside.
		res, err := tx.NamedExecContext(ctx, `INSERT INTO journal_files (id, path, kind, dev, ino, size, mtime_ns, synced_offset, synced_lines, tail_hash, last_ts_ns, torn_line, torn_size, records, events, rejected, warnings, synced_at)
			VALUES ((SELECT coalesce(max(id), 0) + 1 FROM journal_files WHERE id > 0), :path, :kind, :dev, :ino, :size, :mtime_ns, :synced_offset, :synced_lines, :tail_hash, :last_ts_ns, :torn_line, :torn_size, :records, :events, :rejected, :warnings, :synced_at)`, st)
		if err != nil {
			return fmt.Errorf("record sync state of %s: %w", st.Path, err)
		}
		st.ID, err = res.LastInsertId()
		return err
	}
	_, err := tx.NamedExecContext(ctx, `UPDATE journal_files SET kind = :kind, dev = :dev, ino = :ino, size = :size, mtime_ns = :mtime_ns,
		synced_offset = :synced_offset, synced_lines = :synced_lines, tail_hash = :tail_hash, last_ts_ns = :last_ts_ns,
		torn_line = :torn_line, torn_size = :torn_size, records = :records, events = :events, rejected = :rejected, warnings = :warnings, synced_at = :synced_at WHERE id = :id`, st)
	if err != nil {
		return fmt.Errorf("record sync state of %s: %w", st.Path, err)
	}
	return nil
}

// CanonicalDecisionSQL is the SQL of the canonical text of a decision row whose
// columns are named with the prefix p ("d.", or "" inside an INSERT's
// SELECT): its fields as orbit writes a decision line (journal.Marshal of
// journal.Decision: seed 000's field order, compact, the optional fields
// only when set), rendered by SQLite itself, so that the text a row is
// checked against when it is indexed is the text it is read back as. (Where
// SQLite's rendering differs from Go's, as for U+2028 or a confidence of
// more than 15 digits, the line keeps its raw text.)
func CanonicalDecisionSQL(p string) string {
	return canonicalDecisionSQL(func(col string) string { return p + col })
}

// canonicalDecisionSQL is CanonicalDecisionSQL with each column's
// expression given by col.
func canonicalDecisionSQL(col func(string) string) string {
	q := func(c string) string { return "json_quote(" + col(c) + ")" }
	return `'{"id":' || ` + q("id") + ` || ',"iteration":' || ` + col("iteration") + ` || ',"ts":' || ` + q("ts") +
		` || ',"tier":' || ` + q("tier") + ` || ',"depth":' || ` + q("depth") + ` || ',"category":' || ` + q("category") +
		` || ',"input":' || ` + q("input") + ` || ',"decision":' || ` + q("decision") + ` || ',"reason":' || ` + q("reason") +
		` || ',"next_action":' || ` + q("next_action") + ` || ',"verification":' || ` + q("verification") +
		` || ',"retrograde":{"previous_id":' || ` + q("retro_prev_id") + ` || ',"outcome":' || ` + q("retro_outcome") + ` || '}'` +
		` || iif(` + col("confidence") + ` IS NULL, '', ',"confidence":' || ` + confidenceTextSQL(col("confidence")) + `)` +
		` || iif(` + col("requestor") + ` = '', '', ',"requestor":' || ` + q("requestor") + `)` +
		` || iif(` + col("context") + ` = '', '', ',"context":' || ` + q("context") + `)` +
		` || iif(` + col("request_id") + ` = '', '', ',"request_id":' || ` + q("request_id") + `) || '}'`
}

// confidenceTextSQL is the SQL of how the canonical text renders the
// confidence expression given (not NULL): an integer as one, any other
// value with json_quote.
func confidenceTextSQL(conf string) string {
	return `iif(` + conf + ` = CAST(` + conf + ` AS INTEGER), CAST(` + conf + ` AS INTEGER), json_quote(` + conf + `))`
}

// DecisionRawSQL is the SQL of the exact text of the decision row aliased
// alias, as read from its file: a row stores raw only when it differs from
// the canonical form of its fields (raw is empty otherwise, since no record's text is
// empty), so that the index does not hold each line twice.
func DecisionRawSQL(alias string) string {
	p := alias + "."
	return `CASE WHEN ` + p + `raw = '' THEN ` + CanonicalDecisionSQL(p) + ` ELSE ` + p + `raw END`
}

// decisionParams are a decision's fields, in the order of the stored
// columns DecisionStoredSQL computes from them (and InsertDecision binds).
var decisionParams = []string{"id", "file_id", "line", "line_end", "byte_offset", "iteration", "ts", "ts_ns", "tier", "depth",
	"category", "input", "decision", "reason", "next_action", "verification", "retro_prev_id", "retro_outcome", "confidence",
	"requestor", "context", "request_id", "raw"}

// TSTextSQL is the SQL of what a decision row stores in ts_text for the ts
// text and ts_ns expressions given: the empty string when the text is the canonical UTC
// rendering of ts_ns (the virtual column ts renders it back, with the same
// expression as migration 00006), the text otherwise.
func TSTextSQL(ts, tsNS string) string {
	return `CASE WHEN ` + ts + ` = strftime('%Y-%m-%dT%H:%M:%SZ', ` + tsNS + ` / 1000000000, 'unixepoch') THEN '' ELSE ` + ts + ` END`
}

// RawTextSQL is the SQL of what a decision row stores in raw for the line's
// text raw: the empty string when it is the canonical form of the row's fields, whose
// expressions col gives, the text otherwise.
func RawTextSQL(raw string, col func(string) string) string {
	return `CASE WHEN ` + raw + ` = ` + canonicalDecisionSQL(col) + ` THEN '' ELSE ` + raw + ` END`
}

// DecisionStoredSQL returns the stored columns of a decision row (schema
// v7) and the SQL of each one's value, given the expression of each field
// (decisionParams' names; ts is the text, raw the line's text): raw only
// when it is not the canonical form of the fields, ts only when it is not
// the canonical rendering of ts_ns, the enumerations as codes (CodeSQL),
// line_end as line_span, confidence in hundredths when exact. What
// InsertDecision and the benchmark's sqlite3 shell load both store.
func DecisionStoredSQL(field func(string) string) (cols, vals []string) {
	for _, c := range decisionParams {
		col, val := c, field(c)
		switch c {
		case "ts":
			col, val = "ts_text", TSTextSQL(field("ts"), field("ts_ns"))
		case "raw":
			val = RawTextSQL(field("raw"), field)
		case "line_end":
			col, val = "line_span", field("line_end")+" - "+field("line")
		case "confidence":
			col, val = "confidence_code", ConfidenceCodeSQL(field(c))
		case "tier", "depth", "category", "decision", "verification", "retro_outcome":
			col, val = c+"_code", CodeSQL(c, field(c))
		}
		cols, vals = append(cols, col), append(vals, val)
	}
	return cols, vals
}

// insertDecision is a one-row INSERT … VALUES of the stored columns, each
// value computed in Go (storedDecision), not an INSERT … SELECT: SQLite
// writes every page a multi-row statement changes to a statement journal
// first (a temp file), which was a third of an import's CPU. Computing them
// in SQL (DecisionStoredSQL's CASEs, strftime, the canonical text of raw
// with json_quote) took numbered parameters, which cost a name lookup per
// bound value, and a sixth of the insert's instructions.
var insertDecision = func() string {
	cols, _ := DecisionStoredSQL(func(c string) string { return c })
	return `INSERT INTO decisions (` + strings.Join(cols, ", ") + `) VALUES (` + strings.Repeat("?, ", len(cols)-1) + `?)
	ON CONFLICT (id) DO NOTHING`
}()

// InsertDecision adds d and its full-text entry. It reports false, and
// changes nothing, when a decision with the same id is already indexed.
func (tx *Tx) InsertDecision(ctx context.Context, d *DecisionRow) (bool, error) {
	raw, err := tx.storedRaw(ctx, d)
	if err != nil {
		return false, err
	}
	// DecisionStoredSQL's columns, in decisionParams' order, with what Go
	// stores for each (held to the SQL by codes_internal_test.go).
	res, err := tx.execRow(ctx, insertDecision, d.ID, d.FileID, d.Line, d.LineEnd-d.Line, d.ByteOffset, d.Iteration, storedTSText(d.TS, d.TSNS), d.TSNS,
		Code("tier", d.Tier), Code("depth", d.Depth), Code("category", d.Category), d.Input, Code("decision", d.Decision), d.Reason,
		d.NextAction, Code("verification", d.Verification), d.RetroPrevID, Code("retro_outcome", d.RetroOutcome),
		confidenceCode(d.Confidence), d.Requestor, d.Context, d.RequestID, raw)
	if err != nil {
		return false, fmt.Errorf("index decision %s: %w", d.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	d.Seq, err = res.LastInsertId()
	if err != nil {
		return false, err
	}
	return true, nil
}

// IndexText adds the full-text entries of the decisions after mark: one
// statement per sync batch rather than one per decision.
func (tx *Tx) IndexText(ctx context.Context, mark int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO decisions_fts (rowid, input, reason, next_action, context)
		SELECT seq, input, reason, next_action, context FROM decisions WHERE seq > ?`, mark)
	if err != nil {
		return fmt.Errorf("index decision text: %w", err)
	}
	return nil
}

// DecisionLocation returns where an indexed decision stands.
func (tx *Tx) DecisionLocation(ctx context.Context, id string) (path string, line int64, err error) {
	err = tx.QueryRowxContext(ctx, `SELECT f.path, d.line FROM decisions d JOIN journal_files f ON f.id = d.file_id WHERE d.id = ?`, id).Scan(&path, &line)
	if err != nil {
		return "", 0, fmt.Errorf("locate decision %s: %w", id, err)
	}
	return path, line, nil
}

// decisionExists asks whether a decision id is indexed.
const decisionExists = `SELECT EXISTS (SELECT 1 FROM decisions WHERE id = ?)`

// DecisionExists reports whether id is indexed.
func (tx *Tx) DecisionExists(ctx context.Context, id string) (bool, error) {
	st, rowCtx, err := tx.stmt(ctx, decisionExists)
	if err != nil {
		return false, err
	}
	var ok bool
	if err := st.QueryRowxContext(rowCtx, id).Scan(&ok); err != nil {
		return false, fmt.Errorf("look up decision %s: %w", id, err)
	}
	return ok, nil
}

// insertEvent stores the outcome as its code and the ts text only when it
// is not the canonical rendering of at_ns (schema v7), both computed in Go
// (Code, storedEventTSText: what CodeSQL and EventTSTextSQL store).
const insertEvent = `INSERT INTO outcome_events (decision_id, outcome_code, at_ns, src_rank, ts_text, evidence, file_id, line, recorded_by, raw)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// InsertEvent appends an outcome event.
func (tx *Tx) InsertEvent(ctx context.Context, e *EventRow) error {
	res, err := tx.execRow(ctx, insertEvent, e.DecisionID, Code("outcome", e.Outcome), e.AtNS, e.SrcRank, storedEventTSText(e.TS, e.AtNS), e.Evidence,
		e.FileID, e.Line, e.RecordedBy, e.Raw)
	if err != nil {
		return fmt.Errorf("index outcome of %s: %w", e.DecisionID, err)
	}
	e.Seq, err = res.LastInsertId()
	return err
}

const insertVoid = `INSERT INTO void_events (decision_id, void, at_ns, ts, evidence, file_id, line, raw) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

// InsertVoid appends a void event.
func (tx *Tx) InsertVoid(ctx context.Context, v *VoidRow) error {
	res, err := tx.execRow(ctx, insertVoid, v.DecisionID, v.Void, v.AtNS, v.TS, v.Evidence, v.FileID, v.Line, v.Raw)
	if err != nil {
		return fmt.Errorf("index void of %s: %w", v.DecisionID, err)
	}
	v.Seq, err = res.LastInsertId()
	return err
}

const insertFinding = `INSERT INTO findings (file_id, line, line_end, byte_offset, length, severity, code, record_id, message, excerpt)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// InsertFinding records a rejected line or a remark about an accepted one.
func (tx *Tx) InsertFinding(ctx context.Context, f *FindingRow) error {
	if _, err := tx.execRow(ctx, insertFinding, f.FileID, f.Line, f.LineEnd, f.ByteOffset, f.Length, f.Severity, f.Code, f.RecordID, f.Message, f.Excerpt); err != nil {
		return fmt.Errorf("record finding at line %d: %w", f.Line, err)
	}
	return nil
}

// MergeText merges the full-text index's segments into one (FTS5's
// optimize): each word a search looks up is then one seek instead of one
// per segment. It rewrites the whole full-text index, in one transaction.
func (s *Store) MergeText(ctx context.Context) error {
	if _, err := s.DB.ExecContext(ctx, `INSERT INTO decisions_fts (decisions_fts) VALUES ('optimize')`); err != nil {
		return s.wrap("merge the full-text index of", err)
	}
	return nil
}

// Marks are the highest decision, outcome event and void event sequence
// numbers: what IndexText, RefreshOutcomes and RefreshVoids take; and the
// owner of a pending bulk load ("" when none is: bulk.go).
type Marks struct {
	Decision, Event, Void int64
	BulkOwner             string
}

// Marks returns the index's marks.
func (tx *Tx) Marks(ctx context.Context) (Marks, error) {
	var m Marks
	err := tx.QueryRowxContext(ctx, `SELECT (SELECT coalesce(max(seq), 0) FROM decisions), (SELECT coalesce(max(seq), 0) FROM outcome_events),
		(SELECT coalesce(max(seq), 0) FROM void_events), coalesce((SELECT tail_hash FROM journal_files WHERE id = ?), '')`, bulkMarkID).Scan(&m.Decision, &m.Event, &m.Void, &m.BulkOwner)
	if err != nil {
		return m, fmt.Errorf("read index marks: %w", err)
	}
	return m, nil
}

// countedSeq is the decision_seq of decision_outcomes for the decision whose
// id is the expression given: the decision's seq, or NULL while the
// decision is not indexed or is voided. The totals' triggers count a
// current outcome only with a decision_seq, so a void takes the decision
// out of every trust figure, and taking the void back puts it in again.
func countedSeq(id string) string {
	return `(SELECT d.seq FROM decisions d WHERE d.id = ` + id + ` AND NOT EXISTS (SELECT 1 FROM decision_voids v WHERE v.decision_id = d.id AND v.void))`
}

// RefreshOutcomes attaches waiting outcomes to the decisions added after
// decisionMark (when decisions were added) and folds the events added after
// eventMark into the current outcomes (when events were added): an event
// replaces the current outcome when it is later in (at_ns, src_rank, line)
// order. A batch that added neither changes nothing here.
func (tx *Tx) RefreshOutcomes(ctx context.Context, decisionMark, eventMark int64, decisions, events bool) error {
	if decisions {
		if err := tx.attachWaiting(ctx, decisionMark); err != nil {
			return fmt.Errorf("refresh outcomes: %w", err)
		}
	}
	if !events {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO decision_outcomes (decision_id, decision_seq, outcome_code, event_seq, at_ns, src_rank, line)
		SELECT e.decision_id, `+countedSeq("e.decision_id")+`, e.outcome_code, e.seq, e.at_ns, e.src_rank, e.line
		FROM outcome_events e WHERE e.seq > ?
		ON CONFLICT (decision_id) DO UPDATE SET outcome_code = excluded.outcome_code, event_seq = excluded.event_seq,
			at_ns = excluded.at_ns, src_rank = excluded.src_rank, line = excluded.line
		WHERE (excluded.at_ns, excluded.src_rank, excluded.line) > (decision_outcomes.at_ns, decision_outcomes.src_rank, decision_outcomes.line)`, eventMark)
	if err != nil {
		return fmt.Errorf("refresh outcomes: %w", err)
	}
	return nil
}

// waitingAfter selects the current outcomes that wait for a decision
// (decision_seq NULL: recorded before it, or voided) naming one added after
// the mark.
const waitingAfter = `decision_seq IS NULL
	AND EXISTS (SELECT 1 FROM decisions d WHERE d.id = decision_outcomes.decision_id AND d.seq > ?)`

// attachWaiting gives the current outcomes waiting for a decision added
// after mark their decision_seq, which the totals' triggers count. Most
// batches attach none, and compiling an UPDATE of decision_outcomes
// compiles its triggers too (about a tenth of a hook's instructions), so a
// plain SELECT asks first.
func (tx *Tx) attachWaiting(ctx context.Context, mark int64) error {
	var waiting bool
	if err := tx.QueryRowxContext(ctx, `SELECT EXISTS (SELECT 1 FROM decision_outcomes WHERE `+waitingAfter+`)`, mark).Scan(&waiting); err != nil || !waiting {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE decision_outcomes SET decision_seq = `+countedSeq("decision_outcomes.decision_id")+` WHERE `+waitingAfter, mark)
	return err
}

// RefreshVoids folds the void events added after mark into the current
// voids (the latest in (at_ns, line) order wins), and counts or uncounts
// the current outcomes of the decisions they name.
func (tx *Tx) RefreshVoids(ctx context.Context, mark int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO decision_voids (decision_id, void, event_seq, at_ns, line)
		SELECT decision_id, void, seq, at_ns, line FROM void_events WHERE seq > ? ORDER BY seq
		ON CONFLICT (decision_id) DO UPDATE SET void = excluded.void, event_seq = excluded.event_seq, at_ns = excluded.at_ns, line = excluded.line
		WHERE (excluded.at_ns, excluded.line) > (decision_voids.at_ns, decision_voids.line)`, mark)
	if err != nil {
		return fmt.Errorf("refresh voids: %w", err)
	}
	_, err = tx.ExecContext(ctx, `UPDATE decision_outcomes SET decision_seq = `+countedSeq("decision_outcomes.decision_id")+`
		WHERE decision_id IN (SELECT decision_id FROM void_events WHERE seq > ?)`, mark)
	if err != nil {
		return fmt.Errorf("refresh voids: %w", err)
	}
	return nil
}

// ForgetFile forgets the findings about a file and resets its sync state,
// so that it is read again from its first byte (the records indexed from
// it are forgotten by their kind).
func (tx *Tx) ForgetFile(ctx context.Context, fileID int64) error {
	for _, q := range []string{
		`DELETE FROM findings WHERE file_id = ?`,
		`UPDATE journal_files SET size = 0, mtime_ns = 0, synced_offset = 0, synced_lines = 0, tail_hash = '', last_ts_ns = 0, torn_line = 0, torn_size = 0, records = 0, events = 0, rejected = 0, warnings = 0 WHERE id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, fileID); err != nil {
			return fmt.Errorf("reset file %d: %w", fileID, err)
		}
	}
	return nil
}

// ResetDecisions forgets the decisions and outcome events indexed from one
// file, and recomputes the current outcomes and the totals from what
// remains.
func (tx *Tx) ResetDecisions(ctx context.Context, fileID int64) error {
	stmts := []string{
		// External-content FTS: delete each entry with the values it indexed.
		`INSERT INTO decisions_fts (decisions_fts, rowid, input, reason, next_action, context)
			SELECT 'delete', seq, input, reason, next_action, context FROM decisions WHERE file_id = ?`,
		`DELETE FROM decisions WHERE file_id = ?`,
		`DELETE FROM outcome_events WHERE file_id = ?`,
		`DELETE FROM void_events WHERE file_id = ?`,
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q, fileID); err != nil {
			return fmt.Errorf("reset file %d: %w", fileID, err)
		}
	}
	// Current voids, outcomes and the totals are recomputed from what
	// remains.
	for _, q := range []string{
		`DELETE FROM decision_outcomes`,
		`DELETE FROM decision_voids`,
		`INSERT INTO decision_voids (decision_id, void, event_seq, at_ns, line)
			SELECT decision_id, void, seq, at_ns, line FROM (
				SELECT *, row_number() OVER (PARTITION BY decision_id ORDER BY at_ns DESC, line DESC) AS rn
				FROM void_events) WHERE rn = 1`,
		`INSERT INTO decision_outcomes (decision_id, decision_seq, outcome_code, event_seq, at_ns, src_rank, line)
			SELECT e.decision_id, ` + countedSeq("e.decision_id") + `, e.outcome_code, e.seq, e.at_ns, e.src_rank, e.line FROM (
				SELECT *, row_number() OVER (PARTITION BY decision_id ORDER BY at_ns DESC, src_rank DESC, line DESC) AS rn
				FROM outcome_events) e WHERE e.rn = 1`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("reset file %d: %w", fileID, err)
		}
	}
	return tx.RecomputeTotals(ctx)
}

// RecomputeTotals rebuilds the trigger-kept totals from decision_outcomes
// (after bulk deletes, when the triggers could not see the decisions).
func (tx *Tx) RecomputeTotals(ctx context.Context) error {
	scored := `FROM decision_outcomes o JOIN decisions d ON d.seq = o.decision_seq WHERE o.outcome IN ('CORRECT', 'INCORRECT')`
	for _, q := range []string{
		`UPDATE outcome_totals SET n = (SELECT count(*) FROM decision_outcomes o WHERE o.outcome = outcome_totals.outcome AND o.decision_seq IS NOT NULL)`,
		`DELETE FROM trust_cells`,
		`INSERT INTO trust_cells (category, tier, depth, requestor, correct, incorrect)
			SELECT d.category, d.tier, d.depth, d.requestor, sum(o.outcome = 'CORRECT'), sum(o.outcome = 'INCORRECT') ` + scored + `
			GROUP BY 1, 2, 3, 4`,
		`DELETE FROM trust_iterations`,
		`INSERT INTO trust_iterations (iteration, correct, incorrect)
			SELECT d.iteration, sum(o.outcome = 'CORRECT'), sum(o.outcome = 'INCORRECT') ` + scored + ` GROUP BY 1`,
		`DELETE FROM trust_calibration`,
		`INSERT INTO trust_calibration (bucket, n, correct, conf_u, conf2_u2, conf_correct_u)
			SELECT b, count(*), sum(ok), sum(u), sum(u * u), sum(u * ok) FROM (
				SELECT CAST(round(d.confidence * 100) AS INTEGER) AS b, CAST(round(d.confidence * 1000000) AS INTEGER) AS u,
					o.outcome = 'CORRECT' AS ok ` + scored + ` AND d.confidence IS NOT NULL) GROUP BY b`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("recompute totals: %w", err)
		}
	}
	return nil
}

// TextFrom returns the text of every record indexed from a file at or after
// line, in file order; records is the kind's query of them (line, text,
// record_id of file ?1).
func (tx *Tx) TextFrom(ctx context.Context, records string, fileID, line int64) ([]string, error) {
	var texts []string
	err := tx.SelectContext(ctx, &texts, `SELECT text FROM (`+records+`) WHERE line >= ?2 ORDER BY line`, fileID, line)
	if err != nil {
		return nil, fmt.Errorf("read records from line %d: %w", line, err)
	}
	return texts, nil
}

// IndexedLine is one non-blank line of a file as the index remembers it: a
// record (kind "record") with its text, or a rejected line (kind "rejected")
// with the start of its text.
type IndexedLine struct {
	Line     int64  `db:"line"`
	Kind     string `db:"kind"`
	Text     string `db:"text"`
	RecordID string `db:"record_id"`
}

// EachIndexedLine calls fn for every line indexed from a file, in file
// order, streaming (a 1M-line journal is never held in memory): the records
// the kind's query returns (line, text, record_id of file ?1), and the
// rejected lines.
func (s *Store) EachIndexedLine(ctx context.Context, records string, fileID int64, fn func(IndexedLine) error) error {
	rows, err := s.DB.QueryxContext(ctx, `SELECT line, kind, text, record_id FROM (
			SELECT line, 'record' AS kind, text, record_id FROM (`+records+`)
			UNION ALL SELECT line, 'rejected', excerpt, record_id FROM findings WHERE file_id = ?1 AND severity = 'error')
		ORDER BY line`, fileID)
	if err != nil {
		return fmt.Errorf("read indexed lines: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l IndexedLine
		if err := rows.StructScan(&l); err != nil {
			return fmt.Errorf("read indexed lines: %w", err)
		}
		if err := fn(l); err != nil {
			return err
		}
	}
	return rows.Err()
}

// OrphanEvents returns the events added after mark whose decision is not
// indexed.
func (tx *Tx) OrphanEvents(ctx context.Context, mark int64) ([]EventRow, error) {
	return orphanEvents(ctx, tx, mark)
}

// OrphanEvents returns every event whose decision is not indexed, with the
// path of its file.
func (s *Store) OrphanEvents(ctx context.Context) ([]LocatedEvent, error) {
	var out []LocatedEvent
	err := s.DB.SelectContext(ctx, &out, `SELECT e.seq, e.decision_id, e.outcome, e.at_ns, e.src_rank, e.ts, e.evidence, e.file_id, e.line, e.recorded_by, e.raw, f.path
		FROM outcome_events e JOIN journal_files f ON f.id = e.file_id
		WHERE NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = e.decision_id) ORDER BY f.id, e.line`)
	if err != nil {
		return nil, fmt.Errorf("check outcome events: %w", err)
	}
	return out, nil
}

// OrphanVoids returns the void events added after mark whose decision is
// not indexed.
func (tx *Tx) OrphanVoids(ctx context.Context, mark int64) ([]VoidRow, error) {
	var out []VoidRow
	err := tx.SelectContext(ctx, &out, `SELECT `+voidCols+` FROM void_events e
		WHERE e.seq > ? AND NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = e.decision_id)`, mark)
	if err != nil {
		return nil, fmt.Errorf("check void events: %w", err)
	}
	return out, nil
}

// LocatedVoid is a void event with the path of its file.
type LocatedVoid struct {
	VoidRow
	Path string `db:"path"`
}

// OrphanVoids returns every void event whose decision is not indexed, with
// the path of its file.
func (s *Store) OrphanVoids(ctx context.Context) ([]LocatedVoid, error) {
	var out []LocatedVoid
	err := s.DB.SelectContext(ctx, &out, `SELECT `+voidCols+`, f.path FROM void_events e JOIN journal_files f ON f.id = e.file_id
		WHERE NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = e.decision_id) ORDER BY f.id, e.line`)
	if err != nil {
		return nil, fmt.Errorf("check void events: %w", err)
	}
	return out, nil
}

const voidCols = `e.seq, e.decision_id, e.void, e.at_ns, e.ts, e.evidence, e.file_id, e.line, e.raw`

// LocatedEvent is an event with the path of its file.
type LocatedEvent struct {
	EventRow
	Path string `db:"path"`
}

func orphanEvents(ctx context.Context, q sqlx.QueryerContext, mark int64) ([]EventRow, error) {
	var out []EventRow
	err := sqlx.SelectContext(ctx, q, &out, `SELECT e.seq, e.decision_id, e.outcome, e.at_ns, e.src_rank, e.ts, e.evidence, e.file_id, e.line, e.recorded_by, e.raw
		FROM outcome_events e WHERE e.seq > ? AND NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = e.decision_id)`, mark)
	if err != nil {
		return nil, fmt.Errorf("check outcome events: %w", err)
	}
	return out, nil
}
