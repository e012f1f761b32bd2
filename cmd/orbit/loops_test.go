package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/internal/golden"
)

// frameworkProject copies a fixture tree of testdata/loops into a temporary
// project.
func frameworkProject(tb testing.TB, tree string) *testProject {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), "project")
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "..", "testdata", "loops", filepath.FromSlash(tree)))); err != nil {
		tb.Fatal(err)
	}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chmod(p, 0o644)
		}
		return nil
	})
	if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
		tb.Fatal(err)
	}
	return &testProject{tb: tb, root: root}
}

// loopsGolden compares got with testdata/loops/golden/name (-update
// rewrites it).
func loopsGolden(tb testing.TB, name, got string) {
	tb.Helper()
	golden.Check(tb, filepath.Join("..", "..", "testdata", "loops", "golden", name), []byte(got))
}

func (p *testProject) json(rel string) map[string]any {
	p.tb.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(p.read(rel)), &m); err != nil {
		p.tb.Fatalf("%s: %v", rel, err)
	}
	return m
}

// TestLoopListGolden lists the loops of all five frameworks in one project:
// piped, on a terminal, and as JSON.
func TestLoopListGolden(t *testing.T) {
	p := frameworkProject(t, "project")
	res := p.mustRun("loop", "list")
	loopsGolden(t, "list.txt", res.stdout)
	if res.stderr != "" {
		t.Errorf("stderr: %s", res.stderr)
	}
	loopsGolden(t, "list.tty.txt", p.runTTY("loop", "list").stdout)
	loopsGolden(t, "list.json", p.mustRun("loop", "list", "--json").stdout)
	loopsGolden(t, "list.fields.json", p.mustRun("loop", "list", "--json=framework,id,status,native_status,warnings").stdout)
	if got := firstColumn(p.mustRun("loop", "list", "--framework", "conductor", "--active").stdout); strings.Join(got, ",") != "conductor,conductor" {
		t.Errorf("--framework conductor --active: %q", got)
	}
	// The first list recorded each loop as seen; the next ones nothing.
	events := lines(p.read(".claude/orbit-loop-events.jsonl"))
	if len(events) != 14 || !strings.Contains(events[0], `"event":"seen"`) {
		t.Errorf("event journal after the lists: %d lines", len(events))
	}
}

func TestLoopShowGolden(t *testing.T) {
	p := frameworkProject(t, "project")
	for _, tt := range []struct{ id, golden string }{
		{"foreground-loop-true", "show-citadel.txt"},
		{"ccw:loop-v2-20260122-abc123", "show-ccw.txt"},
		{"cavekit", "show-cavekit.txt"},
		{"player-ai-commander", "show-conductor.txt"},
		{"orbit", "show-orbit.txt"},
	} {
		t.Run(tt.id, func(t *testing.T) {
			loopsGolden(t, tt.golden, p.mustRun("loop", "show", tt.id).stdout)
		})
	}
	var v struct {
		Status  string
		History []struct{ Event, Status string }
	}
	if err := json.Unmarshal([]byte(p.mustRun("loop", "show", "orbit", "--json=status,history").stdout), &v); err != nil {
		t.Fatal(err)
	}
	if v.Status != "running" || len(v.History) != 1 || v.History[0].Event != "seen" {
		t.Errorf("show --json: %+v", v)
	}
	if res := p.run("loop", "show", "loop-v2"); res.code != exitUsage || !strings.Contains(res.stderr, `"loop-v2" matches 2 loops: ccw:loop-v2-20260122-abc123, ccw:loop-v2-20260123-def456`) {
		t.Errorf("ambiguous id: exit %d, %s", res.code, res.stderr)
	}
	if res := p.run("loop", "show", "nothing"); res.code != exitError || !strings.Contains(res.stderr, `no loop "nothing" in this project`) {
		t.Errorf("unknown id: exit %d, %s", res.code, res.stderr)
	}
}

func TestLoopTemplates(t *testing.T) {
	p := newProject(t)
	loopsGolden(t, "templates.txt", p.mustRun("loop", "templates").stdout)
	var ts []map[string]any
	if err := json.Unmarshal([]byte(p.mustRun("loop", "templates", "--json").stdout), &ts); err != nil {
		t.Fatal(err)
	}
	if len(ts) != 8 || ts[0]["id"] != "pr-review-repair" || ts[0]["triggerKind"] != "scheduled" || ts[0]["maxAttempts"] != float64(3) {
		t.Errorf("templates --json: %v", ts)
	}
}

func TestLoopPlan(t *testing.T) {
	p := newProject(t)
	res := p.mustRun("loop", "plan", "--template", "pr-review-repair")
	loopsGolden(t, "plan.json", res.stdout)
	if _, err := os.Stat(p.path(".planning")); !os.IsNotExist(err) {
		t.Error("plan without --write wrote .planning")
	}
	res = p.mustRun("loop", "plan", "--template", "docs-drift-check", "--id", "docs-drift", "--write")
	if res.stderr != "wrote .planning/loops/docs-drift.json\n" {
		t.Errorf("stderr %q", res.stderr)
	}
	if m := p.json(".planning/loops/docs-drift.json"); m["status"] != "planned" || m["template"] != "docs-drift-check" {
		t.Errorf("record %v", m)
	}
	if !strings.Contains(p.read(".claude/orbit-loop-events.jsonl"), `"event":"plan","status":"planned","native_status":"planned","detail":"planned from template docs-drift-check"`) {
		t.Errorf("plan event missing:\n%s", p.read(".claude/orbit-loop-events.jsonl"))
	}
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--template", "docs-drift-check", "--id", "docs-drift", "--write"}, exitError, ".planning/loops/docs-drift.json already exists"},
		{nil, exitUsage, "--template is required"},
		{[]string{"--template", "nope"}, exitUsage, `--template "nope" is not a template`},
		{[]string{"--template", "visual-qa", "--id", "../x", "--write"}, exitError, `loop id "../x": must be a file name`},
	} {
		res := p.run(append([]string{"loop", "plan"}, tt.args...)...)
		if res.code != tt.code || !strings.Contains(res.stderr, tt.msg) {
			t.Errorf("plan %q: exit %d, %q; want %d, %q", tt.args, res.code, res.stderr, tt.code, tt.msg)
		}
	}
}

func TestLoopRun(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{
		{"verifier passes", []string{"--action", "echo act", "--verify", "true", "--write"}, exitOK,
			"verifier-passed after 1 of 3 attempts: The verifier passed and the loop stopped successfully.\nrecord: .planning/loops/foreground-loop-echo-act-2026-03-09T12-00-00-000Z.json\nreview: .planning/loops/foreground-loop-echo-act-2026-03-09T12-00-00-000Z.md\n"},
		{"attempts run out", []string{"--action", "true", "--verify", "false", "--max-attempts", "2"}, exitFindings,
			"attempt-limit after 2 of 2 attempts: The retry ceiling was reached.\n"},
		{"action fails", []string{"--action", "false", "--verify", "true"}, exitFindings,
			"blocked after 1 of 3 attempts: The loop cannot make safe progress without new information.\n"},
		{"verifier cannot run", []string{"--verify", "./no-such-script"}, exitFindings,
			"verifier-failed after 1 of 3 attempts: The verifier failed and no autonomous repair should continue.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProject(t)
			res := p.run(append([]string{"loop", "run"}, tt.args...)...)
			if res.code != tt.code || res.stdout != tt.stdout {
				t.Errorf("exit %d, stdout %q; want %d, %q\nstderr: %s", res.code, res.stdout, tt.code, tt.stdout, res.stderr)
			}
		})
	}
	p := newProject(t)
	var r struct {
		ID, Status string
		Runs       []struct{ ExitCode *int }
	}
	res := p.run("loop", "run", "--verify", "true", "--write", "--json=id,status,runs")
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || res.code != exitOK || r.Status != "verifier-passed" || len(r.Runs) != 1 {
		t.Errorf("run --json: exit %d, %+v, %v", res.code, r, err)
	}
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--action", "true"}, "--verify is required"},
		{[]string{"--verify", "true", "--max-attempts", "0"}, "--max-attempts 0: must be at least 1"},
		{[]string{"--verify", "true", "--backoff", "-1s"}, "--backoff -1s: must not be negative"},
	} {
		if res := p.run(append([]string{"loop", "run"}, tt.args...)...); res.code != exitUsage || !strings.Contains(res.stderr, tt.msg) {
			t.Errorf("run %q: exit %d, %q; want 2, %q", tt.args, res.code, res.stderr, tt.msg)
		}
	}
}

// TestLoopRunAndStopConcurrently: `orbit loop stop ID` from another
// process while `orbit loop run` works on the record: the run ends with
// the operator's stop, the record keeps it, and no run is lost.
func TestLoopRunAndStopConcurrently(t *testing.T) {
	p := newProject(t)
	done := make(chan result)
	go func() {
		done <- p.run("loop", "run", "--action", "touch started; sleep 30", "--verify", "true", "--write")
	}()
	id := "foreground-loop-touch-started-sleep-30-2026-03-09T12-00-00-000Z"
	deadline := time.Now().Add(10 * time.Second)
	for {
		// The stop lands while the action runs.
		if p.exists("started") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if res := p.run("loop", "stop", id, "--reason", "operator"); res.code != exitOK {
		t.Fatalf("stop: exit %d\n%s", res.code, res.stderr)
	}
	var res result
	select {
	case res = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not end")
	}
	if res.code != exitFindings || !strings.HasPrefix(res.stdout, "stopped after 1 of 3 attempts") {
		t.Errorf("run: exit %d, %q", res.code, res.stdout)
	}
	m := p.json(".planning/loops/" + id + ".json")
	if m["status"] != "stopped" || m["stopReason"] != "stopped" || len(m["runs"].([]any)) != 1 || !strings.Contains(p.read(".planning/loops/"+id+".json"), `"text": "operator"`) {
		t.Errorf("record: %v / %v, %d runs\n%s\nrun stderr: %s", m["status"], m["stopReason"], len(m["runs"].([]any)), p.read(".planning/loops/"+id+".json"), res.stderr)
	}
}

// TestLoopStopWithoutID keeps the ORBIT loop's stop as it was.
func TestLoopStopWithoutID(t *testing.T) {
	p := frameworkProject(t, "project")
	res := p.mustRun("loop", "stop", "--reason", "needs-human-review")
	if !strings.Contains(res.stdout, "[CEO-LOOP] Session Complete") {
		t.Errorf("stop printed no session summary:\n%s", res.stdout)
	}
	// The fixture's 47 correct, written before orbit (the journal is
	// empty), are adopted as a baseline, never zeroed.
	if m := p.json(".claude/ceo-loop-state.json"); m["active"] != false || m["stop_reason"] != "needs-human-review" ||
		m["correct_decisions"] != float64(47) || m["max_iterations"] != float64(20) {
		t.Errorf("state after stop: %v", m)
	}
	if !strings.Contains(p.read(".claude/orbit-loop-events.jsonl"), `"framework":"orbit","loop":"orbit","event":"stop","status":"needs-human-review"`) {
		t.Error("the stop was not recorded")
	}
	if res := p.run("loop", "stop", "--reason", "nope"); res.code != exitUsage || !strings.Contains(res.stderr, `--reason "nope" is not allowed`) {
		t.Errorf("stop --reason nope: exit %d, %s", res.code, res.stderr)
	}
	res = p.mustRun("loop", "stop", "--status", "done", "--reason", "queue empty")
	if m := p.json(".claude/ceo-loop-state.json"); m["stop_reason"] != "done" || !strings.Contains(res.stderr, "already stopped") {
		t.Errorf("stop --status done: %v, stderr %q", m["stop_reason"], res.stderr)
	}
	// A loop stopped for good keeps the reason it stopped for.
	before := p.read(".claude/ceo-loop-state.json")
	events := p.read(".claude/orbit-loop-events.jsonl")
	res = p.mustRun("loop", "stop", "--status", "blocked")
	if after := p.read(".claude/ceo-loop-state.json"); after != before || !strings.Contains(res.stderr, "left as it is") {
		t.Errorf("a second stop rewrote the state file (stderr %q):\n%s", res.stderr, after)
	}
	if p.read(".claude/orbit-loop-events.jsonl") != events {
		t.Error("a second stop recorded a stop event")
	}
}

func TestLoopStopByID(t *testing.T) {
	p := frameworkProject(t, "project")
	tests := []struct {
		args   []string
		stdout string
	}{
		{[]string{"loop-v2-20260122-abc123", "--status", "budget-exhausted", "--reason", "spent"},
			"ccw loop-v2-20260122-abc123: running -> budget-exhausted (.workflow/.loop/loop-v2-20260122-abc123.json: status, failure_reason, completed_at, updated_at)\n"},
		// done: completed, and no failure_reason written nor claimed.
		{[]string{"loop-v2-20260123-def456", "--status", "done"},
			"ccw loop-v2-20260123-def456: paused -> done (.workflow/.loop/loop-v2-20260123-def456.json: status, completed_at, updated_at)\n"},
		{[]string{"cavekit"}, "cavekit cavekit: running -> stopped (removed .cavekit/.loop.json; .cavekit/state.md: phase, updated_at)\n"},
		{[]string{"platoon", "--reason", "descoped"},
			"conductor platoon-operations_20260913: planned -> stopped (conductor/tracks/platoon-operations_20260913/metadata.json: loop_state.current_step, loop_state.step_status, warnings, autonomous_decisions, status, completed_at, stop_reason; conductor/tracks.md: absent; nothing to update)\n"},
		{[]string{"pr-watch", "--status", "unsafe-to-continue"},
			"citadel pr-watch-pr-review-and-repair-2026-11-29T19-19-30-743Z: planned -> unsafe-to-continue (.planning/loops/pr-watch-pr-review-and-repair-2026-11-29T19-19-30-743Z.json: status, stoppedAt, stopReason, updatedAt)\n"},
	}
	for _, tt := range tests {
		res := p.mustRun(append([]string{"loop", "stop"}, tt.args...)...)
		if res.stdout != tt.stdout {
			t.Errorf("stop %q:\n%s\nwant\n%s", tt.args, res.stdout, tt.stdout)
		}
	}
	if m := p.json(".workflow/.loop/loop-v2-20260122-abc123.json"); m["failure_reason"] != "budget-exhausted: spent" {
		t.Errorf("ccw failure_reason %v", m["failure_reason"])
	}
	res := p.mustRun("loop", "stop", "orbit", "--status", "done")
	if !strings.HasPrefix(res.stdout, "orbit orbit: running -> done (.claude/ceo-loop-state.json: correct_decisions, incorrect_decisions, trust_level, active, stop_reason, stopped_at; .claude/ceo-loop-progress.md: session summary)\n[CEO-LOOP] Session Complete") {
		t.Errorf("stop orbit:\n%s", res.stdout)
	}
	list := p.mustRun("loop", "list", "--json=id,status").stdout
	for _, want := range []string{`"id": "cavekit",
    "status": "stopped"`, `"id": "platoon-operations_20260913",
    "status": "stopped"`, `"id": "orbit",
    "status": "done"`} {
		if !strings.Contains(list, want) {
			t.Errorf("list after the stops lacks %s:\n%s", want, list)
		}
	}
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"cavekit"}, exitError, "cavekit cavekit has already stopped (stopped): nothing to stop"},
		{[]string{"nothing"}, exitError, `no loop "nothing"`},
		{[]string{"loop-v2", "--status", "stopped"}, exitUsage, "matches 2 loops"}, // both CCW loops have stopped: the id must name one
		{[]string{"x", "--status", "finished"}, exitUsage, `--status "finished" is not allowed`},
		{[]string{"a", "b"}, exitUsage, "expected at most one loop ID"},
	} {
		res := p.run(append([]string{"loop", "stop"}, tt.args...)...)
		if res.code != tt.code || !strings.Contains(res.stderr, tt.msg) {
			t.Errorf("stop %q: exit %d, %q; want %d, %q", tt.args, res.code, res.stderr, tt.code, tt.msg)
		}
	}
}

func TestLoopPauseResume(t *testing.T) {
	p := frameworkProject(t, "project")
	if res := p.mustRun("loop", "pause", "loop-v2-20260122-abc123", "--reason", "lunch"); res.stdout != "ccw loop-v2-20260122-abc123: running -> paused (.workflow/.loop/loop-v2-20260122-abc123.json: status, updated_at)\n" {
		t.Errorf("pause: %q", res.stdout)
	}
	// CCW's skill exited on the pause: the resume says what continues it.
	if res := p.mustRun("loop", "resume", "loop-v2-20260122-abc123"); res.stdout != "ccw loop-v2-20260122-abc123: paused -> running (.workflow/.loop/loop-v2-20260122-abc123.json: status, updated_at)\n"+
		"to continue: /ccw-loop --loop-id=loop-v2-20260122-abc123 --auto\n" {
		t.Errorf("resume: %q", res.stdout)
	}
	if res := p.run("loop", "pause", "cavekit"); res.code != exitError || !strings.Contains(res.stderr, "it has no paused state") {
		t.Errorf("pause cavekit: exit %d, %s", res.code, res.stderr)
	}
	if res := p.run("loop", "resume", "loop-v2-20260122-abc123"); res.code != exitError || !strings.Contains(res.stderr, ".workflow/.loop/loop-v2-20260122-abc123.json is running: only a paused loop can be resumed") {
		t.Errorf("resume a running loop: exit %d, %s", res.code, res.stderr)
	}
	show := p.mustRun("loop", "show", "loop-v2-20260122-abc123").stdout
	if !strings.Contains(show, "pause\tpaused\tlunch") || !strings.Contains(show, "resume\trunning") {
		t.Errorf("history lacks the pause and resume:\n%s", show)
	}
}

// TestLoopListProblems: files that cannot be read are named on stderr, the
// rest is listed, and the exit status is 3.
func TestLoopListProblems(t *testing.T) {
	p := frameworkProject(t, "edge/malformed")
	res := p.run("loop", "list")
	if res.code != exitFindings {
		t.Errorf("exit %d; want 3", res.code)
	}
	for _, want := range []string{
		"orbit: .planning/loops/broken.json:3:23: invalid JSON: unexpected end of JSON input\n",
		"orbit: conductor/tracks/bad_track/metadata.json: want a JSON object, got [1, 2, 3]\n",
		"orbit: 5 loop files could not be read as loops (listed above)\n",
	} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	if got := firstColumn(res.stdout); strings.Join(got, ",") != "cavekit,orbit" {
		t.Errorf("listed %q", got)
	}
}

// TestLoopCommandFlags checks flag parsing through runF.
func TestLoopCommandFlags(t *testing.T) {
	f := NewFactory(&IOStreams{})
	var stop *loopStopOptions
	cmd := newCmdLoopStop(f, func(o *loopStopOptions) error { stop = o; return nil })
	for _, tt := range []struct {
		args               []string
		id, status, reason string
	}{
		{nil, "", "stopped", ""},
		{[]string{"--reason", "blocked"}, "", "blocked", ""},
		{[]string{"--status", "done", "--reason", "all good"}, "", "done", "all good"},
		{[]string{"x"}, "x", "stopped", ""},
		{[]string{"x", "--reason", "why"}, "x", "stopped", "why"},
		{[]string{"x", "--status", "attempt-limit"}, "x", "attempt-limit", ""},
	} {
		stop = nil
		cmd = newCmdLoopStop(f, func(o *loopStopOptions) error { stop = o; return nil })
		cmd.SetArgs(append([]string{}, tt.args...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err != nil {
			t.Errorf("stop %q: %v", tt.args, err)
			continue
		}
		if stop.ID != tt.id || stop.Status != tt.status || stop.Text != tt.reason {
			t.Errorf("stop %q = id %q, status %q, text %q; want %q, %q, %q", tt.args, stop.ID, stop.Status, stop.Text, tt.id, tt.status, tt.reason)
		}
	}
	var run *loopRunOptions
	rc := newCmdLoopRun(f, func(o *loopRunOptions) error { run = o; return nil })
	rc.SetArgs([]string{"--action", "a", "--verify", "v", "--backoff", "2s", "--write"})
	if err := rc.Execute(); err != nil || run.Run.MaxAttempts != 3 || run.Run.Backoff != 2*time.Second || !run.Run.Write {
		t.Errorf("run flags: %+v, %v", run, err)
	}
	rc = newCmdLoopRun(f, func(o *loopRunOptions) error { run = o; return nil })
	rc.SetArgs([]string{"--loop", "docs-drift", "--yes"})
	if err := rc.Execute(); err != nil || run.Run.MaxAttempts != 0 || run.Run.Loop != "docs-drift" || !run.Run.Yes {
		t.Errorf("run --loop: %+v, %v", run, err)
	}
	var list *loopListOptions
	lc := newCmdLoopList(f, func(o *loopListOptions) error { list = o; return nil })
	lc.SetArgs([]string{"--framework", "ccw", "--active", "--json=id,status"})
	if err := lc.Execute(); err != nil || list.Framework != "ccw" || !list.Active || !list.JSON.on {
		t.Errorf("list flags: %+v, %v", list, err)
	}
	lc = newCmdLoopList(f, func(o *loopListOptions) error { return nil })
	lc.SetOut(io.Discard)
	lc.SetErr(io.Discard)
	lc.SetArgs([]string{"--framework", "jenkins"})
	if err := lc.Execute(); err == nil || !strings.Contains(err.Error(), `--framework "jenkins" is not allowed`) {
		t.Errorf("list --framework jenkins: %v", err)
	}
}
