package journal

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/project"
)

// The kinds of the decision journal and the retrograde journal.
const (
	KindDecisions = "decisions"
	KindRetro     = "retro"
)

// decisionKind reads the decision journal (seed 000's records) or, when
// retro, the retrograde journal (outcomes recorded on their own) into the
// decisions, outcome_events and decision_outcomes tables.
type decisionKind struct{ retro bool }

// defaultFiles are the decision journal and the retrograde journal, the
// files every Index follows first.
func defaultFiles() []FileSpec {
	return []FileSpec{
		{Path: project.DecisionsFile, Kind: decisionKind{}},
		{Path: project.RetroFile, Kind: decisionKind{retro: true}},
	}
}

func (k decisionKind) Name() string {
	if k.retro {
		return KindRetro
	}
	return KindDecisions
}

func (k decisionKind) Decode(text []byte) Decoded {
	if k.retro {
		return ParseRetro(text)
	}
	p, warns, bad := ParseDecision(text)
	return Decoded{Record: p, ID: p.ID, Warnings: warns, Reject: bad}
}

func (k decisionKind) Begin(ctx context.Context, tx *db.Tx, st *db.FileState) (Batch, error) {
	marks, err := tx.Marks(ctx)
	if err != nil {
		return nil, err
	}
	return &decisionBatch{tx: tx, st: st, marks: marks}, nil
}

func (decisionKind) Reset(ctx context.Context, tx *db.Tx, fileID int64) error {
	// The full-text entries are deleted with the text they indexed: a bulk
	// load's must all be there first.
	if err := tx.FinishBulk(ctx); err != nil {
		return err
	}
	return tx.ResetDecisions(ctx, fileID)
}

// Records are the decisions of a file and the outcome and void lines of
// the retrograde journal (a decision line's retrograde field is part of its
// decision, not a line of its own).
func (decisionKind) Records() string {
	return `SELECT line, ` + db.DecisionRawSQL("decisions") + ` AS text, id AS record_id FROM decisions WHERE file_id = ?1
		UNION ALL SELECT line, raw, decision_id FROM outcome_events WHERE file_id = ?1 AND src_rank = 1
		UNION ALL SELECT line, raw, decision_id FROM void_events WHERE file_id = ?1`
}

// Check finds the outcome events of a file whose decision is not in the
// journal, from the index as it stands.
func (decisionKind) Check(ctx context.Context, store *db.Store, st db.FileState) ([]Problem, error) {
	orphans, err := store.OrphanEvents(ctx)
	if err != nil {
		return nil, err
	}
	voids, err := store.OrphanVoids(ctx)
	if err != nil {
		return nil, err
	}
	for _, v := range voids {
		orphans = append(orphans, db.LocatedEvent{EventRow: db.EventRow{DecisionID: v.DecisionID, FileID: v.FileID, Line: v.Line}, Path: v.Path})
	}
	var out []Problem
	for _, o := range orphans {
		if o.FileID != st.ID {
			continue
		}
		field := "decision_id"
		if o.RecordedBy != "" {
			field = "retrograde.previous_id"
		}
		out = append(out, orphanProblem(o.Path, int(o.Line), int(o.Line), field, o.DecisionID))
	}
	slices.SortStableFunc(out, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
	return out, nil
}

// decisionBatch indexes decisions and outcomes within one transaction.
type decisionBatch struct {
	tx *db.Tx
	st *db.FileState
	// marks are the last decision, outcome event and void before the batch.
	marks     db.Marks
	decisions int
	// events are the outcome events added in this transaction, by seq, for
	// the check that their decisions exist; voids the void events.
	events map[int64]eventSource
	voids  map[int64]Chunk
	// bulk is the bulk load of the import running this batch's sync, if
	// any: it takes the text of the decisions instead of Done.
	bulk *bulkText
}

type eventSource struct {
	c     Chunk
	field string
}

func (b *decisionBatch) Apply(ctx context.Context, c Chunk, d Decoded) (*Problem, error) {
	if v, ok := d.Record.(ParsedVoid); ok {
		return nil, b.void(ctx, c, v)
	}
	if p, ok := d.Record.(ParsedOutcome); ok {
		if !p.TSTime.IsZero() {
			b.st.LastTSNS = p.TSTime.UnixNano()
		}
		return nil, b.event(ctx, c, p.DecisionID, p.Outcome, p.TS, p.Evidence, "", string(c.Text))
	}
	p := d.Record.(Parsed)
	row := decisionRow(p, c, b.st.ID)
	if !p.TSTime.IsZero() {
		b.st.LastTSNS = p.TSTime.UnixNano()
	}
	ok, err := b.tx.InsertDecision(ctx, &row)
	if err != nil {
		return nil, err
	}
	if !ok {
		path, line, err := b.tx.DecisionLocation(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		return &Problem{Severity: SevError, Code: CodeDuplicate, RecordID: p.ID,
			Message: fmt.Sprintf("duplicate id %q (first at %s:%d); not indexed", p.ID, path, line)}, nil
	}
	b.decisions++
	if b.bulk != nil {
		b.bulk.add(&row)
	}
	if !p.Event {
		return nil, nil
	}
	return nil, b.event(ctx, c, *p.Retrograde.PreviousID, p.Retrograde.Outcome, p.TS, "", p.ID, "")
}

// event records an outcome for decisionID at the current event time of the
// file: the line's ts, or the last valid ts before it.
func (b *decisionBatch) event(ctx context.Context, c Chunk, decisionID, outcome, ts, evidence, recordedBy, raw string) error {
	rank, field := int64(1), "decision_id"
	if recordedBy != "" {
		rank, field = 0, "retrograde.previous_id"
	}
	e := db.EventRow{DecisionID: decisionID, Outcome: outcome, AtNS: b.st.LastTSNS, SrcRank: rank, TS: ts, Evidence: evidence,
		FileID: b.st.ID, Line: int64(c.Line), RecordedBy: recordedBy, Raw: raw}
	if err := b.tx.InsertEvent(ctx, &e); err != nil {
		return err
	}
	b.st.Events++
	if b.events == nil {
		b.events = map[int64]eventSource{}
	}
	b.events[e.Seq] = eventSource{c: c, field: field}
	return nil
}

// void records a void event for a decision at the current event time of
// the file, as event does for an outcome.
func (b *decisionBatch) void(ctx context.Context, c Chunk, v ParsedVoid) error {
	if !v.TSTime.IsZero() {
		b.st.LastTSNS = v.TSTime.UnixNano()
	}
	row := db.VoidRow{DecisionID: v.DecisionID, Void: v.Void, AtNS: b.st.LastTSNS, TS: v.TS, Evidence: v.Evidence,
		FileID: b.st.ID, Line: int64(c.Line), Raw: string(c.Text)}
	if err := b.tx.InsertVoid(ctx, &row); err != nil {
		return err
	}
	if b.voids == nil {
		b.voids = map[int64]Chunk{}
	}
	b.voids[row.Seq] = c
	return nil
}

// Done indexes the batch's text, folds its events into the current
// outcomes, and reports the events whose decision is not in the journal:
// one query for the whole batch. That warning is not stored, since whether
// the decision exists changes as the files grow; verify computes it from
// the index as it stands.
func (b *decisionBatch) Done(ctx context.Context) ([]Problem, error) {
	mine := b.bulk != nil && b.marks.BulkOwner == b.bulk.owner
	if b.bulk != nil && !mine {
		// Another sync finished this import's bulk load: the text is
		// indexed here from now on.
		b.bulk.lost = true
		b.bulk.rows = nil
	}
	switch {
	case mine:
		// The bulk load's builder indexes the text once this commits.
	case b.marks.BulkOwner != "":
		// Another process's bulk load is pending: finish it (its rebuild
		// indexes this batch's decisions too), so that no decision this
		// sync adds or answers from lacks its full-text entry.
		if err := b.tx.FinishBulk(ctx); err != nil {
			return nil, err
		}
	case b.decisions > 0:
		if err := b.tx.IndexText(ctx, b.marks.Decision); err != nil {
			return nil, err
		}
	}
	if len(b.voids) > 0 {
		if err := b.tx.RefreshVoids(ctx, b.marks.Void); err != nil {
			return nil, err
		}
	}
	if b.decisions == 0 && len(b.events) == 0 && len(b.voids) == 0 {
		return nil, nil
	}
	if err := b.tx.RefreshOutcomes(ctx, b.marks.Decision, b.marks.Event, b.decisions > 0, len(b.events) > 0); err != nil {
		return nil, err
	}
	var out []Problem
	if len(b.events) > 0 {
		orphans, err := b.tx.OrphanEvents(ctx, b.marks.Event)
		if err != nil {
			return nil, err
		}
		for _, o := range orphans {
			if src, ok := b.events[o.Seq]; ok {
				out = append(out, orphanProblem(b.st.Path, src.c.Line, src.c.LineEnd, src.field, o.DecisionID))
			}
		}
	}
	if len(b.voids) > 0 {
		orphans, err := b.tx.OrphanVoids(ctx, b.marks.Void)
		if err != nil {
			return nil, err
		}
		for _, o := range orphans {
			if c, ok := b.voids[o.Seq]; ok {
				out = append(out, orphanProblem(b.st.Path, c.Line, c.LineEnd, "decision_id", o.DecisionID))
			}
		}
	}
	return out, nil
}

func orphanProblem(file string, line, end int, field, id string) Problem {
	return Problem{File: file, Line: line, LineEnd: end, Severity: SevWarning, Code: CodeUnknownID, RecordID: id,
		Message: fmt.Sprintf("%s %q names no decision in the journal (yet); the outcome is kept", field, id)}
}

func decisionRow(p Parsed, c Chunk, fileID int64) db.DecisionRow {
	d := p.Decision
	row := db.DecisionRow{
		ID: d.ID, FileID: fileID, Line: int64(c.Line), LineEnd: int64(c.LineEnd), ByteOffset: c.Offset,
		Iteration: d.Iteration, TS: d.TS, Tier: d.Tier, Depth: d.Depth, Category: d.Category, Input: d.Input,
		Decision: d.Decision, Reason: d.Reason, NextAction: d.NextAction, Verification: d.Verification,
		RetroOutcome: d.Retrograde.Outcome, Requestor: d.Requestor, Context: d.Context, RequestID: d.RequestID, Raw: string(c.Text),
	}
	if !p.TSTime.IsZero() {
		row.TSNS = sql.NullInt64{Int64: p.TSTime.UnixNano(), Valid: true}
	}
	if d.Retrograde.PreviousID != nil {
		row.RetroPrevID = sql.NullString{String: *d.Retrograde.PreviousID, Valid: true}
	}
	if d.Confidence != nil {
		row.Confidence = sql.NullFloat64{Float64: *d.Confidence, Valid: true}
	}
	return row
}
