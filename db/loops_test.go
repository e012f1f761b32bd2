package db_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/orbit-loop/orbit/db"
)

// TestLoopEvents: an event updates its loop's row with what it says (fields
// it leaves empty keep their value), and a reset forgets the events of the
// file and the loops they described.
func TestLoopEvents(t *testing.T) {
	store := newStore(t)
	ctx := context.Background()
	st := db.FileState{Path: ".claude/orbit-loop-events.jsonl", Kind: "loop-events"}
	if err := store.InTx(ctx, func(tx *db.Tx) error { return tx.SaveFileState(ctx, &st) }); err != nil {
		t.Fatal(err)
	}
	insert := func(l db.LoopRow, e db.LoopEventRow) {
		t.Helper()
		e.FileID = st.ID
		if err := store.InTx(ctx, func(tx *db.Tx) error { return tx.InsertLoopEvent(ctx, &l, &e) }); err != nil {
			t.Fatal(err)
		}
	}
	insert(db.LoopRow{Framework: "ccw", LoopID: "a", Path: "p.json", Title: "A", Status: "running", NativeStatus: "running",
		Iteration: sql.NullInt64{Int64: 1, Valid: true}, MaxIterations: sql.NullInt64{Int64: 10, Valid: true}},
		db.LoopEventRow{Line: 1, At: "t1", Kind: "seen", Status: "running"})
	insert(db.LoopRow{Framework: "ccw", LoopID: "a", Status: "stopped", NativeStatus: "failed"},
		db.LoopEventRow{Line: 2, At: "t2", Kind: "stop", Status: "stopped", Detail: "enough", Raw: `{"event":"stop","detail":"enough"}`})
	rows, err := store.Loops(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d loops; want 1", len(rows))
	}
	r := rows[0]
	if r.Title != "A" || r.Path != "p.json" || r.Status != "stopped" || r.NativeStatus != "failed" || r.MaxIterations.Int64 != 10 || r.Events != 2 || r.LastKind != "stop" {
		t.Errorf("loop row %+v", r)
	}
	evs, err := store.LoopEvents(ctx, "ccw", "a")
	if err != nil || len(evs) != 2 || evs[1].Detail != "enough" {
		t.Errorf("events %+v %v", evs, err)
	}
	if err := store.InTx(ctx, func(tx *db.Tx) error { return tx.ResetLoopEvents(ctx, st.ID) }); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, store, `SELECT count(*) FROM loop_events`) + queryInt(t, store, `SELECT count(*) FROM loops`); n != 0 {
		t.Errorf("%d rows after reset", n)
	}
}
