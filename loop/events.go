package loop

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// EventsFile is orbit's loop event journal, relative to the project root:
// append-only, one JSON event a line. It is the authoritative history of
// every loop orbit has seen or touched; the index's loops and loop_events
// tables are derived from it.
const EventsFile = ".claude/orbit-loop-events.jsonl"

// Event kinds.
const (
	EventSeen    = "seen"    // orbit read the loop for the first time
	EventStatus  = "status"  // orbit read the loop in another status than last seen
	EventStart   = "start"   // orbit loop start (the ORBIT loop)
	EventPlan    = "plan"    // orbit loop plan --write
	EventRun     = "run"     // orbit loop run started
	EventAttempt = "attempt" // one action or verifier run of an attempt
	EventStop    = "stop"
	EventPause   = "pause"
	EventResume  = "resume"
	// EventAdopt records the counters a loop kept before orbit came,
	// adopted as a baseline (the ORBIT loop; recorded once).
	EventAdopt = db.AdoptEvent
)

// Event is one line of the loop event journal. The loop's fields (title,
// counters, budget) are a snapshot of what orbit saw when it recorded it.
type Event struct {
	TS            string          `json:"ts"`
	Framework     string          `json:"framework"`
	Loop          string          `json:"loop"`
	Kind          string          `json:"event"`
	Status        string          `json:"status,omitempty"`
	NativeStatus  string          `json:"native_status,omitempty"`
	From          string          `json:"from,omitempty"`
	Detail        string          `json:"detail,omitempty"`
	Path          string          `json:"path,omitempty"`
	Title         string          `json:"title,omitempty"`
	Iteration     *int64          `json:"iteration,omitempty"`
	MaxIterations *int64          `json:"max_iterations,omitempty"`
	UpdatedAt     string          `json:"updated_at,omitempty"`
	BudgetUsed    *float64        `json:"budget_used,omitempty"`
	BudgetLimit   *float64        `json:"budget_limit,omitempty"`
	Data          json.RawMessage `json:"data,omitempty"`
	// Wrote says what a control wrote in the framework's own files
	// ("PATH: field, field", "removed PATH").
	Wrote []string `json:"wrote,omitempty"`
	// Next says what continues the loop after a resume, when the
	// framework's runner exited on the pause (CCW's skill does).
	Next string `json:"next,omitempty"`
}

// EventFor is an event about the loop v, with v's snapshot.
func EventFor(v View, kind string, now time.Time) Event {
	return Event{TS: ISOTime(now), Framework: v.Framework, Loop: v.ID, Kind: kind,
		Status: v.Status, NativeStatus: v.NativeStatus, Path: v.Path, Title: v.Title,
		Iteration: v.Iteration, MaxIterations: v.MaxIterations, UpdatedAt: v.UpdatedAt,
		BudgetUsed: v.BudgetUsed, BudgetLimit: v.BudgetLimit}
}

// HistoryEvent is an indexed event, as `orbit loop show` lists it.
type HistoryEvent struct {
	Line   int64  `json:"line"`
	At     string `json:"at"`
	Kind   string `json:"event"`
	Status string `json:"status"`
	From   string `json:"from,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// History is the loop event journal of a project and its index.
type History struct {
	Root  string
	Store *db.Store
}

// Path is the journal's path.
func (h *History) Path() string { return filepath.Join(h.Root, EventsFile) }

// Append appends events to the journal (under its flock, in one write,
// fsynced) and indexes them.
func (h *History) Append(ctx context.Context, evs ...Event) error {
	if len(evs) == 0 {
		return nil
	}
	a, err := journal.OpenAppender(h.Root, EventsFile)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := h.append(a, evs); err != nil {
		return err
	}
	_, err = h.Sync(ctx)
	return err
}

func (h *History) append(a *journal.Appender, evs []Event) error {
	var buf bytes.Buffer
	for _, e := range evs {
		if e.TS == "" || e.Framework == "" || e.Loop == "" || e.Kind == "" {
			return fmt.Errorf("record loop event %+v: ts, framework, loop and event are required", e)
		}
		raw, err := Marshal(e)
		if err != nil {
			return fmt.Errorf("encode loop event: %w", err)
		}
		buf.Write(raw)
		buf.WriteByte('\n')
	}
	return a.Append(buf.Bytes())
}

// Sync indexes what was appended to the journal, through the journal's
// follower (only new bytes read; a changed past named by its first
// differing line, what the index held from there saved to a recovery file,
// and the journal indexed again from the start). A line that is not an
// event is reported (file:line) and left in the file.
func (h *History) Sync(ctx context.Context) ([]journal.Problem, error) {
	ix := &journal.Index{Store: h.Store, Project: project.Project{Root: h.Root}, Files: []journal.FileSpec{followed}, Now: time.Now}
	rep, err := ix.Sync(ctx, journal.SyncOptions{})
	return slices.Concat(rep.Rewritten, rep.Problems, rep.Torn), err
}

// followed is the loop events journal as the journal's follower reads it.
var followed = journal.FileSpec{Path: EventsFile, Kind: eventsKind{}}

func init() { journal.Register(followed) }

// KindEvents is the loop events journal's kind in the index.
const KindEvents = "loop-events"

// eventsKind reads the loop events journal into the loops and loop_events
// tables; the follower does the rest.
type eventsKind struct{}

func (eventsKind) Name() string { return KindEvents }

// indexedEvent is a decoded line: the loop's row as the event says it, and
// the event's.
type indexedEvent struct {
	loop  *db.LoopRow
	event *db.LoopEventRow
}

func (eventsKind) Decode(text []byte) journal.Decoded {
	l, e, err := parseEvent(text)
	if err != nil {
		return journal.Decoded{Reject: &journal.Problem{Severity: journal.SevError, Code: journal.CodeInvalid, Message: err.Error()}}
	}
	return journal.Decoded{Record: indexedEvent{l, e}, ID: l.Framework + ":" + l.LoopID}
}

func (eventsKind) Begin(_ context.Context, tx *db.Tx, st *db.FileState) (journal.Batch, error) {
	return &eventsBatch{tx: tx, fileID: st.ID}, nil
}

func (eventsKind) Reset(ctx context.Context, tx *db.Tx, fileID int64) error {
	return tx.ResetLoopEvents(ctx, fileID)
}

func (eventsKind) Records() string {
	return `SELECT e.line, e.raw AS text, l.framework || ':' || l.loop_id AS record_id
		FROM loop_events e JOIN loops l ON l.id = e.loop_ref WHERE e.file_id = ?1`
}

// eventsBatch indexes loop events within one transaction.
type eventsBatch struct {
	tx     *db.Tx
	fileID int64
}

func (b *eventsBatch) Apply(ctx context.Context, c journal.Chunk, d journal.Decoded) (*journal.Problem, error) {
	ev := d.Record.(indexedEvent)
	l, e := *ev.loop, *ev.event
	e.FileID, e.Line, e.Raw = b.fileID, int64(c.Line), string(c.Text)
	return nil, b.tx.InsertLoopEvent(ctx, &l, &e)
}

func (b *eventsBatch) Done(context.Context) ([]journal.Problem, error) { return nil, nil }

// DecodedEvent returns the loop's row and the event's of a line the
// follower decoded from the loop events journal (journal.DecodeChunk), for
// another reader of the same lines (the hub); false for any other record.
func DecodedEvent(d journal.Decoded) (db.LoopRow, db.LoopEventRow, bool) {
	ev, ok := d.Record.(indexedEvent)
	if !ok {
		return db.LoopRow{}, db.LoopEventRow{}, false
	}
	return *ev.loop, *ev.event, true
}

func parseEvent(raw []byte) (*db.LoopRow, *db.LoopEventRow, error) {
	var e Event
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, nil, fmt.Errorf("invalid loop event: %v", err)
	}
	switch {
	case e.Framework == "" || e.Loop == "" || e.Kind == "":
		return nil, nil, fmt.Errorf("invalid loop event: framework, loop and event are required")
	case e.TS == "":
		return nil, nil, fmt.Errorf("invalid loop event: ts is required")
	}
	l := &db.LoopRow{Framework: e.Framework, LoopID: e.Loop, Path: e.Path, Title: e.Title, Status: e.Status,
		NativeStatus: e.NativeStatus, UpdatedAt: e.UpdatedAt}
	if e.Iteration != nil {
		l.Iteration = sql.NullInt64{Int64: *e.Iteration, Valid: true}
	}
	if e.MaxIterations != nil {
		l.MaxIterations = sql.NullInt64{Int64: *e.MaxIterations, Valid: true}
	}
	if e.BudgetUsed != nil {
		l.BudgetUsed = sql.NullFloat64{Float64: *e.BudgetUsed, Valid: true}
	}
	if e.BudgetLimit != nil {
		l.BudgetLimit = sql.NullFloat64{Float64: *e.BudgetLimit, Valid: true}
	}
	return l, &db.LoopEventRow{At: e.TS, Kind: e.Kind, Status: e.Status, NativeStatus: e.NativeStatus, Detail: e.Detail}, nil
}

// Observe compares what the scan found with what the index last saw of
// each loop, and records, in one append, a seen event for each new loop
// and a status event for each loop whose status changed. A loop whose
// status is derived (a torn-down Cavekit loop) takes the status of a stop
// orbit recorded for it. Views are updated in place; the events recorded
// are returned. Journal problems are returned, not failed on.
func (h *History) Observe(ctx context.Context, views []View, now time.Time) ([]Event, []journal.Problem, error) {
	a, err := journal.OpenAppender(h.Root, EventsFile)
	if err != nil {
		return nil, nil, err
	}
	defer a.Close()
	probs, err := h.Sync(ctx)
	if err != nil {
		return nil, probs, err
	}
	rows, err := h.Store.LoopsSeen(ctx)
	if err != nil {
		return nil, probs, err
	}
	seen := make(map[string]db.LoopSeen, len(rows))
	for _, r := range rows {
		seen[r.Framework+":"+r.LoopID] = r
	}
	var evs []Event
	for i := range views {
		v := &views[i]
		r, ok := seen[v.Key()]
		if ok && v.Derived && r.LastKind == EventStop && IsStopped(r.Status) {
			v.Status = r.Status
		}
		switch {
		case !ok:
			e := EventFor(*v, EventSeen, now)
			e.Detail = "first seen: " + cmp.Or(v.NativeStatus, "no status")
			evs = append(evs, e)
		case r.Status != v.Status:
			e := EventFor(*v, EventStatus, now)
			e.From = r.Status
			e.Detail = fmt.Sprintf("%s -> %s (%s)", r.Status, v.Status, cmp.Or(v.NativeStatus, "no status"))
			evs = append(evs, e)
		}
	}
	if len(evs) == 0 {
		return nil, probs, nil
	}
	if err := h.append(a, evs); err != nil {
		return nil, probs, err
	}
	more, err := h.Sync(ctx)
	return evs, append(probs, more...), err
}

// Of returns the indexed history of one loop, oldest first.
func (h *History) Of(ctx context.Context, framework, id string) ([]HistoryEvent, error) {
	rows, err := h.Store.LoopEvents(ctx, framework, id)
	if err != nil {
		return nil, err
	}
	out := make([]HistoryEvent, 0, len(rows))
	for _, r := range rows {
		he := HistoryEvent{Line: r.Line, At: r.At, Kind: r.Kind, Status: r.Status, Detail: r.Detail}
		var e Event
		if json.Unmarshal([]byte(r.Raw), &e) == nil {
			he.From = e.From
		}
		out = append(out, he)
	}
	return out, nil
}
