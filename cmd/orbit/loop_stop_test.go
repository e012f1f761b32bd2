package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/internal/projecttest"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/server"
)

// eventsRel is orbit's loop event journal.
const eventsRel = ".claude/orbit-loop-events.jsonl"

// stopThroughAPI stops the ORBIT loop with POST /api/v1/loops/orbit/stop
// on a server over the project, as `orbit serve` runs it.
func stopThroughAPI(tb testing.TB, p *testProject, status string) {
	tb.Helper()
	ctx := context.Background()
	ix := projecttest.Open(tb, projecttest.At(tb, p.root), testNow)
	defer ix.Store.Close()
	if _, err := ix.Sync(ctx, journal.SyncOptions{}); err != nil {
		tb.Fatal(err)
	}
	srv, err := server.New(ctx, ix, server.Config{Token: "face-token-face-token-face-token-0", Now: func() time.Time { return testNow }, Log: io.Discard})
	if err != nil {
		tb.Fatal(err)
	}
	defer srv.Close()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/loops/orbit/stop", strings.NewReader(`{"status":"`+status+`"}`))
	req.Header.Set("Authorization", "Bearer face-token-face-token-face-token-0")
	req.Host = "localhost" // a loopback server answers only to its own name
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		tb.Fatalf("POST /api/v1/loops/orbit/stop: %d %s", rec.Code, rec.Body)
	}
}

// stopEvents are the stop events of the ORBIT loop in the loop event
// journal, without their detail (each face says why in its own words).
func stopEvents(tb testing.TB, p *testProject) []map[string]any {
	tb.Helper()
	if !p.exists(eventsRel) {
		return nil
	}
	var out []map[string]any
	for _, l := range lines(p.read(eventsRel)) {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			tb.Fatalf("%s: %v", eventsRel, err)
		}
		if e["framework"] == "orbit" && e["loop"] == "orbit" && e["event"] == "stop" {
			delete(e, "detail")
			out = append(out, e)
		}
	}
	return out
}

// TestStopFacesSameSideEffects stops the same ORBIT loop, held by a
// session, through each face: `orbit loop stop`, POST
// /api/v1/loops/orbit/stop and the Stop hook's teardown (the agent wrote
// the completion sentinel). Each must leave the same state file, the
// session summary in the progress file, one stop event in the loop event
// journal, and the session lock freed: they all go through orbitloop.Stop.
func TestStopFacesSameSideEffects(t *testing.T) {
	faces := []struct {
		name string
		stop func(t *testing.T, p *testProject)
	}{
		{"cli", func(t *testing.T, p *testProject) { p.mustRun("loop", "stop", "--reason", "done") }},
		{"api", func(t *testing.T, p *testProject) { stopThroughAPI(t, p, "done") }},
		{"hook", func(t *testing.T, p *testProject) {
			_, out := p.stop(testNow, stopInput{SessionID: "s1", LastAssistantMessage: "All done. <promise>ORBIT COMPLETE</promise>"})
			if out.Decision != "" || !strings.Contains(out.SystemMessage, "finished after iteration 6: done") {
				t.Fatalf("teardown output %+v; want the loop finished as done", out)
			}
		}},
	}
	states, progress, events := map[string]string{}, map[string]string{}, map[string]string{}
	for _, face := range faces {
		t.Run(face.name, func(t *testing.T) {
			p := loopProject(t)
			fixtureProgress := p.read(progressRel)
			// Session s1 drives the loop: its first Stop takes the lock and
			// goes on (the queue holds 4 requests) to iteration 6.
			if _, out := p.stop(testNow, stopInput{SessionID: "s1"}); out.Decision != "block" || !p.exists(lockRel) {
				t.Fatalf("first Stop: %+v, lock held %t; want the loop to go on, locked", out, p.exists(lockRel))
			}
			face.stop(t, p)

			st := p.json(stateRel)
			if st["active"] != false || st["stop_reason"] != "done" || st["stopped_at"] != testNow.Format(time.RFC3339) || st["iteration"] != float64(6) {
				t.Errorf("state after stop: active %v, stop_reason %v, stopped_at %v, iteration %v; want false, done, %s, 6",
					st["active"], st["stop_reason"], st["stopped_at"], st["iteration"], testNow.Format(time.RFC3339))
			}
			// The journal fixture's counters: 2 correct, 1 incorrect.
			if st["correct_decisions"] != float64(2) || st["incorrect_decisions"] != float64(1) {
				t.Errorf("state counters %v/%v; want the journal's 2/1", st["correct_decisions"], st["incorrect_decisions"])
			}
			prog := p.read(progressRel)
			if prog == fixtureProgress || !strings.Contains(prog, "\n## Session Complete — ORBIT Loop Finished\n- Iterations: 6 of 20 |") {
				t.Errorf("progress file has no session summary:\n%s", prog)
			}
			evs := stopEvents(t, p)
			if len(evs) != 1 {
				t.Fatalf("%d stop events in %s; want exactly 1", len(evs), eventsRel)
			}
			if e := evs[0]; e["status"] != "done" || e["from"] != "running" || e["native_status"] != "inactive (done)" || e["iteration"] != float64(6) {
				t.Errorf("stop event %v; want status done from running, native inactive (done), iteration 6", e)
			}
			if p.exists(lockRel) {
				t.Errorf("%s still held after the stop:\n%s", lockRel, p.read(lockRel))
			}
			b, _ := json.Marshal(evs[0])
			states[face.name], progress[face.name], events[face.name] = p.read(stateRel), prog, string(b)
		})
	}
	for _, face := range faces[1:] {
		if states[face.name] != states["cli"] {
			t.Errorf("state file after the %s stop differs from the CLI's:\n%s\nCLI:\n%s", face.name, states[face.name], states["cli"])
		}
		if progress[face.name] != progress["cli"] {
			t.Errorf("progress file after the %s stop differs from the CLI's:\n%s\nCLI:\n%s", face.name, progress[face.name], progress["cli"])
		}
		if events[face.name] != events["cli"] {
			t.Errorf("stop event of the %s face %s; the CLI's %s", face.name, events[face.name], events["cli"])
		}
	}
}
