package hub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/knowledge"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/precedent"
	"github.com/orbit-loop/orbit/project"
)

// Journal is one append-only file a project pushes, named by its kind in
// the journal's follower (journal.Followed): the hub reads it as sync does.
type Journal struct {
	Kind string
	Path string // relative to the project root
	spec journal.FileSpec
}

// Journals are the files `orbit push` ships: every append-only journal the
// follower reads (the decision, retrograde, loop event and knowledge
// journals). The other files of a project (the state file, the pending
// queue, the progress file, the index) stay on its machine.
var Journals = followedJournals()

func followedJournals() []Journal {
	var out []Journal
	for _, f := range journal.Followed() {
		out = append(out, Journal{Kind: f.Kind.Name(), Path: f.Path, spec: f})
	}
	return out
}

// legacyKinds are kind names older clients push under (before every kind
// was the follower's): the hub takes their batches as the kind's.
var legacyKinds = map[string]string{"loops": loop.KindEvents}

// JournalOf returns the journal of a kind.
func JournalOf(kind string) (Journal, bool) {
	if k, ok := legacyKinds[kind]; ok {
		kind = k
	}
	for _, j := range Journals {
		if j.Kind == kind {
			return j, true
		}
	}
	return Journal{}, false
}

func kindNames() string {
	names := make([]string, len(Journals))
	for i, j := range Journals {
		names[i] = j.Kind
	}
	return strings.Join(names, ", ")
}

// TailWindow is how many bytes before an acknowledged offset the tail hash
// covers (as the local index checks a grown file).
const TailWindow = 4096

// TailHash is the hash a push and the hub compare to agree that a journal's
// past is the one the hub holds: sha256 of the last TailWindow bytes (or
// fewer) before the offset, given those bytes.
func TailHash(tail []byte) string {
	sum := sha256.Sum256(tail[max(0, len(tail)-TailWindow):])
	return hex.EncodeToString(sum[:])
}

// FileState is what the hub has acknowledged of one journal of a project:
// every chunk before Offset (Lines lines) is stored.
type FileState struct {
	Kind     string `json:"kind"`
	Path     string `json:"path"`
	Offset   int64  `json:"offset"`
	Lines    int64  `json:"lines"`
	TailHash string `json:"tail_hash"`
}

// Batch is one push: whole chunks of one journal, the bytes from Offset
// (line Lines+1) on, sent by a client that found the hub's tail hash at
// Offset equal to its own file's.
type Batch struct {
	Project  string
	Name     string // the project's name, for people
	Kind     string
	Offset   int64
	Lines    int64
	TailHash string
	Data     []byte
}

// PushResult is what a batch added.
type PushResult struct {
	State     FileState `json:"state"`
	Chunks    int       `json:"chunks"`
	Decisions int       `json:"decisions"`
	Events    int       `json:"events"`
	Rejected  int       `json:"rejected"`
}

// ConflictError is a batch that does not start where the hub's copy of the
// journal ends, or whose past differs from it: nothing was stored, and
// State says where the hub stands.
type ConflictError struct {
	State  FileState
	Reason string
}

func (e *ConflictError) Error() string { return e.Reason }

// BadBatchError is a batch the hub cannot take as sent.
type BadBatchError struct{ Msg string }

func (e *BadBatchError) Error() string { return e.Msg }

// ErrForbidden is a token that may not do what was asked.
var ErrForbidden = errors.New("this token may not do that")

// fileRow is a journal's acknowledged state as the hub keeps it.
type fileRow struct {
	Offset   int64  `db:"acked_offset"`
	Lines    int64  `db:"acked_lines"`
	Tail     []byte `db:"tail"`
	LastTSNS int64  `db:"last_ts_ns"`
}

// State returns what the hub acknowledged of each journal of a project
// (offset 0 for those it has none of).
func (s *Store) State(ctx context.Context, acc Access, projectID string) ([]FileState, error) {
	if err := project.CheckID(projectID); err != nil {
		return nil, &BadBatchError{err.Error()}
	}
	if !acc.CanPush(projectID) && !acc.CanRead(projectID) {
		return nil, ErrForbidden
	}
	var rows []struct {
		Kind string `db:"kind"`
		fileRow
	}
	err := s.DB.SelectContext(ctx, &rows, s.q(`SELECT kind, acked_offset, acked_lines, tail, last_ts_ns FROM hub_files WHERE project_id = ?`), projectID)
	if err != nil {
		return nil, fmt.Errorf("read push state of %s: %w", projectID, err)
	}
	out := make([]FileState, 0, len(Journals))
	for _, j := range Journals {
		st := FileState{Kind: j.Kind, Path: j.Path, TailHash: TailHash(nil)}
		for _, r := range rows {
			if r.Kind == j.Kind {
				st.Offset, st.Lines, st.TailHash = r.Offset, r.Lines, TailHash(r.Tail)
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// MaxBatch bounds the bytes of one batch.
const MaxBatch = 8 << 20

// Push stores a batch in one transaction: every chunk, keyed by (project,
// kind, byte offset), and the records derived from them, then moves the
// acknowledged offset past them. A batch that does not start at the
// acknowledged offset, or whose tail hash differs, is a ConflictError and
// changes nothing, so a repeated or interrupted push never stores a chunk
// twice nor skips one.
func (s *Store) Push(ctx context.Context, acc Access, b Batch, now time.Time) (PushResult, error) {
	var res PushResult
	j, ok := JournalOf(b.Kind)
	switch {
	case project.CheckID(b.Project) != nil:
		return res, &BadBatchError{project.CheckID(b.Project).Error()}
	case !ok:
		return res, &BadBatchError{fmt.Sprintf("kind %q: want one of %s", b.Kind, kindNames())}
	case !acc.CanPush(b.Project):
		return res, ErrForbidden
	case b.Offset < 0 || b.Lines < 0:
		return res, &BadBatchError{"offset and lines must not be negative"}
	case len(b.Data) == 0:
		return res, &BadBatchError{"the batch is empty"}
	case len(b.Data) > MaxBatch:
		return res, &BadBatchError{fmt.Sprintf("the batch is %d bytes; at most %d", len(b.Data), MaxBatch)}
	}
	chunks, err := readChunks(j, b)
	if err != nil {
		return res, err
	}
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		res = PushResult{}
		st, err := s.lockFile(ctx, tx, b, j, now)
		if err != nil {
			return err
		}
		state := FileState{Kind: j.Kind, Path: j.Path, Offset: st.Offset, Lines: st.Lines, TailHash: TailHash(st.Tail)}
		switch {
		case b.Offset != st.Offset || b.Lines != st.Lines:
			return &ConflictError{State: state, Reason: fmt.Sprintf("%s: the batch starts at byte %d (line %d) but the hub holds up to byte %d (line %d)",
				j.Path, b.Offset, b.Lines+1, st.Offset, st.Lines+1)}
		case b.TailHash != state.TailHash:
			return &ConflictError{State: state, Reason: fmt.Sprintf("%s: the bytes before byte %d differ from those the hub holds: the file's past was rewritten since it was pushed", j.Path, b.Offset)}
		}
		in := ingest{s: s, tx: tx, project: b.Project, journal: j, lastTS: st.LastTSNS, base: b.Offset, data: b.Data}
		if err := in.run(ctx, chunks); err != nil {
			return err
		}
		tail := append(slices.Clone(st.Tail), b.Data[max(0, len(b.Data)-TailWindow):]...)
		tail = tail[max(0, len(tail)-TailWindow):]
		last := chunks[len(chunks)-1]
		newOff, newLines := last.End(), int64(last.LineEnd)
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE hub_files SET acked_offset = ?, acked_lines = ?, tail = ?, last_ts_ns = ?, acked_at_ns = ?
			WHERE project_id = ? AND kind = ?`), newOff, newLines, tail, in.lastTS, now.UnixNano(), b.Project, j.Kind); err != nil {
			return fmt.Errorf("push %s %s: %w", b.Project, j.Kind, err)
		}
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE hub_projects SET last_push_ns = ?, chunks = chunks + ?, bytes = bytes + ?,
			decisions = decisions + ?, events = events + ?, rejected = rejected + ?, loop_events = loop_events + ?,
			knowledge_hits = knowledge_hits + ?, max_iteration = `+s.greatest("max_iteration", "?")+`, tokens = tokens + ?, tokened = tokened + ? WHERE id = ?`),
			now.UnixNano(), len(chunks), len(b.Data), in.decisions, in.events, in.rejected, in.loopEvents, in.hits, in.maxIteration,
			in.tokens, in.decisions, b.Project); err != nil {
			return fmt.Errorf("push %s %s: %w", b.Project, j.Kind, err)
		}
		res = PushResult{State: FileState{Kind: j.Kind, Path: j.Path, Offset: newOff, Lines: newLines, TailHash: TailHash(tail)},
			Chunks: len(chunks), Decisions: in.decisions, Events: in.events, Rejected: in.rejected}
		return nil
	})
	return res, err
}

// greatest is the larger of two SQL values.
func (s *Store) greatest(a, b string) string {
	if s.Dialect == Postgres {
		return "GREATEST(" + a + ", " + b + ")"
	}
	return "max(" + a + ", " + b + ")"
}

// lockFile makes sure the project and its journal have rows, updates the
// project's name, and returns the journal's state, locked until the
// transaction ends: pushes of one journal queue, other journals and
// projects go on in parallel.
func (s *Store) lockFile(ctx context.Context, tx *sqlx.Tx, b Batch, j Journal, now time.Time) (fileRow, error) {
	var st fileRow
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO hub_projects (id, name, first_push_ns) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`),
		b.Project, clean(b.Name), now.UnixNano()); err != nil {
		return st, fmt.Errorf("push %s: %w", b.Project, err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO hub_files (project_id, kind, path) VALUES (?, ?, ?) ON CONFLICT (project_id, kind) DO NOTHING`),
		b.Project, j.Kind, j.Path); err != nil {
		return st, fmt.Errorf("push %s: %w", b.Project, err)
	}
	err := tx.GetContext(ctx, &st, s.q(`SELECT acked_offset, acked_lines, tail, last_ts_ns FROM hub_files WHERE project_id = ? AND kind = ?`+s.forUpdate()),
		b.Project, j.Kind)
	if err != nil {
		return st, fmt.Errorf("push %s: %w", b.Project, err)
	}
	if b.Name != "" {
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE hub_projects SET name = ? WHERE id = ? AND name <> ?`), clean(b.Name), b.Project, clean(b.Name)); err != nil {
			return st, fmt.Errorf("push %s: %w", b.Project, err)
		}
	}
	return st, nil
}

// readChunks splits a batch into the chunks sync would read, and checks
// that it holds whole chunks only.
func readChunks(j Journal, b Batch) ([]journal.Chunk, error) {
	r := journal.NewReader(bytes.NewReader(b.Data), j.Path, b.Offset, int(b.Lines))
	var out []journal.Chunk
	for {
		c, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &BadBatchError{err.Error()}
		}
		if c.Kind == journal.Pending {
			return nil, &BadBatchError{fmt.Sprintf("%s:%d: the batch ends inside a line (a client pushes whole lines only)", j.Path, c.Line)}
		}
		out = append(out, c)
	}
	if len(out) == 0 || out[len(out)-1].End() != b.Offset+int64(len(b.Data)) {
		return nil, &BadBatchError{"the batch does not end at a line end"}
	}
	return out, nil
}

// clean makes text storable in any store: valid UTF-8 without NUL (which
// PostgreSQL's text refuses). The chunk's own bytes are kept as they are.
func clean(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// ingest derives a batch's records, as the local sync derives them from the
// same lines.
type ingest struct {
	s       *Store
	tx      *sqlx.Tx
	project string
	journal Journal
	// lastTS is the file's event time: the last valid ts read in it.
	lastTS int64
	base   int64
	data   []byte

	decisions, events, rejected, loopEvents, hits int
	maxIteration                                  int64
	// tokens is the length in tokens of the decisions indexed (precedent's
	// bm25 average).
	tokens int64
}

type chunkRow struct {
	offset, length, line, lineEnd int64
	state, message                string
	text                          []byte
}

type newDecision struct {
	chunk int // index in the batch's chunks
	p     *journal.Parsed
}

type eventRow struct {
	chunk      int
	kind       string
	offset     int64
	decisionID string
	outcome    string
	atNS       int64
	srcRank    int
	line       int64
	ts         string
	evidence   string
}

func (in *ingest) run(ctx context.Context, chunks []journal.Chunk) error {
	rows := make([]chunkRow, len(chunks))
	var decs []newDecision
	var evs []eventRow
	var voids []eventRow
	// events of decision lines wait on their decision being new.
	decEvent := map[int]eventRow{}
	loops := map[string]*loopRow{}
	var loopOrder []string
	// torn marks the fragments a write cut short: not records, but a
	// warning, not a rejected line (as the local index counts them).
	torn := map[int]bool{}
	for i, c := range chunks {
		raw := in.data[c.Offset-in.base : c.End()-in.base]
		rows[i] = chunkRow{offset: c.Offset, length: c.Length, line: int64(c.Line), lineEnd: int64(c.LineEnd), state: "record", text: raw}
		reject := func(msg string) {
			rows[i].state, rows[i].message = "rejected", clean(msg)
		}
		if c.Kind == journal.Blank {
			rows[i].state = "blank"
			continue
		}
		c, d := journal.DecodeChunk(c, in.journal.spec)
		switch {
		case c.Kind == journal.Bad:
			reject(c.Err.Message)
			torn[i] = c.Err.Severity != journal.SevError
			continue
		case d.Reject != nil:
			reject(d.Reject.Message)
			continue
		}
		switch r := d.Record.(type) {
		case journal.Parsed:
			p := &r
			if !p.TSTime.IsZero() {
				in.lastTS = p.TSTime.UnixNano()
			}
			decs = append(decs, newDecision{chunk: i, p: p})
			if p.Event {
				decEvent[i] = eventRow{chunk: i, kind: in.journal.Kind, offset: c.Offset, decisionID: *p.Retrograde.PreviousID,
					outcome: p.Retrograde.Outcome, atNS: in.lastTS, srcRank: 0, line: int64(c.Line), ts: p.TS}
			}
		case journal.ParsedVoid:
			if !r.TSTime.IsZero() {
				in.lastTS = r.TSTime.UnixNano()
			}
			v := eventRow{chunk: i, kind: in.journal.Kind, offset: c.Offset, decisionID: r.DecisionID, atNS: in.lastTS, line: int64(c.Line), ts: r.TS, evidence: r.Evidence}
			if r.Void {
				v.outcome = "void"
			}
			voids = append(voids, v)
		case journal.ParsedOutcome:
			if !r.TSTime.IsZero() {
				in.lastTS = r.TSTime.UnixNano()
			}
			evs = append(evs, eventRow{chunk: i, kind: in.journal.Kind, offset: c.Offset, decisionID: r.DecisionID, outcome: r.Outcome,
				atNS: in.lastTS, srcRank: 1, line: int64(c.Line), ts: r.TS, evidence: r.Evidence})
		default:
			if l, e, ok := loop.DecodedEvent(d); ok {
				key := l.Framework + "\x00" + l.LoopID
				lr, seen := loops[key]
				if !seen {
					lr = &loopRow{framework: l.Framework, loopID: l.LoopID}
					loops[key] = lr
					loopOrder = append(loopOrder, key)
				}
				lr.apply(l, e, c.Offset)
				in.loopEvents++
			} else if knowledge.IsHit(d) {
				in.hits++
			}
		}
	}
	// Decisions: the first line with an id wins, in the batch and against
	// what the hub holds; a later one is rejected as a duplicate, as the
	// local index rejects it.
	first := map[string]int{}
	var fresh []newDecision
	for _, d := range decs {
		if at, dup := first[d.p.ID]; dup {
			rows[d.chunk].state = "rejected"
			rows[d.chunk].message = clean(fmt.Sprintf("duplicate id %q (first at %s:%d); not indexed", d.p.ID, in.journal.Path, rows[at].line))
			continue
		}
		first[d.p.ID] = d.chunk
		fresh = append(fresh, d)
	}
	inserted, err := in.insertDecisions(ctx, rows, fresh)
	if err != nil {
		return err
	}
	for _, d := range fresh {
		if !inserted[d.p.ID] {
			rows[d.chunk].state = "rejected"
			rows[d.chunk].message = clean(fmt.Sprintf("duplicate id %q (already in the journal); not indexed", d.p.ID))
			continue
		}
		in.decisions++
		// bm25's document length, as the index counts it.
		in.tokens += int64(precedent.Length(clean(d.p.Input)) + precedent.Length(clean(d.p.Reason)) +
			precedent.Length(clean(d.p.NextAction)) + precedent.Length(clean(d.p.Context)))
		in.maxIteration = max(in.maxIteration, d.p.Iteration)
		if e, ok := decEvent[d.chunk]; ok {
			evs = append(evs, e)
		}
	}
	for i, r := range rows {
		if r.state == "rejected" && !torn[i] {
			in.rejected++
		}
	}
	if err := in.insertChunks(ctx, rows); err != nil {
		return err
	}
	if err := in.insertEvents(ctx, evs); err != nil {
		return err
	}
	voided, err := in.insertVoids(ctx, voids)
	if err != nil {
		return err
	}
	if in.decisions > 0 || in.events > 0 || voided > 0 {
		if err := in.attachOutcomes(ctx); err != nil {
			return err
		}
	}
	return in.upsertLoops(ctx, loops, loopOrder)
}

// batchRows bounds the rows of one INSERT (PostgreSQL takes at most 65,535
// parameters in a statement).
const batchRows = 1000

// insertMany runs head + VALUES (...), (...) + tail over rows, batchRows at
// a time, calling fn with each statement's result rows when tail returns
// some.
func (in *ingest) insertMany(ctx context.Context, head, tail string, rows [][]any, scan func(*sqlx.Rows) error) error {
	for start := 0; start < len(rows); start += batchRows {
		part := rows[start:min(start+batchRows, len(rows))]
		var q strings.Builder
		q.WriteString(head)
		q.WriteString(" VALUES ")
		args := make([]any, 0, len(part)*len(part[0]))
		for i, r := range part {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteByte('(')
			q.WriteString(strings.TrimSuffix(strings.Repeat("?,", len(r)), ","))
			q.WriteByte(')')
			args = append(args, r...)
		}
		q.WriteString(" ")
		q.WriteString(tail)
		if scan == nil {
			if _, err := in.tx.ExecContext(ctx, in.s.q(q.String()), args...); err != nil {
				return err
			}
			continue
		}
		rs, err := in.tx.QueryxContext(ctx, in.s.q(q.String()), args...)
		if err != nil {
			return err
		}
		for rs.Next() {
			if err := scan(rs); err != nil {
				rs.Close()
				return err
			}
		}
		if err := rs.Close(); err != nil {
			return err
		}
		if err := rs.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (in *ingest) insertChunks(ctx context.Context, rows []chunkRow) error {
	vals := make([][]any, len(rows))
	for i, r := range rows {
		vals[i] = []any{in.project, in.journal.Kind, r.offset, r.length, r.line, r.lineEnd, r.state, r.message, r.text}
	}
	err := in.insertMany(ctx, `INSERT INTO hub_chunks (project_id, kind, byte_offset, length, line, line_end, state, message, text)`,
		`ON CONFLICT (project_id, kind, byte_offset) DO NOTHING`, vals, nil)
	if err != nil {
		return fmt.Errorf("push %s %s: store lines: %w", in.project, in.journal.Kind, err)
	}
	return nil
}

// insertDecisions adds the decisions whose id is new to the project and
// returns those ids.
func (in *ingest) insertDecisions(ctx context.Context, rows []chunkRow, decs []newDecision) (map[string]bool, error) {
	inserted := map[string]bool{}
	if len(decs) == 0 {
		return inserted, nil
	}
	vals := make([][]any, len(decs))
	for i, dr := range decs {
		d := dr.p
		var tsNS, prev, conf, bucket, confU any
		if !d.TSTime.IsZero() {
			tsNS = d.TSTime.UnixNano()
		}
		if d.Retrograde.PreviousID != nil {
			prev = clean(*d.Retrograde.PreviousID)
		}
		if c := d.Confidence; c != nil {
			// The same rounding as the local index's totals (trust.Aggregate).
			conf, bucket, confU = *c, int64(math.Round(*c*100)), int64(math.Round(*c*1e6))
		}
		vals[i] = []any{in.project, clean(d.ID), rows[dr.chunk].offset, rows[dr.chunk].line, d.Iteration, clean(d.TS), tsNS,
			clean(d.Tier), clean(d.Depth), clean(d.Category), clean(d.Input), clean(d.Decision.Decision), clean(d.Reason), clean(d.NextAction),
			clean(d.Verification), prev, clean(d.Retrograde.Outcome), conf, bucket, confU, clean(d.Requestor), clean(d.Context), clean(d.RequestID)}
	}
	err := in.insertMany(ctx, `INSERT INTO hub_decisions (project_id, id, byte_offset, line, iteration, ts, ts_ns, tier, depth, category, input,
		decision, reason, next_action, verification, retro_prev_id, retro_outcome, confidence, conf_bucket, conf_u, requestor, context, request_id)`,
		`ON CONFLICT (project_id, id) DO NOTHING RETURNING id`, vals, func(rs *sqlx.Rows) error {
			var id string
			if err := rs.Scan(&id); err != nil {
				return err
			}
			inserted[id] = true
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("push %s: index decisions: %w", in.project, err)
	}
	return inserted, nil
}

// insertEvents adds outcome events and folds them into the current
// outcomes: a decision's is its latest event in (at_ns, src_rank, line)
// order, whichever push brought it.
func (in *ingest) insertEvents(ctx context.Context, evs []eventRow) error {
	if len(evs) == 0 {
		return nil
	}
	vals := make([][]any, len(evs))
	for i, e := range evs {
		vals[i] = []any{in.project, e.kind, e.offset, clean(e.decisionID), e.outcome, e.atNS, e.srcRank, e.line, clean(e.ts), clean(e.evidence)}
	}
	type key struct {
		kind   string
		offset int64
	}
	added := map[key]bool{}
	err := in.insertMany(ctx, `INSERT INTO hub_events (project_id, kind, byte_offset, decision_id, outcome, at_ns, src_rank, line, ts, evidence)`,
		`ON CONFLICT (project_id, kind, byte_offset) DO NOTHING RETURNING kind, byte_offset`, vals, func(rs *sqlx.Rows) error {
			var k key
			if err := rs.Scan(&k.kind, &k.offset); err != nil {
				return err
			}
			added[k] = true
			return nil
		})
	if err != nil {
		return fmt.Errorf("push %s: index outcomes: %w", in.project, err)
	}
	// One row per decision in the upsert: PostgreSQL refuses to update a
	// row twice in one statement.
	latest := map[string]eventRow{}
	var order []string
	for _, e := range evs {
		if !added[key{e.kind, e.offset}] {
			continue
		}
		in.events++
		id := clean(e.decisionID)
		cur, ok := latest[id]
		if !ok {
			order = append(order, id)
		}
		if !ok || later(e, cur) {
			latest[id] = e
		}
	}
	outs := make([][]any, 0, len(order))
	for _, id := range order {
		e := latest[id]
		outs = append(outs, []any{in.project, id, e.outcome, e.atNS, e.srcRank, e.line, clean(e.ts), clean(e.evidence)})
	}
	if len(outs) == 0 {
		return nil
	}
	err = in.insertMany(ctx, `INSERT INTO hub_outcomes (project_id, decision_id, outcome, at_ns, src_rank, line, ts, evidence)`,
		`ON CONFLICT (project_id, decision_id) DO UPDATE SET outcome = excluded.outcome, at_ns = excluded.at_ns,
			src_rank = excluded.src_rank, line = excluded.line, ts = excluded.ts, evidence = excluded.evidence
		WHERE (excluded.at_ns, excluded.src_rank, excluded.line) > (hub_outcomes.at_ns, hub_outcomes.src_rank, hub_outcomes.line)`, outs, nil)
	if err != nil {
		return fmt.Errorf("push %s: current outcomes: %w", in.project, err)
	}
	return nil
}

// notVoided is the SQL condition that the decision alias.col names is not
// voided (its latest void event does not void it).
func notVoided(project, id string) string {
	return ` NOT EXISTS (SELECT 1 FROM hub_decision_voids v WHERE v.project_id = ` + project + ` AND v.decision_id = ` + id + ` AND v.void = 1)`
}

// attachOutcomes completes the outcomes whose decision is now known, and
// not voided, with the decision's place and the fields trust breaks down
// by: from then on they count. The outcome of a voided decision loses its
// place, as the local index's loses its decision_seq: it stops counting
// until the void is taken back.
func (in *ingest) attachOutcomes(ctx context.Context) error {
	_, err := in.tx.ExecContext(ctx, in.s.q(`UPDATE hub_outcomes SET decision_offset = NULL
		WHERE project_id = ? AND decision_offset IS NOT NULL AND NOT`+notVoided("hub_outcomes.project_id", "hub_outcomes.decision_id")), in.project)
	if err != nil {
		return fmt.Errorf("push %s: current outcomes: %w", in.project, err)
	}
	_, err = in.tx.ExecContext(ctx, in.s.q(`UPDATE hub_outcomes SET decision_offset = d.byte_offset, iteration = d.iteration,
			category = d.category, tier = d.tier, depth = d.depth, requestor = d.requestor, conf_bucket = d.conf_bucket, conf_u = d.conf_u
		FROM hub_decisions d
		WHERE hub_outcomes.project_id = ? AND hub_outcomes.decision_offset IS NULL
			AND d.project_id = hub_outcomes.project_id AND d.id = hub_outcomes.decision_id AND`+notVoided("d.project_id", "d.id")), in.project)
	if err != nil {
		return fmt.Errorf("push %s: current outcomes: %w", in.project, err)
	}
	return nil
}

// insertVoids adds void events (outcome "void" voids, "" takes a void
// back) and folds them into each decision's current void, its latest in
// (at_ns, line) order; it returns how many were new.
func (in *ingest) insertVoids(ctx context.Context, vs []eventRow) (int, error) {
	if len(vs) == 0 {
		return 0, nil
	}
	flag := func(e eventRow) int {
		if e.outcome == "void" {
			return 1
		}
		return 0
	}
	vals := make([][]any, len(vs))
	for i, e := range vs {
		vals[i] = []any{in.project, e.kind, e.offset, clean(e.decisionID), flag(e), e.atNS, e.line, clean(e.ts), clean(e.evidence)}
	}
	added := map[int64]bool{}
	err := in.insertMany(ctx, `INSERT INTO hub_voids (project_id, kind, byte_offset, decision_id, void, at_ns, line, ts, evidence)`,
		`ON CONFLICT (project_id, kind, byte_offset) DO NOTHING RETURNING byte_offset`, vals, func(rs *sqlx.Rows) error {
			var off int64
			if err := rs.Scan(&off); err != nil {
				return err
			}
			added[off] = true
			return nil
		})
	if err != nil {
		return 0, fmt.Errorf("push %s: index voids: %w", in.project, err)
	}
	latest := map[string]eventRow{}
	var order []string
	for _, e := range vs {
		if !added[e.offset] {
			continue
		}
		id := clean(e.decisionID)
		cur, ok := latest[id]
		if !ok {
			order = append(order, id)
		}
		if !ok || e.atNS > cur.atNS || (e.atNS == cur.atNS && e.line > cur.line) {
			latest[id] = e
		}
	}
	cur := make([][]any, 0, len(order))
	for _, id := range order {
		e := latest[id]
		cur = append(cur, []any{in.project, id, flag(e), e.atNS, e.line, clean(e.ts), clean(e.evidence)})
	}
	if len(cur) == 0 {
		return 0, nil
	}
	err = in.insertMany(ctx, `INSERT INTO hub_decision_voids (project_id, decision_id, void, at_ns, line, ts, evidence)`,
		`ON CONFLICT (project_id, decision_id) DO UPDATE SET void = excluded.void, at_ns = excluded.at_ns, line = excluded.line,
			ts = excluded.ts, evidence = excluded.evidence
		WHERE (excluded.at_ns, excluded.line) > (hub_decision_voids.at_ns, hub_decision_voids.line)`, cur, nil)
	if err != nil {
		return 0, fmt.Errorf("push %s: current voids: %w", in.project, err)
	}
	return len(added), nil
}

// later reports whether a comes after b in event order.
func later(a, b eventRow) bool {
	if a.atNS != b.atNS {
		return a.atNS > b.atNS
	}
	if a.srcRank != b.srcRank {
		return a.srcRank > b.srcRank
	}
	return a.line > b.line
}

// loopRow is what a batch's events say of one loop: each field as the
// latest event that gives it (an event leaves the others as they were).
type loopRow struct {
	framework, loopID                      string
	title, status, nativeStatus, updatedAt string
	iteration, maxIterations               sql.NullInt64
	budgetUsed, budgetLimit                sql.NullFloat64
	lastEvent, lastTS                      string
	lastOffset                             int64
	events                                 int64
}

func (l *loopRow) apply(r db.LoopRow, e db.LoopEventRow, offset int64) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&l.title, r.Title)
	set(&l.status, r.Status)
	set(&l.nativeStatus, r.NativeStatus)
	set(&l.updatedAt, r.UpdatedAt)
	if r.Iteration.Valid {
		l.iteration = r.Iteration
	}
	if r.MaxIterations.Valid {
		l.maxIterations = r.MaxIterations
	}
	if r.BudgetUsed.Valid {
		l.budgetUsed = r.BudgetUsed
	}
	if r.BudgetLimit.Valid {
		l.budgetLimit = r.BudgetLimit
	}
	l.lastEvent, l.lastTS, l.lastOffset = e.Kind, e.At, offset
	l.events++
}

func (in *ingest) upsertLoops(ctx context.Context, loops map[string]*loopRow, order []string) error {
	if len(order) == 0 {
		return nil
	}
	vals := make([][]any, len(order))
	for i, k := range order {
		l := loops[k]
		vals[i] = []any{in.project, clean(l.framework), clean(l.loopID), clean(l.title), clean(l.status), clean(l.nativeStatus), l.iteration, l.maxIterations,
			clean(l.updatedAt), l.budgetUsed, l.budgetLimit, clean(l.lastEvent), clean(l.lastTS), l.lastOffset, l.events}
	}
	keep := func(col string) string {
		return col + ` = CASE WHEN excluded.` + col + ` <> '' THEN excluded.` + col + ` ELSE hub_loops.` + col + ` END`
	}
	err := in.insertMany(ctx, `INSERT INTO hub_loops (project_id, framework, loop_id, title, status, native_status, iteration, max_iterations,
		updated_at, budget_used, budget_limit, last_event, last_ts, last_offset, events)`,
		`ON CONFLICT (project_id, framework, loop_id) DO UPDATE SET `+keep("title")+`, `+keep("status")+`, `+keep("native_status")+`, `+keep("updated_at")+`,
			iteration = coalesce(excluded.iteration, hub_loops.iteration), max_iterations = coalesce(excluded.max_iterations, hub_loops.max_iterations),
			budget_used = coalesce(excluded.budget_used, hub_loops.budget_used), budget_limit = coalesce(excluded.budget_limit, hub_loops.budget_limit),
			last_event = excluded.last_event, last_ts = excluded.last_ts, last_offset = excluded.last_offset, events = hub_loops.events + excluded.events`,
		vals, nil)
	if err != nil {
		return fmt.Errorf("push %s: index loops: %w", in.project, err)
	}
	return nil
}
