package frameworks_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/internal/looptest"
	"github.com/orbit-loop/orbit/loop"
)

// want is what a test expects of one loop; empty fields are not checked.
type want struct {
	status, native, iter, budget, updated, title string
	warnings                                     []string // each must appear in some warning
	noWarnings                                   bool
	controls                                     []string
}

func check(t *testing.T, v loop.View, w want) {
	t.Helper()
	if v.Status != w.status {
		t.Errorf("%s: status %q; want %q", v.Key(), v.Status, w.status)
	}
	if w.native != "" && v.NativeStatus != w.native {
		t.Errorf("%s: native status %q; want %q", v.Key(), v.NativeStatus, w.native)
	}
	if w.iter != "" && v.IterationText() != w.iter {
		t.Errorf("%s: iteration %q; want %q", v.Key(), v.IterationText(), w.iter)
	}
	if w.budget != "" && v.BudgetText() != w.budget {
		t.Errorf("%s: budget %q; want %q", v.Key(), v.BudgetText(), w.budget)
	}
	if w.updated != "" && v.UpdatedAt != w.updated {
		t.Errorf("%s: updated %q; want %q", v.Key(), v.UpdatedAt, w.updated)
	}
	if w.title != "" && v.Title != w.title {
		t.Errorf("%s: title %q; want %q", v.Key(), v.Title, w.title)
	}
	for _, sub := range w.warnings {
		if !looptest.Contains(v.Warnings, sub) {
			t.Errorf("%s: no warning with %q in %q", v.Key(), sub, v.Warnings)
		}
	}
	if w.noWarnings && len(v.Warnings) > 0 {
		t.Errorf("%s: warnings %q; want none", v.Key(), v.Warnings)
	}
	if w.controls != nil && !slices.Equal(v.Controls, w.controls) {
		t.Errorf("%s: controls %q; want %q", v.Key(), v.Controls, w.controls)
	}
}

// TestScanEveryFramework reads the project fixture: the examples of
// ../shared/examples of all five frameworks in one project, plus a few
// CCW records of our own.
func TestScanEveryFramework(t *testing.T) {
	s := frameworks.ScanProject(looptest.Fixture("project"), looptest.Now)
	if len(s.Problems) > 0 {
		t.Fatalf("problems: %v", s.Problems)
	}
	wants := map[string]want{
		"citadel:daemon-{slug}": {status: "running", iter: "0/-", budget: "0/50", updated: "{ISO timestamp}",
			warnings: []string{`startedAt is not a time: "{ISO timestamp}"`}, controls: []string{"stop"}},
		"citadel:foreground-loop-touch-done-flag-2026-11-29T19-19-30-576Z": {status: "verifier-passed", iter: "1/3",
			updated: "2026-11-29T19:19:30.602Z", noWarnings: true, controls: []string{}},
		"citadel:foreground-loop-true-2026-11-29T19-19-30-376Z": {status: "attempt-limit", iter: "2/2", noWarnings: true},
		"citadel:pr-watch-pr-review-and-repair-2026-11-29T19-19-30-743Z": {status: "planned", iter: "0/3", title: "PR review and repair",
			noWarnings: true, controls: []string{"stop", "pause"}},
		"ccw:loop-v2-20260122-abc123": {status: "running", native: "running", iter: "0/10", noWarnings: true,
			controls: []string{"stop", "pause"}},
		"ccw:loop-v2-20260123-def456": {status: "paused", iter: "2/5", noWarnings: true, controls: []string{"stop", "resume"}},
		"ccw:loop-E2E-TASK-1769007254162-20260122120000": {status: "running", iter: "4/3", title: "Test Task E2E-TASK-1769007254162",
			warnings: []string{"iteration 4 is past the cap of 3"}},
		"cavekit:cavekit": {status: "running", native: "active (building)", iter: "0/20", budget: "0/500000 tokens",
			title: "Cavekit: PyEIDORS", updated: "2026-04-20T09:47:57.341Z",
			warnings: []string{"every task in task-status.json is complete but .loop.json is still present",
				"task_budgets are objects"}, controls: []string{"stop"}},
		"conductor:backend_core_services_20260411": {status: "done", native: "COMPLETE/PASSED", iter: "0/3",
			updated: "2026-04-12T02:46:11Z", noWarnings: true},
		"conductor:configurable-models_20260706": {status: "done", iter: "0/2", updated: "2026-07-06", noWarnings: true},
		"conductor:model-fallback_20260715":      {status: "done", noWarnings: true},
		"conductor:platoon-operations_20260913": {status: "planned", native: "NOT_STARTED/NOT_STARTED",
			warnings: []string{`current_step "NOT_STARTED" is not an orchestrator step`}},
		"conductor:player-ai-commander_20260913": {status: "needs-human-review", native: "GAME_VERIFICATION/WAITING_FOR_USER", iter: "1/2",
			warnings: []string{`current_step "GAME_VERIFICATION"`, `step_status "WAITING_FOR_USER" is not one of seed 004's`}},
		"orbit:orbit": {status: "running", native: "active", iter: "7/20",
			warnings: []string{"the time limit (30 minutes from 2026-03-08T10:00:00Z) has passed"}},
	}
	var got []string
	for _, v := range s.Loops {
		got = append(got, v.Key())
		w, ok := wants[v.Key()]
		if !ok {
			t.Errorf("unexpected loop %s", v.Key())
			continue
		}
		check(t, v, w)
	}
	wantKeys := slices.Sorted(maps.Keys(wants))
	if !slices.Equal(slices.Sorted(slices.Values(got)), wantKeys) {
		t.Errorf("loops %q; want %q", got, wantKeys)
	}
	// Framework order, then id.
	order := []string{}
	for _, v := range s.Loops {
		if len(order) == 0 || order[len(order)-1] != v.Framework {
			order = append(order, v.Framework)
		}
	}
	if !slices.Equal(order, loop.Frameworks()) {
		t.Errorf("framework order %q; want %q", order, loop.Frameworks())
	}
}

func TestScanEdgeCases(t *testing.T) {
	tests := []struct {
		name     string
		tree     string
		now      time.Time // testNow when zero
		loops    map[string]want
		problems []string
	}{
		{name: "citadel status outside the vocabulary is an error naming the file", tree: "edge/citadel-unknown-status",
			loops:    map[string]want{"citadel:finished-loop": {status: loop.Unknown, native: "finished", controls: []string{}}},
			problems: []string{`.planning/loops/finished-loop.json: status "finished" is not a loop status (allowed: planned, running`}},
		{name: "malformed files of every framework", tree: "edge/malformed",
			loops: map[string]want{
				"cavekit:cavekit": {status: "running", warnings: []string{".loop.json could not be read", "front matter line"}},
				"orbit:orbit":     {status: loop.Unknown, native: `active "yes"`, warnings: []string{`active is "yes", want true or false`}},
			},
			problems: []string{
				".planning/loops/broken.json:3:23: invalid JSON",
				".planning/daemon.json:1:43: invalid JSON",
				".workflow/.loop/loop-v2-broken.json:1:49: invalid JSON",
				".cavekit/.loop.json:1:1: invalid JSON",
				"conductor/tracks/bad_track/metadata.json: want a JSON object, got [1, 2, 3]",
			}},
		{name: "cavekit in the wild: null as a string, stale lock", tree: "edge/cavekit-agentguard", now: time.Date(2026, 4, 24, 1, 0, 0, 0, time.UTC),
			loops: map[string]want{"cavekit:cavekit": {status: "running", iter: "0/20", budget: "0/500000 tokens",
				warnings: []string{`.progress.json current_task is the string "null"`, "stale lock: session:6f1c2d3e's heartbeat is 18m20s old"}}}},
		{name: "cavekit torn down with every task complete", tree: "edge/cavekit-torn-down",
			loops: map[string]want{"cavekit:cavekit": {status: "done", native: "inactive (building)", controls: []string{}}}},
		{name: "ccw task layouts and failure reasons", tree: "edge/ccw-layouts",
			loops: map[string]want{
				"ccw:loop-v2-20260122-abc123": {status: "planned", native: "created", controls: []string{"stop"},
					warnings: []string{"tasks in both layouts", "loop-v2-20260122-abc123.tasks.jsonl:2 is not a JSON task"}},
				"ccw:loop-v2-20260124-stopped": {status: "stopped", native: "failed", controls: []string{}},
				"ccw:loop-v2-20260124-crashed": {status: "blocked", native: "failed"},
				"ccw:loop-v2-20260124-weird": {status: loop.Unknown, native: "archived", iter: "2/10",
					warnings: []string{`status "archived" is not a CCW status`, `current_iteration is the string "2"`}},
			}},
		{name: "ceo initial state written by a heredoc", tree: "edge/ceo-initial",
			loops: map[string]want{"orbit:orbit": {status: "running", iter: "0/20", warnings: []string{`started_at is not a time: "$STARTED"`}}}},
		{name: "conductor drift", tree: "edge/conductor-drift",
			loops: map[string]want{
				"conductor:legacy_track":  {status: "running", native: "in_progress", noWarnings: true},
				"conductor:blocked_track": {status: "blocked", native: "EXECUTE/BLOCKED", iter: "0/5"},
				"conductor:fixing_track": {status: "waiting", iter: "7/3",
					warnings: []string{"fix cycle 7 is past the cap of 3", `the track is "complete" but its loop is at EVALUATE_EXECUTION/FAILED`}},
				"conductor:original_name_20260101": {status: "running", iter: "1/5",
					warnings: []string{`track_id "original_name_20260101" differs from the directory "renamed_dir"`, `fix_cycle_count is the string "1"`}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := tt.now
			if now.IsZero() {
				now = looptest.Now
			}
			s := frameworks.ScanProject(looptest.Fixture(tt.tree), now)
			got := map[string]bool{}
			for _, v := range s.Loops {
				got[v.Key()] = true
				w, ok := tt.loops[v.Key()]
				if !ok {
					t.Errorf("unexpected loop %s", v.Key())
					continue
				}
				check(t, v, w)
			}
			for k := range tt.loops {
				if !got[k] {
					t.Errorf("loop %s not found", k)
				}
			}
			var msgs []string
			for _, p := range s.Problems {
				msgs = append(msgs, p.Error())
			}
			for _, p := range tt.problems {
				if !looptest.Contains(msgs, p) {
					t.Errorf("no problem with %q in %q", p, msgs)
				}
			}
			if len(msgs) != len(tt.problems) {
				t.Errorf("problems %q; want %d", msgs, len(tt.problems))
			}
		})
	}
}

// TestScanNeverCrashes feeds every framework's files garbage of every
// JSON shape: each is a problem or a flagged loop, never a panic.
func TestScanNeverCrashes(t *testing.T) {
	shapes := []string{``, `null`, `[]`, `"x"`, `1`, `{}`, `{"status": null}`, `{"status": 5, "runs": "x", "budget": []}`,
		`{"loop_state": "x", "checkpoints": 1}`, `{"loop_state": {"checkpoints": {"PLAN": 1}, "fix_cycle_count": {}}}`,
		`{"skill_state": {"develop": {"tasks": [1, "x", null]}}, "current_iteration": -1}`,
		`{"tasks": [1, {"status": {}}], "task_budgets": {"a": [1]}, "session_used": "lots"}`, "\xff\xfe{", `{"a":1}{"b":2}`}
	files := []string{".planning/loops/x.json", ".planning/daemon.json", ".workflow/.loop/x.json", ".workflow/.loop/x.tasks.jsonl",
		".cavekit/.loop.json", ".cavekit/token-ledger.json", ".cavekit/task-status.json", ".cavekit/.progress.json",
		".cavekit/.loop.lock", ".cavekit/state.md", ".cavekit/config.json", "conductor/tracks/t/metadata.json", "conductor/config.json",
		".claude/ceo-loop-state.json", ".claude/orbit-loop.lock"}
	for i, shape := range shapes {
		root := t.TempDir()
		for _, f := range files {
			looptest.Write(t, filepath.Join(root, f), shape)
		}
		s := frameworks.ScanProject(root, looptest.Now)
		for _, v := range s.Loops {
			if v.Status == "" || !(loop.IsStatus(v.Status) || v.Status == loop.Unknown) {
				t.Errorf("shape %d: %s has status %q", i, v.Key(), v.Status)
			}
		}
	}
}

func TestFind(t *testing.T) {
	s := frameworks.ScanProject(looptest.Fixture("project"), looptest.Now)
	tests := []struct {
		id, want string
		n        int
	}{
		{id: "orbit", want: "orbit:orbit", n: 1},
		{id: "ccw:loop-v2-20260122-abc123", want: "ccw:loop-v2-20260122-abc123", n: 1},
		{id: "loop-v2-20260123", want: "ccw:loop-v2-20260123-def456", n: 1},
		{id: "touch-done", want: "citadel:foreground-loop-touch-done-flag-2026-11-29T19-19-30-576Z", n: 1},
		{id: "loop-v2", n: 2},
		{id: "nothing-like-it", n: 0},
	}
	for _, tt := range tests {
		v, matches, ok := s.Find(tt.id)
		if ok != (tt.want != "") || (ok && v.Key() != tt.want) || len(matches) != tt.n {
			t.Errorf("Find(%q) = %s, %d matches, %v; want %q, %d", tt.id, v.Key(), len(matches), ok, tt.want, tt.n)
		}
	}
}

// FuzzSplitObject holds the object splitter to encoding/json: on every
// valid JSON object, the members and their values are the same.
func FuzzSplitObject(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":1}`, ` { "a" : "x\"}" , "b":[1,{"c":"]"}], "a": null } `, `{"\u0061b":true,"k":-1.5e3}`,
		`{"nested":{"x":[[],{}],"y":"\\"}}`} {
		f.Add(seed)
	}
	for _, name := range []string{"project/.planning/loops/foreground-loop-true-2026-11-29T19-19-30-376Z.json",
		"project/conductor/tracks/player-ai-commander_20260913/metadata.json"} {
		data, err := os.ReadFile(looptest.Fixture(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var want map[string]json.RawMessage
		if json.Unmarshal([]byte(doc), &want) != nil || want == nil {
			return
		}
		got, err := frameworks.SplitObjectForTest([]byte(doc))
		if err != nil {
			t.Fatalf("split %q: %v", doc, err)
		}
		if len(got) != len(want) {
			t.Fatalf("split %q: %d members; want %d", doc, len(got), len(want))
		}
		for k, w := range want {
			g, ok := got[k]
			if !ok || compactJSON(g) != compactJSON(w) {
				t.Fatalf("split %q: member %q = %s; want %s", doc, k, g, w)
			}
		}
	})
}

func compactJSON(r []byte) string {
	var v any
	if err := json.Unmarshal(r, &v); err != nil {
		return "invalid: " + string(r)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestStatusMapping(t *testing.T) {
	tests := []struct {
		name, file, content, key, want string
	}{
		{"ccw created", ".workflow/.loop/l.json", `{"loop_id":"l","status":"created"}`, "ccw:l", "planned"},
		{"ccw running", ".workflow/.loop/l.json", `{"loop_id":"l","status":"running"}`, "ccw:l", "running"},
		{"ccw paused", ".workflow/.loop/l.json", `{"loop_id":"l","status":"paused"}`, "ccw:l", "paused"},
		{"ccw completed", ".workflow/.loop/l.json", `{"loop_id":"l","status":"completed"}`, "ccw:l", "done"},
		{"ccw user_exit", ".workflow/.loop/l.json", `{"loop_id":"l","status":"user_exit"}`, "ccw:l", "stopped"},
		{"ccw failed by orbit", ".workflow/.loop/l.json", `{"loop_id":"l","status":"failed","failure_reason":"attempt-limit: 3 tries"}`, "ccw:l", "attempt-limit"},
		{"ccw failed by /stop", ".workflow/.loop/l.json", `{"loop_id":"l","status":"failed","failure_reason":"Manually stopped by user"}`, "ccw:l", "stopped"},
		{"ccw failed otherwise", ".workflow/.loop/l.json", `{"loop_id":"l","status":"failed","failure_reason":"Skill execution failed: x"}`, "ccw:l", "blocked"},
		{"ccw failed without reason", ".workflow/.loop/l.json", `{"loop_id":"l","status":"failed"}`, "ccw:l", "blocked"},
		{"citadel upper case", ".planning/loops/c.json", `{"id":"c","status":"VERIFIER-PASSED"}`, "citadel:c", "verifier-passed"},
		{"citadel daemon completed", ".planning/daemon.json", `{"status":"completed","campaignSlug":"s"}`, "citadel:daemon-s", "done"},
		{"citadel daemon without slug", ".planning/daemon.json", `{"status":"running"}`, "citadel:daemon-active", "running"},
		{"cavekit active", ".cavekit/.loop.json", `{"iteration":1,"max_iterations":5}`, "cavekit:cavekit", "running"},
		{"cavekit torn down, tasks left", ".cavekit/task-status.json", `{"tasks":[{"id":"a","status":"complete"},{"id":"b","status":"pending"}]}`, "cavekit:cavekit", "stopped"},
		{"cavekit torn down, budget spent", ".cavekit/token-ledger.json", `{"session_used":500,"session_budget":500}`, "cavekit:cavekit", "budget-exhausted"},
		{"cavekit torn down, nothing", ".cavekit/state.md", "---\nphase: idle\n---\n", "cavekit:cavekit", "no-active-work"},
		{"conductor in progress", "conductor/tracks/t/metadata.json", `{"track_id":"t","loop_state":{"current_step":"EXECUTE","step_status":"IN_PROGRESS"}}`, "conductor:t", "running"},
		{"conductor passed mid-loop", "conductor/tracks/t/metadata.json", `{"track_id":"t","loop_state":{"current_step":"EVALUATE_PLAN","step_status":"PASSED"}}`, "conductor:t", "waiting"},
		{"conductor not started after a fix", "conductor/tracks/t/metadata.json", `{"track_id":"t","loop_state":{"current_step":"FIX","step_status":"NOT_STARTED","fix_cycle_count":1}}`, "conductor:t", "waiting"},
		{"conductor escalated", "conductor/tracks/t/metadata.json", `{"track_id":"t","loop_state":{"current_step":"ESCALATE","step_status":"IN_PROGRESS"}}`, "conductor:t", "needs-human-review"},
		{"conductor complete with warnings", "conductor/tracks/t/metadata.json", `{"track_id":"t","status":"complete","loop_state":{"current_step":"COMPLETE","step_status":"PASSED_WITH_WARNINGS"}}`, "conductor:t", "done"},
		{"conductor stopped by orbit", "conductor/tracks/t/metadata.json", `{"track_id":"t","stop_reason":"unsafe-to-continue","loop_state":{"current_step":"COMPLETE","step_status":"PASSED_WITH_WARNINGS"}}`, "conductor:t", "unsafe-to-continue"},
		{"conductor unknown step status", "conductor/tracks/t/metadata.json", `{"track_id":"t","loop_state":{"current_step":"PLAN","step_status":"SNOOZED"}}`, "conductor:t", loop.Unknown},
		{"conductor track new", "conductor/tracks/t/metadata.json", `{"track_id":"t","status":"new"}`, "conductor:t", "planned"},
		{"orbit inactive without reason", ".claude/ceo-loop-state.json", `{"active":false}`, "orbit:orbit", "stopped"},
		{"orbit inactive with a word", ".claude/ceo-loop-state.json", `{"active":false,"stop_reason":"budget-exhausted"}`, "orbit:orbit", "budget-exhausted"},
		{"orbit inactive with another reason", ".claude/ceo-loop-state.json", `{"active":false,"stop_reason":"bored"}`, "orbit:orbit", "stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			looptest.Write(t, filepath.Join(root, tt.file), tt.content)
			if v := looptest.ViewOf(t, root, tt.key); v.Status != tt.want {
				t.Errorf("status %q (native %q, warnings %q); want %q", v.Status, v.NativeStatus, v.Warnings, tt.want)
			}
		})
	}
}
