package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/orbitloop"
)

// seedStateKeys are the keys of seed 000's state file, in its order
// (loop/testdata/doc-example.ceo-loop-state.json, verbatim from the seed).
func seedStateKeys(tb testing.TB) []string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "loop", "testdata", "doc-example.ceo-loop-state.json"))
	if err != nil {
		tb.Fatal(err)
	}
	return objectKeys(tb, b)
}

// stateValues decodes the state file into a map.
func (p *testProject) stateValues() map[string]json.RawMessage {
	p.tb.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(p.read(stateRel)), &m); err != nil {
		p.tb.Fatalf("state file: %v\n%s", err, p.read(stateRel))
	}
	return m
}

func TestLoopStart(t *testing.T) {
	t.Parallel()
	p := projectWith(t, "journal.jsonl")
	res := p.mustRun("loop", "start")
	// The journal's decisions go up to iteration 3: numbering goes on.
	want := "ORBIT loop started: iteration 4 of 23, time limit 30m0s, trust standard (accuracy 2/3 = 66.7%)\n" +
		"Iterations go on from the journal's: this loop runs iterations 4 to 23.\n" +
		"The Stop hook re-feeds each iteration; end the loop by writing <promise>ORBIT COMPLETE</promise> in the last message, or with `orbit loop stop`.\n"
	if res.stdout != want {
		t.Errorf("stdout = %q; want %q", res.stdout, want)
	}
	keys := objectKeys(t, []byte(p.read(stateRel)))
	wantKeys := append(seedStateKeys(t), "completion_sentinel", "budget_tokens", "tokens_used", "last_stop_decisions", "hook_event", "first_iteration")
	if !slices.Equal(keys, wantKeys) {
		t.Errorf("state keys = %q; want the seed's in its order, then orbit's: %q", keys, wantKeys)
	}
	m := p.stateValues()
	wantValues := map[string]string{
		"active": "true", "iteration": "4", "max_iterations": "23", "first_iteration": "4", "time_limit_minutes": "30",
		"started_at": `"2026-03-09T12:00:00Z"`, "trust_level": `"standard"`, "depth_escalation_counter": "0",
		"correct_decisions": "2", "incorrect_decisions": "1", "budget_tokens": "0", "tokens_used": "0", "last_stop_decisions": "6",
	}
	for k, v := range wantValues {
		if string(m[k]) != v {
			t.Errorf("state %s = %s; want %s", k, m[k], v)
		}
	}
	var sentinel string
	if err := json.Unmarshal(m["completion_sentinel"], &sentinel); err != nil || sentinel != "<promise>ORBIT COMPLETE</promise>" {
		t.Errorf("state completion_sentinel = %s; want <promise>ORBIT COMPLETE</promise>", m["completion_sentinel"])
	}
	if !strings.HasPrefix(p.read(stateRel), "{\n  \"active\": true,\n  \"iteration\": 4,\n") {
		t.Errorf("state file is not written as the seed writes it (two-space indent):\n%s", p.read(stateRel))
	}
}

func TestLoopStartFlags(t *testing.T) {
	t.Parallel()
	p := projectWith(t, "journal.jsonl")
	res := p.mustRun("loop", "start", "--max-iterations", "40", "--time-limit", "2h", "--budget", "2000000", "--sentinel", "QUEUE DONE")
	if !strings.HasPrefix(res.stdout, "ORBIT loop started: iteration 4 of 43, time limit 2h0m0s, trust standard (accuracy 2/3 = 66.7%)\n") {
		t.Errorf("stdout = %q", res.stdout)
	}
	o := p.orbitState()
	if o.MaxIterations != 43 || o.TimeLimitMinutes != 120 || o.BudgetTokens != 2000000 || o.Sentinel != "QUEUE DONE" || o.HookEvent != "Stop" {
		t.Errorf("state = %+v; want 40 iterations (to 43), 120 minutes, 2000000 tokens, sentinel QUEUE DONE, hook event Stop", o)
	}
	p.mustRun("loop", "start", "--force", "--hook-event", "SubagentStop")
	if o := p.orbitState(); o.HookEvent != "SubagentStop" {
		t.Errorf("loop start --hook-event SubagentStop: hook_event %q", o.HookEvent)
	}

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no iterations", []string{"--max-iterations", "0"}, "orbit: --max-iterations 0: must be at least 1\n"},
		{"time limit under a minute", []string{"--time-limit", "30s"}, "orbit: --time-limit 30s: must be 0 (none) or at least 1m\n"},
		{"negative budget", []string{"--budget", "-1"}, "orbit: --budget -1: must be 0 (none) or more tokens\n"},
		{"unknown hook event", []string{"--hook-event", "PostToolUse"}, "orbit: --hook-event \"PostToolUse\": want Stop or SubagentStop\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := projectWith(t, "journal.jsonl")
			res := p.run(append([]string{"loop", "start"}, tt.args...)...)
			if res.code != exitUsage || !strings.HasPrefix(res.stderr, tt.want) {
				t.Errorf("loop start %v: exit %d, stderr %q; want exit %d, %q", tt.args, res.code, res.stderr, exitUsage, tt.want)
			}
			if p.exists(stateRel) {
				t.Errorf("loop start %v wrote a state file", tt.args)
			}
		})
	}
}

func TestLoopStartRefusesActiveLoop(t *testing.T) {
	t.Parallel()
	p := loopProject(t)
	p.write(lockRel, `{"owner":"session:s1","pid":1,"host":"h","acquired_at":"2026-03-09T11:50:00Z","heartbeat_at":"2026-03-09T11:59:00Z"}`)
	state := p.read(stateRel)
	res := p.run("loop", "start")
	if want := "orbit: an ORBIT loop is already active (iteration 5, started 2026-03-09T11:50:00Z); `orbit loop stop` it, or pass --force\n"; res.code != exitError || res.stderr != want {
		t.Errorf("loop start on an active loop: exit %d, stderr %q; want exit %d, %q", res.code, res.stderr, exitError, want)
	}
	if p.read(stateRel) != state || !p.exists(lockRel) {
		t.Errorf("refused start changed the state or the lock")
	}
	p.mustRun("loop", "start", "--force")
	// Iterations never restart: the loop it replaces was at 5.
	if o := p.orbitState(); o.Iteration != 6 || o.FirstIteration != 6 || !o.Active || o.StartedAt != "2026-03-09T12:00:00Z" {
		t.Errorf("after --force: %+v; want a fresh loop at iteration 6", o)
	}
	if p.exists(lockRel) {
		t.Errorf("after --force the old session's lock is still there")
	}
}

// TestLoopStartKeepsUnknownFields: fields orbit does not own keep their
// value and place; a stopped loop's stop fields and the hook's bookkeeping
// are dropped.
func TestLoopStartKeepsUnknownFields(t *testing.T) {
	t.Parallel()
	p := projectWith(t, "journal.jsonl")
	p.write(stateRel, `{
  "active": false,
  "iteration": 12,
  "forge_note": "written by /forge:ceo-loop",
  "max_iterations": 20,
  "time_limit_minutes": 30,
  "started_at": "$STARTED",
  "trust_level": "standard",
  "depth_escalation_counter": 2,
  "correct_decisions": 0,
  "incorrect_decisions": 0,
  "custom": {"b": [1, 2.50, "x"], "a": null},
  "stop_reason": "done",
  "stopped_at": "2026-03-09T10:00:00Z",
  "last_stop_digest": "abc"
}
`)
	p.mustRun("loop", "start")
	keys := objectKeys(t, []byte(p.read(stateRel)))
	want := []string{"active", "iteration", "forge_note", "max_iterations", "time_limit_minutes", "started_at", "trust_level",
		"depth_escalation_counter", "correct_decisions", "incorrect_decisions", "custom", "completion_sentinel", "budget_tokens", "tokens_used", "last_stop_decisions", "hook_event", "first_iteration"}
	if !slices.Equal(keys, want) {
		t.Errorf("state keys = %q; want %q", keys, want)
	}
	m := p.stateValues()
	if string(m["forge_note"]) != `"written by /forge:ceo-loop"` {
		t.Errorf("forge_note = %s", m["forge_note"])
	}
	var custom, wantCustom any
	json.Unmarshal(m["custom"], &custom)
	json.Unmarshal([]byte(`{"b": [1, 2.50, "x"], "a": null}`), &wantCustom)
	if !jsonEqual(custom, wantCustom) || !strings.Contains(p.read(stateRel), "2.50") {
		t.Errorf("custom = %s; want its value as written", m["custom"])
	}
	if string(m["started_at"]) != `"2026-03-09T12:00:00Z"` || string(m["depth_escalation_counter"]) != "0" || string(m["correct_decisions"]) != "2" {
		t.Errorf("seed fields not reset: started_at %s, depth_escalation_counter %s, correct_decisions %s", m["started_at"], m["depth_escalation_counter"], m["correct_decisions"])
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestLoopStop(t *testing.T) {
	t.Parallel()
	p := loopProject(t)
	// The hook takes the lock on its first stop.
	p.stop(testNow, stopInput{SessionID: "s1", LastAssistantMessage: "next"})
	if !p.exists(lockRel) {
		t.Fatal("the hook took no lock")
	}
	later := testNow.Add(5 * time.Minute)
	res := orbitIn(t, later, "", "", "--root", p.root, "loop", "stop")
	if res.code != exitOK {
		t.Fatalf("loop stop: exit %d, stderr %q", res.code, res.stderr)
	}
	wantOut := "[CEO-LOOP] Session Complete — ORBIT Loop Finished\n\n" +
		"Iterations: 6 of 20\n" +
		"Duration: 15 minutes\n"
	if !strings.HasPrefix(res.stdout, wantOut) {
		t.Errorf("stdout = %q; want it to start %q", res.stdout, wantOut)
	}
	o := p.orbitState()
	if o.Active || o.StopReason != "stopped" || o.StoppedAt != "2026-03-09T12:05:00Z" || o.Iteration != 6 {
		t.Errorf("state: %+v; want inactive, stopped at 12:05, iteration 6", o)
	}
	// orbit's part of the progress file holds the session summary (in 30
	// lines); the agent's notes of the fixture stay after it.
	prog := p.read(progressRel)
	for _, w := range []string{"\n## Session Complete — ORBIT Loop Finished\n- Iterations: 6 of 20 | Duration: 15 minutes | Stopped: stopped at 2026-03-09T12:05:00Z\n",
		orbitloop.ProgressEnd + "\n\n" + readHooksFixture(t, "progress.md")} {
		if !strings.Contains(prog, w) {
			t.Errorf("progress file lacks %q:\n%s", w, prog)
		}
	}
	if p.exists(lockRel) {
		t.Errorf("lock still there after loop stop")
	}
	// The next Stop lets the session end.
	r, _ := p.stop(later, stopInput{SessionID: "s1", StopHookActive: true, LastAssistantMessage: "more"})
	if r.stdout != "" {
		t.Errorf("hook after loop stop printed %q; want nothing", r.stdout)
	}
}

func TestLoopStopReasons(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		state      bool
		wantCode   int
		wantReason string
		wantStderr string
	}{
		{name: "reason", args: []string{"--reason", "needs-human-review"}, state: true, wantReason: "needs-human-review"},
		{name: "reason not in the vocabulary", args: []string{"--reason", "bored"}, state: true, wantCode: exitUsage,
			wantStderr: `orbit: --reason "bored" is not allowed (allowed: done, verifier-passed, verifier-failed, blocked, budget-exhausted, attempt-limit, needs-human-review, unsafe-to-continue, no-active-work, stopped)`},
		{name: "no loop", wantCode: exitError, wantStderr: "orbit: no ORBIT loop here: .claude/ceo-loop-state.json does not exist (`orbit loop start` starts one)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := projectWith(t, "journal.jsonl")
			if tt.state {
				p.write(stateRel, loopState(5, 20))
			}
			res := p.run(append([]string{"loop", "stop"}, tt.args...)...)
			if res.code != tt.wantCode {
				t.Fatalf("exit %d; want %d (stderr %q)", res.code, tt.wantCode, res.stderr)
			}
			if tt.wantStderr != "" && !strings.HasPrefix(res.stderr, tt.wantStderr+"\n") {
				t.Errorf("stderr = %q; want %q", res.stderr, tt.wantStderr)
			}
			if tt.wantReason != "" {
				if o := p.orbitState(); o.Active || o.StopReason != tt.wantReason {
					t.Errorf("state active %t, stop_reason %q; want false, %q", o.Active, o.StopReason, tt.wantReason)
				}
			}
			if tt.wantCode != exitOK && tt.state && p.read(stateRel) != loopState(5, 20) {
				t.Errorf("a refused stop changed the state:\n%s", p.read(stateRel))
			}
		})
	}
}

// TestLoopStopMalformedState: the hook's systemMessage for a malformed
// state file says "fix the state file or run `orbit loop stop`", and
// doctor's fix says "`orbit loop stop` then `orbit loop start`": both must
// get the user out.
func TestLoopStopMalformedState(t *testing.T) {
	t.Parallel()
	p := projectWith(t, "journal.jsonl")
	p.write(stateRel, "{\n  \"active\": true,\n  \"iteration\": 7,,\n}\n")
	_, out := p.stop(testNow, stopInput{SessionID: "s1"})
	if !strings.Contains(out.SystemMessage, "run `orbit loop stop`") {
		t.Fatalf("systemMessage = %q; want the advice this test follows", out.SystemMessage)
	}
	res := p.run("loop", "stop")
	if res.code != exitOK {
		t.Fatalf("orbit loop stop on a malformed state (as the hook advises): exit %d, stderr %q; want it to stop the loop", res.code, res.stderr)
	}
	if o := p.orbitState(); o.Active || o.StopReason != "stopped" {
		t.Errorf("state after loop stop: active %t, stop_reason %q; want false, stopped", o.Active, o.StopReason)
	}
	if r, _ := p.stop(testNow, stopInput{SessionID: "s1", StopHookActive: true}); r.stdout != "" {
		t.Errorf("hook after loop stop printed %q; want nothing", r.stdout)
	}
	p.write(stateRel, "{\n  \"active\": true,\n  \"iteration\": 7,,\n}\n")
	res = p.run("loop", "start", "--force")
	if res.code != exitOK {
		t.Fatalf("orbit loop start --force on a malformed state (as doctor advises): exit %d, stderr %q; want a fresh state", res.code, res.stderr)
	}
	// The broken state's iteration cannot be read; the journal's highest
	// is 3.
	if o := p.orbitState(); !o.Active || o.Iteration != 4 {
		t.Errorf("state after loop start --force: active %t, iteration %d; want true, 4", o.Active, o.Iteration)
	}
}

func TestLoopStatus(t *testing.T) {
	t.Parallel()
	t.Run("no loop", func(t *testing.T) {
		p := projectWith(t, "journal.jsonl")
		res := p.mustRun("loop", "status")
		if want := "no ORBIT loop: .claude/ceo-loop-state.json does not exist (`orbit loop start` starts one)\n"; res.stdout != want {
			t.Errorf("stdout = %q; want %q", res.stdout, want)
		}
	})
	t.Run("active with a lock", func(t *testing.T) {
		p := loopProject(t)
		p.write(stateRel, strings.Replace(loopState(5, 20), `"budget_tokens": 0,
  "tokens_used": 0`, `"budget_tokens": 1000,
  "tokens_used": 250`, 1))
		p.write(lockRel, `{"owner":"session:s1","pid":4242,"host":"box","acquired_at":"2026-03-09T11:50:00Z","heartbeat_at":"2026-03-09T11:59:30Z"}`)
		res := p.mustRun("loop", "status")
		want := "ORBIT loop: active\n" +
			"iteration: 5 of 20\n" +
			"time: started 2026-03-09T11:50:00Z, 10 of 30 minutes used\n" +
			"budget: 250 of 1000 tokens used\n" +
			"trust: standard (2 correct, 1 incorrect)\n" +
			"completion sentinel: <promise>ORBIT COMPLETE</promise>\n" +
			"lock: session:s1 (pid 4242 on box), heartbeat 30s ago\n"
		if res.stdout != want {
			t.Errorf("stdout =\n%s\nwant\n%s", res.stdout, want)
		}
	})
	t.Run("stale lock", func(t *testing.T) {
		p := loopProject(t)
		p.write(lockRel, `{"owner":"session:s1","pid":4242,"host":"box","acquired_at":"2026-03-09T11:50:00Z","heartbeat_at":"2026-03-09T11:50:00Z"}`)
		res := p.mustRun("loop", "status")
		if want := "lock: session:s1 (pid 4242 on box), heartbeat 10m0s ago — stale: another session may take it\n"; !strings.HasSuffix(res.stdout, want) {
			t.Errorf("stdout = %q; want it to end %q", res.stdout, want)
		}
	})
	t.Run("stopped", func(t *testing.T) {
		p := loopProject(t)
		p.mustRun("loop", "stop", "--reason", "done")
		res := p.mustRun("loop", "status")
		want := "ORBIT loop: stopped (done at 2026-03-09T12:00:00Z)\n" +
			"iteration: 5 of 20\n" +
			"time: started 2026-03-09T11:50:00Z, 10 of 30 minutes used\n" +
			"trust: standard (2 correct, 1 incorrect)\n" +
			"completion sentinel: <promise>ORBIT COMPLETE</promise>\n" +
			"lock: free (the next Stop hook takes it)\n"
		if res.stdout != want {
			t.Errorf("stdout =\n%s\nwant\n%s", res.stdout, want)
		}
	})
	t.Run("json", func(t *testing.T) {
		p := loopProject(t)
		p.write(lockRel, `{"owner":"session:s1","pid":4242,"host":"box","acquired_at":"2026-03-09T11:50:00Z","heartbeat_at":"2026-03-09T11:59:30Z"}`)
		res := p.mustRun("loop", "status", "--json")
		var got struct {
			HasState   bool   `json:"has_state"`
			Active     bool   `json:"active"`
			Iteration  int    `json:"iteration"`
			Max        int    `json:"max_iterations"`
			StartedAt  string `json:"started_at"`
			Sentinel   string `json:"completion_sentinel"`
			StopReason string `json:"stop_reason"`
			Lock       *struct {
				Owner string `json:"owner"`
				PID   int    `json:"pid"`
			} `json:"lock"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
			t.Fatalf("--json: %v\n%s", err, res.stdout)
		}
		if !got.HasState || !got.Active || got.Iteration != 5 || got.Max != 20 || got.StartedAt != "2026-03-09T11:50:00Z" ||
			got.Sentinel != "<promise>ORBIT COMPLETE</promise>" || got.Lock == nil || got.Lock.Owner != "session:s1" || got.Lock.PID != 4242 {
			t.Errorf("--json = %+v", got)
		}
		keys := objectKeys(t, []byte(res.stdout))
		want := []string{"has_state", "active", "iteration", "max_iterations", "time_limit_minutes", "started_at", "started_at_unreadable", "first_seen_at", "trust_level",
			"depth_escalation_counter", "correct_decisions", "incorrect_decisions", "completion_sentinel", "budget_tokens", "tokens_used", "first_iteration", "stop_reason", "stopped_at", "hook_event", "lock"}
		if !slices.Equal(keys, want) {
			t.Errorf("--json keys = %q; want %q", keys, want)
		}
		res = p.mustRun("loop", "status", "--json=active,iteration")
		if want := "{\n  \"active\": true,\n  \"iteration\": 5\n}\n"; res.stdout != want {
			t.Errorf("--json=active,iteration = %q; want %q", res.stdout, want)
		}
		if res := p.run("loop", "status", "--json=nope"); res.code != exitUsage {
			t.Errorf("--json=nope: exit %d; want %d", res.code, exitUsage)
		}
	})
}
