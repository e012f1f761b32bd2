package frameworks_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/internal/looptest"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
)

func newControl(tb testing.TB, root string) (*frameworks.Control, *loop.History) {
	h := looptest.OpenHistory(tb, root)
	return &frameworks.Control{Index: looptest.Index(tb, h), Now: func() time.Time { return looptest.Now }}, h
}

// TestStopEveryFramework stops one loop of each framework in the project
// fixture, then checks the file in the framework's own format, that a new
// scan shows the stop status, and that the stop is in the history.
func TestStopEveryFramework(t *testing.T) {
	tests := []struct {
		key, status, reason string
		check               func(t *testing.T, root string)
	}{
		{key: "citadel:pr-watch-pr-review-and-repair-2026-11-29T19-19-30-743Z", status: "stopped", reason: "not this sprint",
			check: func(t *testing.T, root string) {
				m := looptest.ReadJSON(t, filepath.Join(root, ".planning/loops/pr-watch-pr-review-and-repair-2026-11-29T19-19-30-743Z.json"))
				// The word in stopReason (seed 001), the text a note.
				if m["status"] != "stopped" || m["stopReason"] != "stopped" || m["stoppedAt"] != "2026-03-09T12:00:00.000Z" ||
					m["updatedAt"] != "2026-03-09T12:00:00.000Z" {
					t.Errorf("record after stop: status %v, stopReason %v, stoppedAt %v, updatedAt %v", m["status"], m["stopReason"], m["stoppedAt"], m["updatedAt"])
				}
				if notes, _ := m["notes"].([]any); len(notes) != 1 || notes[0].(map[string]any)["text"] != "not this sprint" {
					t.Errorf("notes after stop: %v; want the reason as a note", m["notes"])
				}
			}},
		{key: "citadel:daemon-{slug}", status: "budget-exhausted", check: func(t *testing.T, root string) {
			m := looptest.ReadJSON(t, filepath.Join(root, ".planning/daemon.json"))
			// The daemon's own word in status, the shared one in stopReason.
			if m["status"] != "stopped" || m["stopReason"] != "budget-exhausted" || m["stoppedAt"] != "2026-03-09T12:00:00.000Z" {
				t.Errorf("daemon after stop: %v", m)
			}
		}},
		{key: "ccw:loop-v2-20260122-abc123", status: "budget-exhausted", reason: "token budget spent", check: func(t *testing.T, root string) {
			m := looptest.ReadJSON(t, filepath.Join(root, ".workflow/.loop/loop-v2-20260122-abc123.json"))
			if m["status"] != "failed" || m["failure_reason"] != "budget-exhausted: token budget spent" || m["completed_at"] == nil {
				t.Errorf("ccw after stop: status %v, failure_reason %v, completed_at %v", m["status"], m["failure_reason"], m["completed_at"])
			}
			if m["skill_state"] == nil {
				t.Error("ccw stop lost skill_state")
			}
		}},
		{key: "ccw:loop-v2-20260123-def456", status: "done", check: func(t *testing.T, root string) {
			m := looptest.ReadJSON(t, filepath.Join(root, ".workflow/.loop/loop-v2-20260123-def456.json"))
			if m["status"] != "completed" || m["failure_reason"] != nil {
				t.Errorf("ccw done: status %v, failure_reason %v", m["status"], m["failure_reason"])
			}
		}},
		{key: "cavekit:cavekit", status: "stopped", check: func(t *testing.T, root string) {
			if _, err := os.Stat(filepath.Join(root, frameworks.CavekitLoopFile)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf(".loop.json after teardown: %v; want it gone", err)
			}
			if _, err := os.Stat(filepath.Join(root, ".cavekit/state.md")); err != nil {
				t.Errorf("teardown removed state.md: %v", err)
			}
		}},
		{key: "conductor:player-ai-commander_20260913", status: "needs-human-review", reason: "in-game checks", check: func(t *testing.T, root string) {
			m := looptest.ReadJSON(t, filepath.Join(root, "conductor/tracks/player-ai-commander_20260913/metadata.json"))
			ls := m["loop_state"].(map[string]any)
			if ls["current_step"] != "COMPLETE" || ls["step_status"] != "PASSED_WITH_WARNINGS" || ls["checkpoints"] == nil || ls["notes"] == nil {
				t.Errorf("loop_state after stop: %v", ls)
			}
			w, _ := m["warnings"].([]any)
			if len(w) != 1 || w[0] != "needs-human-review: in-game checks (orbit loop stop)" || m["stop_reason"] != "needs-human-review" {
				t.Errorf("warnings %v, stop_reason %v", m["warnings"], m["stop_reason"])
			}
		}},
		{key: "orbit:orbit", status: "done", check: func(t *testing.T, root string) {
			m := looptest.ReadJSON(t, filepath.Join(root, project.StateFile))
			// The journal is empty: the 47 correct the state held before
			// orbit are adopted as a baseline (orbitloop.Stop), never
			// zeroed.
			if m["active"] != false || m["stop_reason"] != "done" || m["correct_decisions"] != float64(47) || m["iteration"] != float64(7) {
				t.Errorf("ORBIT state after stop: %v", m)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			root := looptest.CopyTree(t, "project")
			c, h := newControl(t, root)
			v := looptest.ViewOf(t, root, tt.key)
			e, err := c.Stop(context.Background(), v, tt.status, tt.reason)
			if err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if e.Kind != loop.EventStop || e.Status != tt.status || e.From != v.Status {
				t.Errorf("event %+v", e)
			}
			tt.check(t, root)
			after := looptest.ViewOf(t, root, tt.key)
			s := []loop.View{after}
			if _, _, err := h.Observe(context.Background(), s, looptest.Now); err != nil {
				t.Fatal(err)
			}
			if s[0].Status != tt.status {
				t.Errorf("status after stop %q; want %q", s[0].Status, tt.status)
			}
			hist, err := h.Of(context.Background(), v.Framework, v.ID)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, e := range hist {
				if e.Kind != loop.EventAdopt { // the ORBIT stop met its counters
					kinds = append(kinds, e.Kind)
				}
			}
			if !slices.Equal(kinds, []string{"stop"}) {
				t.Errorf("history %q; want just the stop (no status change seen after it)", kinds)
			}
			if _, err := c.Stop(context.Background(), s[0], "stopped", ""); loop.IsStopped(tt.status) && !errors.Is(err, frameworks.ErrAlreadyStopped) {
				t.Errorf("second stop: %v; want ErrAlreadyStopped", err)
			}
		})
	}
}

// TestStopKeepsForeignFields: a stop changes only the fields it must; the
// others keep their values and their order.
func TestStopKeepsForeignFields(t *testing.T) {
	root := looptest.CopyTree(t, "project")
	c, _ := newControl(t, root)
	path := filepath.Join(root, ".workflow/.loop/loop-v2-20260123-def456.json")
	before, _ := os.ReadFile(path)
	if _, err := c.Stop(context.Background(), looptest.ViewOf(t, root, "ccw:loop-v2-20260123-def456"), "stopped", "flaky forever"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	keys := func(b []byte) []string {
		var ks []string
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, `  "`) {
				ks = append(ks, strings.SplitN(strings.TrimSpace(line), `"`, 3)[1])
			}
		}
		return ks
	}
	want := append(keys(before), "failure_reason", "completed_at")
	if got := keys(after); !slices.Equal(got, want) {
		t.Errorf("keys after stop %q; want %q", got, want)
	}
	if !strings.Contains(string(after), `"tags": ["flaky"],`) || !strings.Contains(string(after), `"priority": "high"`) {
		t.Errorf("foreign fields lost or laid out anew:\n%s", after)
	}
}

func TestPauseResume(t *testing.T) {
	root := looptest.CopyTree(t, "project")
	c, h := newControl(t, root)
	ctx := context.Background()
	// CCW: running -> paused -> running.
	v := looptest.ViewOf(t, root, "ccw:loop-v2-20260122-abc123")
	if _, err := c.Pause(ctx, v, "lunch"); err != nil {
		t.Fatal(err)
	}
	if got := looptest.ViewOf(t, root, v.Key()); got.Status != "paused" || !slices.Equal(got.Controls, []string{"stop", "resume"}) {
		t.Errorf("after pause: %s %q", got.Status, got.Controls)
	}
	if _, err := c.Pause(ctx, looptest.ViewOf(t, root, v.Key()), ""); err == nil || strings.Contains(err.Error(), root) {
		t.Errorf("pause of a paused loop: %v; want an error naming the file relative to the project", err)
	}
	if _, err := c.Resume(ctx, looptest.ViewOf(t, root, v.Key()), ""); err != nil {
		t.Fatal(err)
	}
	if got := looptest.ViewOf(t, root, v.Key()); got.Status != "running" {
		t.Errorf("after resume: %s", got.Status)
	}
	// Citadel: planned -> paused -> running.
	cv := looptest.ViewOf(t, root, "citadel:pr-watch-pr-review-and-repair-2026-11-29T19-19-30-743Z")
	if _, err := c.Pause(ctx, cv, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resume(ctx, looptest.ViewOf(t, root, cv.Key()), ""); err != nil {
		t.Fatal(err)
	}
	if m := looptest.ReadJSON(t, filepath.Join(root, cv.Path)); m["status"] != "running" || m["updatedAt"] != "2026-03-09T12:00:00.000Z" {
		t.Errorf("citadel after pause and resume: %v, %v", m["status"], m["updatedAt"])
	}
	// No paused state elsewhere.
	for _, key := range []string{"cavekit:cavekit", "conductor:platoon-operations_20260913", "orbit:orbit", "citadel:daemon-{slug}"} {
		if _, err := c.Pause(ctx, looptest.ViewOf(t, root, key), ""); !errors.Is(err, frameworks.ErrNoControl) {
			t.Errorf("pause %s: %v; want ErrNoControl", key, err)
		}
	}
	hist, _ := h.Of(ctx, "ccw", "loop-v2-20260122-abc123")
	var kinds []string
	for _, e := range hist {
		kinds = append(kinds, e.Kind+":"+e.Status)
	}
	if !slices.Equal(kinds, []string{"pause:paused", "resume:running"}) {
		t.Errorf("ccw history %q", kinds)
	}
}

func TestStopRefusesUnknownWords(t *testing.T) {
	root := looptest.CopyTree(t, "project")
	c, _ := newControl(t, root)
	v := looptest.ViewOf(t, root, "ccw:loop-v2-20260122-abc123")
	for _, bad := range []string{"paused", "finished", ""} {
		if _, err := c.Stop(context.Background(), v, bad, ""); err == nil {
			t.Errorf("Stop with status %q: nil error", bad)
		}
	}
	// Citadel: a record whose status is outside the vocabulary is not
	// rewritten.
	root = looptest.CopyTree(t, "edge/citadel-unknown-status")
	c, _ = newControl(t, root)
	path := filepath.Join(root, ".planning/loops/finished-loop.json")
	before, _ := os.ReadFile(path)
	v = loop.View{Framework: loop.Citadel, ID: "finished-loop", Path: ".planning/loops/finished-loop.json", Status: "running"}
	if _, err := c.Stop(context.Background(), v, "stopped", ""); err == nil || !strings.Contains(err.Error(), `status "finished" is not a loop status`) {
		t.Errorf("stop of a record with status finished: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the record was rewritten")
	}
}

// TestStopStaleView: a loop that stopped after it was read (its runner
// finished, another process stopped it) is not stopped again: its file
// keeps the first stop.
func TestStopStaleView(t *testing.T) {
	root := looptest.CopyTree(t, "project")
	c, _ := newControl(t, root)
	for _, key := range []string{"citadel:pr-watch-pr-review-and-repair-2026-11-29T19-19-30-743Z", "ccw:loop-v2-20260122-abc123"} {
		stale := looptest.ViewOf(t, root, key)
		if _, err := c.Stop(context.Background(), stale, "done", "first"); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(filepath.Join(root, stale.Path))
		if _, err := c.Stop(context.Background(), stale, "stopped", "second"); !errors.Is(err, frameworks.ErrAlreadyStopped) {
			t.Errorf("%s: second stop with a stale view: %v; want ErrAlreadyStopped", key, err)
		}
		if after, _ := os.ReadFile(filepath.Join(root, stale.Path)); string(after) != string(before) {
			t.Errorf("%s: the second stop rewrote the file", key)
		}
	}
}
