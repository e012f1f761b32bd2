package frameworks_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/internal/looptest"
	"github.com/orbit-loop/orbit/loop"
)

// What each framework's files hold that orbit reads (issue 18): a part of
// each format that was not read before, read from a project written here.

// detail returns the value of the named detail ("" when absent).
func detail(v loop.View, name string) string {
	for _, d := range v.Details {
		if d.Name == name {
			return d.Value
		}
	}
	return ""
}

func wantDetails(t *testing.T, v loop.View, want map[string]string) {
	t.Helper()
	for name, sub := range want {
		if got := detail(v, name); !strings.Contains(got, sub) || (sub == "" && got != "") {
			t.Errorf("%s: detail %q = %q; want it to hold %q", v.Key(), name, got, sub)
		}
	}
}

// TestCitadelContractShown: loop show has input, scope, permissions,
// budget, retry, recovery and notes of a record.
func TestCitadelContractShown(t *testing.T) {
	root := looptest.CopyTree(t, "project")
	v := looptest.ViewOf(t, root, "citadel:pr-watch-pr-review-and-repair-2026-11-29T19-19-30-743Z")
	wantDetails(t, v, map[string]string{
		"input":       "Monitor a pull request, inspect review/CI feedback, apply targeted fixes, and stop at review or green checks.; source: user-request",
		"scope":       "current project",
		"permissions": "filesystem: workspace-write; network: restricted; approvals: required-for-risky-actions",
		"budget":      "max attempts: 3",
		"retry":       "max attempts: 3",
		"recovery":    "rollback: inspect git diff and revert loop-owned changes if needed",
	})
	if strings.Contains(detail(v, "input"), "null") || strings.Contains(detail(v, "budget"), "null") {
		t.Errorf("nulls shown: %q, %q", detail(v, "input"), detail(v, "budget"))
	}
}

// TestCodexAutomations: .planning/codex-automations/*.json is part of
// Citadel's registry (seed 001); orbit lists them, read-only.
func TestCodexAutomations(t *testing.T) {
	root := newProject(t, map[string][]byte{
		".planning/codex-automations/nightly-health.json": []byte(`{"id": "nightly-health", "name": "Nightly health", "status": "ACTIVE",
  "rrule": "FREQ=DAILY;BYHOUR=3", "prompt": "Run the health checks", "cwds": ["/repo"], "updated_at": "2026-03-01T03:00:00Z"}`),
		".planning/codex-automations/triage.json": []byte(`{"id": "triage", "status": "PAUSED"}`),
		".planning/codex-automations/odd.json":    []byte(`{"status": "SOMETIMES"}`),
	})
	s := frameworks.ScanProject(root, looptest.Now)
	got := map[string]loop.View{}
	for _, v := range s.Loops {
		got[v.Key()] = v
	}
	check(t, got["citadel:codex-nightly-health"], want{status: "running", native: "ACTIVE", title: "Nightly health", updated: "2026-03-01T03:00:00Z", controls: []string{}})
	wantDetails(t, got["citadel:codex-nightly-health"], map[string]string{"rrule": "FREQ=DAILY;BYHOUR=3", "prompt": "Run the health checks", "working directories": "/repo"})
	check(t, got["citadel:codex-triage"], want{status: "paused", native: "PAUSED"})
	check(t, got["citadel:codex-odd"], want{status: loop.Unknown, warnings: []string{`status "SOMETIMES"`}})
	c, _ := newControl(t, root)
	if _, err := c.Stop(t.Context(), got["citadel:codex-nightly-health"], "stopped", ""); err == nil {
		t.Error("stopping a Codex automation: nil error; it is Codex's to stop")
	}
}

// TestCCWProgress: {id}.progress/ holds the skill's progress (seed 002);
// loop show shows it.
func TestCCWProgress(t *testing.T) {
	root := looptest.CopyTree(t, "project")
	dir := filepath.Join(root, ".workflow/.loop/loop-v2-20260122-abc123.progress")
	for name, content := range map[string]string{
		"develop.md":        "# Development\n\n- task-001 started\n",
		"changes.log":       "{\"file\":\"auth.ts\"}\n{\"file\":\"login.ts\"}\nnot json\n",
		"debug.log":         "{\"hypothesis\":\"H1\"}\n",
		"hypotheses.json":   `{"hypotheses": [{"id": "H1", "status": "confirmed"}, {"id": "H2", "status": "pending"}]}`,
		"test-results.json": `[{"test_name": "login", "status": "passed"}, {"test_name": "logout", "status": "failed"}, {"test_name": "me", "status": "passed"}]`,
		"summary.md":        "\n# Auth done, two tests left\n",
		"notes.txt":         "mine",
	} {
		looptest.Write(t, filepath.Join(dir, name), content)
	}
	v := looptest.ViewOf(t, root, "ccw:loop-v2-20260122-abc123")
	wantDetails(t, v, map[string]string{
		"progress files": "develop.md, changes.log, debug.log, hypotheses.json, test-results.json, summary.md, notes.txt",
		"changes log":    "2 entries",
		"debug log":      "1 entries",
		"hypotheses":     "2 (confirmed 1, pending 1)",
		"test results":   "3 (failed 1, passed 2)",
		"summary":        "Auth done, two tests left",
	})
	if !looptest.Contains(v.Warnings, "changes.log:3 is not a JSON line") {
		t.Errorf("warnings %q; want the bad log line named", v.Warnings)
	}
	if !looptest.Contains(v.Files, "loop-v2-20260122-abc123.progress/summary.md") {
		t.Errorf("files %q lack the progress files", v.Files)
	}
}

// TestCavekitLockForms: heartbeat_at as Cavekit's tools write it (epoch
// milliseconds) or in seconds is a time; a stale one is flagged, and a
// teardown removes only a stale lock.
func TestCavekitLockForms(t *testing.T) {
	for _, tt := range []struct {
		name, heartbeat string
		stale           bool
	}{
		{"iso", `"2026-03-09T11:58:00.000Z"`, false},
		{"epoch milliseconds", fmt.Sprint(looptest.Now.Add(-time.Minute).UnixMilli()), false},
		{"epoch seconds", fmt.Sprint(looptest.Now.Add(-time.Minute).Unix()), false},
		{"stale epoch milliseconds", fmt.Sprint(looptest.Now.Add(-time.Hour).UnixMilli()), true},
		{"milliseconds as a string", fmt.Sprintf("%q", fmt.Sprint(looptest.Now.Add(-time.Hour).UnixMilli())), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := newProject(t, map[string][]byte{
				".cavekit/.loop.json": example(t, "cavekit", "PyEIDORS.loop.json"),
				".cavekit/.loop.lock": []byte(`{"owner":"session:s","pid":4,"host":"h","heartbeat_at":` + tt.heartbeat + `}`),
			})
			v := looptest.ViewOf(t, root, "cavekit:cavekit")
			if looptest.Contains(v.Warnings, "not a lock record") || looptest.Contains(v.Warnings, "not a time") {
				t.Errorf("warnings %q: the heartbeat is a time", v.Warnings)
			}
			if got := looptest.Contains(v.Warnings, "stale lock"); got != tt.stale {
				t.Errorf("stale lock flagged: %v; want %v (%q)", got, tt.stale, v.Warnings)
			}
			mustControl(t, root, "cavekit:cavekit", loop.EventStop, "stopped", "")
			_, err := os.Stat(filepath.Join(root, frameworks.CavekitLockFile))
			if gone := err != nil; gone != tt.stale {
				t.Errorf("after teardown the lock is gone: %v; want %v", gone, tt.stale)
			}
		})
	}
}

// TestCavekitStaleLoop: an active .loop.json with nothing moving for days
// is flagged as stale, with its age.
func TestCavekitStaleLoop(t *testing.T) {
	old := looptest.Now.Add(-9*24*time.Hour - 3*time.Hour)
	root := newProject(t, map[string][]byte{
		".cavekit/.loop.json": []byte(`{"started_at": "` + loop.ISOTime(old.Add(-time.Hour)) + `", "iteration": 3, "max_iterations": 20}`),
		".cavekit/state.md":   []byte("---\nphase: building\nupdated_at: \"" + loop.ISOTime(old) + "\"\n---\n"),
	})
	// The file itself was written long ago too.
	os.Chtimes(filepath.Join(root, frameworks.CavekitLoopFile), old, old)
	v := looptest.ViewOf(t, root, "cavekit:cavekit")
	check(t, v, want{status: "running", warnings: []string{"stale: .loop.json is active but nothing has moved for 9 days 3 hours"}})
	wantDetails(t, v, map[string]string{"last activity": loop.ISOTime(old) + " (state.md updated_at)"})
	// A loop whose state moved an hour ago is not stale.
	looptest.Write(t, filepath.Join(root, ".cavekit/state.md"), "---\nphase: building\nupdated_at: \""+loop.ISOTime(looptest.Now.Add(-time.Hour))+"\"\n---\n")
	if v := looptest.ViewOf(t, root, "cavekit:cavekit"); looptest.Contains(v.Warnings, "stale:") {
		t.Errorf("a loop active an hour ago flagged: %q", v.Warnings)
	}
}

// TestCavekitHistoryAndCapabilities: history/backprop-log.md and
// capabilities.json (seed 003's file table) are read.
func TestCavekitHistoryAndCapabilities(t *testing.T) {
	root := newProject(t, map[string][]byte{
		".cavekit/.loop.json": example(t, "cavekit", "PyEIDORS.loop.json"),
		".cavekit/history/backprop-log.md": []byte("# Backprop log\n\n## #1 — Tail misses appended lines (2026-04-20)\n\n- **Failure source:** user report\n\n---\n\n" +
			"## #2 — Viewport frozen at the tail (2026-04-21)\n\n- **Fix commit:** `f98c116`\n"),
		".cavekit/capabilities.json": []byte(`{"discovered_at": "2026-04-20T07:00:00.000Z", "cli_tools": {"gh": true, "git": true, "docker": false},
  "mcp_servers": ["playwright"], "plugins": [], "codex": {"available": false}}`),
	})
	v := looptest.ViewOf(t, root, "cavekit:cavekit")
	wantDetails(t, v, map[string]string{
		"backprop log": "2 entries, the last: #2 — Viewport frozen at the tail (2026-04-21)",
		"capabilities": "CLI 2 of 3 (gh, git); mcp servers 1 (playwright); plugins 0 (); codex available: false; discovered 2026-04-20T07:00:00.000Z",
	})
	if !looptest.Contains(v.Files, ".cavekit/history/backprop-log.md") || !looptest.Contains(v.Files, ".cavekit/capabilities.json") {
		t.Errorf("files %q", v.Files)
	}
}

// TestConductorCapsAndConfig: a fix cycle exactly at the cap is flagged;
// config.json's mode and the iteration limit, board sessions and
// conditions and the parallel state are read.
func TestConductorCapsAndConfig(t *testing.T) {
	meta := `{
  "version": 3, "track_id": "t_1", "name": "T", "status": "in_progress",
  "board_conditions": ["coverage >= 80%%", "no new dependencies"],
  "loop_state": {
    "current_step": "EVALUATE_EXECUTION", "step_status": "FAILED", "fix_cycle_count": %d,
    "agent_runs": %d,
    "board_sessions": [{"session_id": "b1", "checkpoint": "EVALUATE_PLAN", "verdict": "APPROVED", "conditions": ["coverage >= 80%%"], "timestamp": "2026-03-01T10:00:00Z"}],
    "parallel_state": {"total_workers_spawned": 3, "completed_workers": 2, "failed_workers": 1, "parallel_groups_completed": 1}
  }
}`
	for _, tt := range []struct {
		name       string
		config     string
		fix, runs  int
		wantWarn   []string
		wantDetail map[string]string
	}{
		{"at the fix cap (seed default 5)", "", 5, 3, []string{"fix cycle 5 has reached the cap of 5"},
			map[string]string{"mode": "agentic (seed 004 default, no config.json)", "iterations": "3 of 50 (loop_state.agent_runs; limit: seed 004 default)"}},
		{"below the cap", `{"mode": "human-in-the-loop"}`, 4, 3, nil,
			map[string]string{"mode": "human-in-the-loop (conductor/config.json)"}},
		{"at the configured caps", `{"mode": "agentic", "max_fix_cycles": 2, "max_iterations": 10}`, 2, 10,
			[]string{"fix cycle 2 has reached the cap of 2", "10 iterations have reached the limit of 10"},
			map[string]string{"fix cycle limit": "2 (conductor/config.json)", "iterations": "10 of 10"}},
		{"an unknown mode", `{"mode": "yolo"}`, 0, 0, []string{`mode "yolo" is not one of seed 004's`}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string][]byte{"conductor/tracks/t_1/metadata.json": []byte(fmt.Sprintf(meta, tt.fix, tt.runs))}
			if tt.config != "" {
				files["conductor/config.json"] = []byte(tt.config)
			}
			v := looptest.ViewOf(t, newProject(t, files), "conductor:t_1")
			for _, w := range tt.wantWarn {
				if !looptest.Contains(v.Warnings, w) {
					t.Errorf("warnings %q; want %q", v.Warnings, w)
				}
			}
			if tt.wantWarn == nil && looptest.Contains(v.Warnings, "cap") {
				t.Errorf("warnings %q; want no cap flagged", v.Warnings)
			}
			wantDetails(t, v, tt.wantDetail)
			wantDetails(t, v, map[string]string{
				"board sessions":   "1 (the last: APPROVED at EVALUATE_PLAN, 2026-03-01T10:00:00Z, 1 conditions)",
				"board conditions": "coverage >= 80%; no new dependencies",
				"parallel":         "total workers spawned 3, completed workers 2, failed workers 1, parallel groups completed 1",
			})
		})
	}
}
