package loop_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/internal/looptest"
	"github.com/orbit-loop/orbit/loop"
)

// TestObserve: the first look records each loop as seen; a look with
// nothing changed records nothing; a status changed behind orbit's back is
// recorded once, from and to.
func TestObserve(t *testing.T) {
	root := looptest.CopyTree(t, "project")
	h := looptest.OpenHistory(t, root)
	ctx := context.Background()
	look := func() []loop.Event {
		t.Helper()
		s := frameworks.ScanProject(root, looptest.Now)
		evs, probs, err := h.Observe(ctx, s.Loops, looptest.Now)
		if err != nil || len(probs) > 0 {
			t.Fatalf("Observe: %v %v", err, probs)
		}
		return evs
	}
	if evs := look(); len(evs) != 14 || evs[0].Kind != loop.EventSeen {
		t.Fatalf("first look: %d events; want 14 seen", len(evs))
	}
	if evs := look(); len(evs) != 0 {
		t.Fatalf("second look: %d events; want none", len(evs))
	}
	// CCW's dashboard completes a loop: orbit sees it next time.
	path := filepath.Join(root, ".workflow/.loop/loop-v2-20260123-def456.json")
	data, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(data), `"status": "paused"`, `"status": "completed"`, 1)), 0o644)
	evs := look()
	if len(evs) != 1 || evs[0].Kind != loop.EventStatus || evs[0].From != "paused" || evs[0].Status != "done" {
		t.Fatalf("after an outside change: %+v", evs)
	}
	if got := looptest.KindsOf(t, h, "ccw", "loop-v2-20260123-def456"); !slices.Equal(got, []string{"seen:paused", "status:done"}) {
		t.Errorf("history %q", got)
	}
	// The history survives the loop's file being rewritten or deleted.
	os.Remove(path)
	if got := looptest.KindsOf(t, h, "ccw", "loop-v2-20260123-def456"); len(got) != 2 {
		t.Errorf("history after the file is gone: %q", got)
	}
}

// TestHistoryRebuild: the journal is the truth; an index deleted and
// rebuilt from it answers the same.
func TestHistoryRebuild(t *testing.T) {
	root := looptest.CopyTree(t, "project")
	ctx := context.Background()
	h := looptest.OpenHistory(t, root)
	c := &frameworks.Control{Index: looptest.Index(t, h), Now: func() time.Time { return looptest.Now }}
	s := frameworks.ScanProject(root, looptest.Now)
	h.Observe(ctx, s.Loops, looptest.Now)
	c.Stop(ctx, looptest.ViewOf(t, root, "ccw:loop-v2-20260122-abc123"), "stopped", "enough")
	want := looptest.KindsOf(t, h, "ccw", "loop-v2-20260122-abc123")
	wantRows, _ := h.Store.Loops(ctx)

	h.Store.Close()
	dbPath := filepath.Join(root, ".claude", "orbit.db")
	if err := db.Remove(dbPath); err != nil {
		t.Fatal(err)
	}
	h2 := looptest.OpenHistory(t, root)
	if probs, err := h2.Sync(ctx); err != nil || len(probs) > 0 {
		t.Fatalf("Sync: %v %v", err, probs)
	}
	if got := looptest.KindsOf(t, h2, "ccw", "loop-v2-20260122-abc123"); !slices.Equal(got, want) {
		t.Errorf("history after rebuild %q; want %q", got, want)
	}
	gotRows, _ := h2.Store.Loops(ctx)
	if len(gotRows) != len(wantRows) {
		t.Fatalf("%d loops after rebuild; want %d", len(gotRows), len(wantRows))
	}
	for i := range gotRows {
		g, w := gotRows[i], wantRows[i]
		g.ID, w.ID, g.LastEvent, w.LastEvent = 0, 0, 0, 0
		if g != w {
			t.Errorf("loop after rebuild %+v; want %+v", g, w)
		}
	}
}

func TestSyncJournalDrift(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".claude"), 0o755)
	h := looptest.OpenHistory(t, root)
	ctx := context.Background()
	journal := filepath.Join(root, loop.EventsFile)
	line := func(id, kind, status string) string {
		return `{"ts":"2026-03-09T12:00:00.000Z","framework":"ccw","loop":"` + id + `","event":"` + kind + `","status":"` + status + `"}` + "\n"
	}
	looptest.Write(t, journal, line("a", "seen", "running")+"not json\n"+`{"framework":"ccw"}`+"\n"+line("a", "stop", "stopped")+`{"ts":"x","framework":"ccw","loop":"b","event":"seen"`)
	probs, err := h.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range probs {
		msgs = append(msgs, p.Error())
	}
	if len(msgs) != 2 || !strings.HasPrefix(msgs[0], ".claude/orbit-loop-events.jsonl:2: invalid loop event") ||
		!strings.HasPrefix(msgs[1], ".claude/orbit-loop-events.jsonl:3: invalid loop event: framework, loop and event are required") {
		t.Errorf("problems %q", msgs)
	}
	if got := looptest.KindsOf(t, h, "ccw", "a"); !slices.Equal(got, []string{"seen:running", "stop:stopped"}) {
		t.Errorf("history of a %q", got)
	}
	// The torn last line waits for its newline.
	if got := looptest.KindsOf(t, h, "ccw", "b"); len(got) != 0 {
		t.Errorf("torn line indexed: %q", got)
	}
	f, _ := os.OpenFile(journal, os.O_APPEND|os.O_WRONLY, 0o644)
	f.WriteString("}\n")
	f.Close()
	h.Sync(ctx)
	if got := looptest.KindsOf(t, h, "ccw", "b"); !slices.Equal(got, []string{"seen:"}) {
		t.Errorf("completed line: %q", got)
	}
	// A journal whose past changed is indexed again from the start.
	looptest.Write(t, journal, line("c", "seen", "paused"))
	if _, err := h.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	rows, _ := h.Store.Loops(ctx)
	if len(rows) != 1 || rows[0].LoopID != "c" || rows[0].Status != "paused" {
		t.Errorf("loops after the journal was rewritten: %+v", rows)
	}
}

// Edits in place that keep the journal's size: the last line changed (the
// same length), and a line inserted before the last that leaves a line end
// where the indexed part ended. The loops and their histories are what the
// journal says after each. (Every kind of journal is held to the same in
// journal's TestFollowerKinds.)
func TestSyncJournalPastEdited(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".claude"), 0o755)
	h := looptest.OpenHistory(t, root)
	ctx := context.Background()
	journal := filepath.Join(root, loop.EventsFile)
	line := func(id, kind, status string) string {
		return `{"ts":"2026-03-09T12:00:00.000Z","framework":"ccw","loop":"` + id + `","event":"` + kind + `","status":"` + status + `"}` + "\n"
	}
	// rewrite replaces the journal a second after its last write: a coarse
	// file system clock may not tick between a sync and an immediate
	// rewrite, which would then leave no trace in the file's stat.
	rewrite := func(content string) {
		t.Helper()
		fi, err := os.Stat(journal)
		if err != nil {
			t.Fatal(err)
		}
		looptest.Write(t, journal, content)
		later := fi.ModTime().Add(time.Second)
		if err := os.Chtimes(journal, later, later); err != nil {
			t.Fatal(err)
		}
	}
	looptest.Write(t, journal, line("a", "seen", "running")+line("a", "stop", "stopped"))
	if _, err := h.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// The last line edited in place: another loop id, the same length.
	rewrite(line("a", "seen", "running") + line("b", "stop", "stopped"))
	probs, err := h.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != 1 || !strings.HasPrefix(probs[0].Error(), ".claude/orbit-loop-events.jsonl:2: append-only promise broken") {
		t.Errorf("problems after the same-length edit %v; want line 2 named", probs)
	}
	if got := looptest.KindsOf(t, h, "ccw", "b"); !slices.Equal(got, []string{"stop:stopped"}) {
		t.Errorf("after the same-length edit, history of b %q", got)
	}
	if got := looptest.KindsOf(t, h, "ccw", "a"); !slices.Equal(got, []string{"seen:running"}) {
		t.Errorf("after the same-length edit, history of a %q", got)
	}
	// A line inserted before the last moves it: a line end still falls on
	// the old mark, but the last indexed line is no longer before it.
	first := line("c", "seen", "running")
	pad := strings.Repeat(" ", len(line("a", "seen", "running"))-1)
	rewrite(first + pad + "\n" + line("b", "stop", "stopped"))
	if _, err := h.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	rows, _ := h.Store.Loops(ctx)
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.LoopID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"b", "c"}) {
		t.Errorf("loops after the rewrite %q; want b and c", ids)
	}
}
