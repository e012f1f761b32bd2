package citadel_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/citadel"
	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/internal/looptest"
	"github.com/orbit-loop/orbit/loop"
)

// clock is a test clock that advances a millisecond a reading, so that
// every record of a test has its own time (and loop ids differ).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func newRunner(tb testing.TB) (*citadel.Runner, *loop.History, string) {
	tb.Helper()
	root := t2(tb)
	h := looptest.OpenHistory(tb, root)
	c := &clock{t: looptest.Now}
	return &citadel.Runner{Root: root, History: h, Now: c.Now}, h, root
}

func t2(tb testing.TB) string {
	root := filepath.Join(tb.TempDir(), "project")
	os.MkdirAll(filepath.Join(root, ".claude"), 0o755)
	return root
}

// record reads the Citadel record of a run.
func record(tb testing.TB, root string, res citadel.RunResult) (map[string]any, []map[string]any) {
	tb.Helper()
	m := looptest.ReadJSON(tb, filepath.Join(root, res.Path))
	var runs []map[string]any
	for _, r := range m["runs"].([]any) {
		runs = append(runs, r.(map[string]any))
	}
	return m, runs
}

// TestRunStopStates runs the foreground loop to each end it can reach.
func TestRunStopStates(t *testing.T) {
	tests := []struct {
		name           string
		opts           citadel.RunOptions
		status, reason string
		attempts, runs int
		lastRun        string // status of the last run
		exits          []float64
	}{
		{name: "verifier passes at once", opts: citadel.RunOptions{Action: "echo fixing", Verify: "true", MaxAttempts: 3},
			status: "verifier-passed", reason: "verifier-passed", attempts: 1, runs: 2, lastRun: "verifier-passed", exits: []float64{0, 0}},
		{name: "verifier passes on the second attempt", opts: citadel.RunOptions{Action: "touch flag", Verify: "test -f flag && test -f flag2 || { touch flag2; false; }", MaxAttempts: 3},
			status: "verifier-passed", attempts: 2, runs: 4, lastRun: "verifier-passed", exits: []float64{0, 1, 0, 0}},
		{name: "attempts run out", opts: citadel.RunOptions{Action: "true", Verify: "echo not yet; exit 1", MaxAttempts: 2, Backoff: 10 * time.Millisecond},
			status: "attempt-limit", reason: "attempt-limit", attempts: 2, runs: 4, lastRun: "attempt-limit", exits: []float64{0, 1, 0, 1}},
		{name: "action fails", opts: citadel.RunOptions{Action: "echo broken >&2; exit 4", Verify: "true", MaxAttempts: 3},
			status: "blocked", reason: "action failed (exit 4)", attempts: 1, runs: 1, lastRun: "blocked", exits: []float64{4}},
		{name: "verifier cannot run", opts: citadel.RunOptions{Action: "true", Verify: "no-such-verifier-xyz --check", MaxAttempts: 3},
			status: "verifier-failed", reason: "verifier could not run (exit 127)", attempts: 1, runs: 2, lastRun: "verifier-failed", exits: []float64{0, 127}},
		{name: "verifier alone", opts: citadel.RunOptions{Verify: "true", MaxAttempts: 1},
			status: "verifier-passed", attempts: 1, runs: 1, lastRun: "verifier-passed", exits: []float64{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, h, root := newRunner(t)
			tt.opts.Write = true
			res, err := r.Run(context.Background(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.status || res.Attempts != tt.attempts || len(res.Runs) != tt.runs {
				t.Fatalf("Run = %s after %d attempts, %d runs; want %s, %d, %d", res.Status, res.Attempts, len(res.Runs), tt.status, tt.attempts, tt.runs)
			}
			if tt.reason != "" && res.StopReason != tt.reason {
				t.Errorf("stop reason %q; want %q", res.StopReason, tt.reason)
			}
			m, runs := record(t, root, res)
			// The word in stopReason (seed 001); why in words, a note.
			if m["status"] != tt.status || m["stopReason"] != tt.status || m["stoppedAt"] == nil {
				t.Errorf("record: status %v, stopReason %v, stoppedAt %v", m["status"], m["stopReason"], m["stoppedAt"])
			}
			if res.StopReason != tt.status && lastNote(m) != res.StopReason {
				t.Errorf("record notes %v; want the reason %q as the last note", m["notes"], res.StopReason)
			}
			if len(runs) != tt.runs || runs[len(runs)-1]["status"] != tt.lastRun {
				t.Errorf("record runs %v", runs)
			}
			for i, want := range tt.exits {
				if runs[i]["exitCode"] != want {
					t.Errorf("run %d exit %v; want %v", i, runs[i]["exitCode"], want)
				}
				if runs[i]["startedAt"] == "" || runs[i]["completedAt"] == "" {
					t.Errorf("run %d has no times", i)
				}
			}
			// The review artifact is where the record says.
			art, err := os.ReadFile(filepath.Join(root, m["reviewArtifact"].(string)))
			if err != nil || !bytes.Contains(art, []byte("- Status: **"+tt.status+"**")) {
				t.Errorf("review artifact %s: %v\n%s", m["reviewArtifact"], err, art)
			}
			// Each run is an event, between the run and the stop.
			kinds := looptest.KindsOf(t, h, "citadel", res.ID)
			if len(kinds) != tt.runs+2 || kinds[0] != "run:running" || kinds[len(kinds)-1] != "stop:"+tt.status {
				t.Errorf("events %q", kinds)
			}
		})
	}
}

func TestRunEvidence(t *testing.T) {
	r, h, root := newRunner(t)
	res, err := r.Run(context.Background(), citadel.RunOptions{Action: "seq 1 100", Verify: "echo checked; echo 'a <b> & c' >&2", MaxAttempts: 1, Write: true, TailLines: 5})
	if err != nil {
		t.Fatal(err)
	}
	_, runs := record(t, root, res)
	ev := runs[0]["evidence"].([]any)[0].(map[string]any)
	if ev["kind"] != "output-tail" || ev["text"] != "96\n97\n98\n99\n100" || ev["bytes"] != float64(292) {
		t.Errorf("action evidence %v", ev)
	}
	raw, _ := os.ReadFile(filepath.Join(root, res.Path))
	if !bytes.Contains(raw, []byte(`a <b> & c"`)) || bytes.Contains(raw, []byte(`\u003c`)) {
		t.Errorf("evidence is not written as Node writes JSON (no HTML escapes):\n%s", raw)
	}
	hist, _ := h.Of(context.Background(), "citadel", res.ID)
	if hist[1].Kind != "attempt" || !strings.Contains(hist[1].Detail, "attempt 1 action") {
		t.Errorf("attempt event %+v", hist[1])
	}
}

func TestRunWithoutWrite(t *testing.T) {
	r, _, root := newRunner(t)
	res, err := r.Run(context.Background(), citadel.RunOptions{Action: "true", Verify: "false", MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "attempt-limit" || res.Path != "" || len(res.Runs) != 4 {
		t.Errorf("Run = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(root, citadel.LoopsDir)); !os.IsNotExist(err) {
		t.Errorf("a run without --write wrote %s", citadel.LoopsDir)
	}
}

// TestRunInterrupted: Ctrl-C (ctx cancelled) kills the running command,
// and the loop ends stopped with its record saved.
func TestRunInterrupted(t *testing.T) {
	r, _, root := newRunner(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // Ctrl-C while the action runs
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(root, "started")); err == nil {
				break
			}
		}
		cancel()
	}()
	start := time.Now()
	res, err := r.Run(ctx, citadel.RunOptions{Action: "touch started; sleep 30", Verify: "true", MaxAttempts: 3, Write: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the interrupted command ran on for %s", d)
	}
	m, runs := record(t, root, res)
	if res.Status != "stopped" || m["status"] != "stopped" || m["stopReason"] != "stopped" || lastNote(m) != "interrupted" || len(runs) != 1 || runs[0]["status"] != "stopped" {
		t.Errorf("interrupted: result %s, record %v %v, runs %v", res.Status, m["status"], m["stopReason"], runs)
	}
}

// TestRunStoppedByAnotherProcess: `orbit loop stop` on the record while
// the loop runs kills the command; the operator's stop is kept.
func TestRunStoppedByAnotherProcess(t *testing.T) {
	r, h, root := newRunner(t)
	c := &frameworks.Control{Index: looptest.Index(t, h), Now: r.Now}
	done := make(chan citadel.RunResult)
	go func() {
		res, err := r.Run(context.Background(), citadel.RunOptions{Action: "touch started; sleep 30", Verify: "true", MaxAttempts: 3, Write: true, Poll: 20 * time.Millisecond})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	v := waitForRunning(t, root)
	waitForFile(t, filepath.Join(root, "started")) // the stop lands while the action runs
	if _, err := c.Stop(context.Background(), v, "unsafe-to-continue", "touches prod"); err != nil {
		t.Fatal(err)
	}
	var res citadel.RunResult
	select {
	case res = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the loop did not stop")
	}
	m, runs := record(t, root, res)
	if res.Status != "unsafe-to-continue" || !res.External || m["status"] != "unsafe-to-continue" || m["stopReason"] != "unsafe-to-continue" || lastNote(m) != "touches prod" {
		t.Errorf("result %s (external %v), record %v / %v", res.Status, res.External, m["status"], m["stopReason"])
	}
	if len(runs) != 1 || runs[0]["status"] != "unsafe-to-continue" {
		t.Errorf("runs %v", runs)
	}
	if kinds := looptest.KindsOf(t, h, "citadel", res.ID); kinds[len(kinds)-1] != "attempt:unsafe-to-continue" || countOf(kinds, "stop:unsafe-to-continue") != 1 {
		t.Errorf("events %q; want the operator's stop once", kinds)
	}
}

func waitForFile(tb testing.TB, path string) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	tb.Fatalf("%s never appeared", path)
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// waitForRunning waits until the project holds a running Citadel record.
func waitForRunning(tb testing.TB, root string) loop.View {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, v := range frameworks.ScanProject(root, looptest.Now).Loops {
			if v.Framework == loop.Citadel && v.Status == "running" {
				return v
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	tb.Fatal("no running loop")
	return loop.View{}
}

// TestRunConcurrentStopNoLostUpdate races a stop against a runner that
// appends runs as fast as it can: whenever the stop lands, the record ends
// with the stop's status and reason, and with every run the runner made.
func TestRunConcurrentStopNoLostUpdate(t *testing.T) {
	for trial := range 6 {
		r, h, root := newRunner(t)
		c := &frameworks.Control{Index: looptest.Index(t, h), Now: r.Now}
		done := make(chan citadel.RunResult)
		go func() {
			res, err := r.Run(context.Background(), citadel.RunOptions{Action: "true", Verify: "false", MaxAttempts: 1000, Write: true, Poll: 5 * time.Millisecond})
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		v := waitForRunning(t, root)
		time.Sleep(time.Duration(trial*15) * time.Millisecond)
		if _, err := c.Stop(context.Background(), v, "stopped", "race "+v.ID); err != nil {
			t.Fatalf("trial %d: Stop: %v", trial, err)
		}
		res := <-done
		m, runs := record(t, root, res)
		if m["status"] != "stopped" || m["stopReason"] != "stopped" || lastNote(m) != "race "+v.ID || res.Status != "stopped" {
			t.Errorf("trial %d: record %v / %v, result %s; want the stop kept", trial, m["status"], m["stopReason"], res.Status)
		}
		if len(runs) != len(res.Runs) {
			t.Errorf("trial %d: record holds %d runs; the runner made %d (an update was lost)", trial, len(runs), len(res.Runs))
		}
		kinds := looptest.KindsOf(t, h, "citadel", res.ID)
		if got := len(kinds) - 2; got != len(res.Runs) || countOf(kinds, "stop:stopped") != 1 {
			t.Errorf("trial %d: %d attempt events for %d runs, %d stops", trial, got, len(res.Runs), countOf(kinds, "stop:stopped"))
		}
	}
}

// TestRunPausedWaits: a pause written by another process makes the loop
// wait before its next step, until resumed.
func TestRunPausedWaits(t *testing.T) {
	r, h, root := newRunner(t)
	c := &frameworks.Control{Index: looptest.Index(t, h), Now: r.Now}
	flag := filepath.Join(root, "go.flag")
	done := make(chan citadel.RunResult)
	go func() {
		res, _ := r.Run(context.Background(), citadel.RunOptions{Action: "sleep 0.3", Verify: "test -f go.flag", MaxAttempts: 5, Write: true, Poll: 10 * time.Millisecond})
		done <- res
	}()
	v := waitForRunning(t, root)
	if _, err := c.Pause(context.Background(), v, ""); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	select {
	case res := <-done:
		t.Fatalf("the paused loop ended: %+v", res)
	default:
	}
	os.WriteFile(flag, nil, 0o644)
	if _, err := c.Resume(context.Background(), looptest.ViewOf(t, root, v.Key()), ""); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.Status != "verifier-passed" || res.Attempts != 1 {
		t.Errorf("after resume: %s after %d attempts; want verifier-passed after 1 (the pause held the verifier)", res.Status, res.Attempts)
	}
}

// TestRunPlannedRecord runs a record planned from a template.
func TestRunPlannedRecord(t *testing.T) {
	r, _, root := newRunner(t)
	c := citadel.Templates()[3].Plan(citadel.PlanOptions{ID: "docs-drift"}, looptest.Now)
	if _, err := citadel.CreateContract(context.Background(), root, c); err != nil {
		t.Fatal(err)
	}
	// Without Yes, the record's commands are shown and nothing runs: the
	// record is left as it was.
	before, err := os.ReadFile(filepath.Join(root, ".planning/loops/docs-drift.json"))
	if err != nil {
		t.Fatal(err)
	}
	var shown bytes.Buffer
	if _, err := r.Run(context.Background(), citadel.RunOptions{Loop: "docs-drift", Progress: &shown}); err == nil || !strings.Contains(err.Error(), "run again with --yes") {
		t.Errorf("running the planned record without Yes: %v; want a refusal asking for --yes", err)
	}
	if !strings.Contains(shown.String(), "  verifier: npm run docs:check\n") || !strings.Contains(shown.String(), "(from .planning/loops/docs-drift.json)") {
		t.Errorf("commands shown:\n%s\nwant the record's verifier, named as from the record", shown.String())
	}
	if after, _ := os.ReadFile(filepath.Join(root, ".planning/loops/docs-drift.json")); !bytes.Equal(before, after) {
		t.Errorf("the record changed though nothing ran:\n%s", after)
	}
	// npm run docs:check is the template's verifier: it runs and fails
	// here (no package.json; or no npm), which ends the one attempt.
	res, err := r.Run(context.Background(), citadel.RunOptions{Loop: "docs-drift", Yes: true})
	if err != nil {
		t.Fatalf("running the planned record: %v", err)
	}
	if res.Status != "attempt-limit" || res.Attempts != 1 || len(res.Runs) != 1 || res.Runs[0].ExitCode == nil || *res.Runs[0].ExitCode == 0 {
		t.Errorf("run of the planned record: status %q after %d attempts, runs %+v; want attempt-limit after 1, the verifier exiting non-zero", res.Status, res.Attempts, res.Runs)
	}
	m, runs := record(t, root, citadel.RunResult{Path: ".planning/loops/docs-drift.json"})
	if len(runs) != 1 || runs[0]["verifier"] != "npm run docs:check" || m["template"] != "docs-drift-check" || m["reviewArtifact"] != ".planning/loops/docs-drift.md" {
		t.Errorf("record after run: %v", m)
	}
	if _, err := r.Run(context.Background(), citadel.RunOptions{Loop: "docs-drift", Verify: "true"}); err == nil || !strings.Contains(err.Error(), "only a planned, waiting or paused loop can be run") {
		t.Errorf("running a stopped record: %v", err)
	}
	if _, err := r.Run(context.Background(), citadel.RunOptions{Loop: "nope", Verify: "true"}); err == nil {
		t.Error("running a missing record: nil error")
	}
}

// lastNote is the text of a record's last note.
func lastNote(m map[string]any) string {
	notes, _ := m["notes"].([]any)
	if len(notes) == 0 {
		return ""
	}
	n, _ := notes[len(notes)-1].(map[string]any)
	s, _ := n["text"].(string)
	return s
}

// planned writes a planned record whose budget and retry are edited by
// edit (as a person would, in the file).
func planned(tb testing.TB, root, id string, edit func(*loop.State) error) {
	tb.Helper()
	c := citadel.NewContract(citadel.ContractOptions{ID: id, Type: "foreground-loop", Command: "true", VerifierCommand: "false", MaxAttempts: 5}, looptest.Now)
	path, err := citadel.CreateContract(context.Background(), root, c)
	if err != nil {
		tb.Fatal(err)
	}
	if err := loop.Edit(context.Background(), root, path, edit); err != nil {
		tb.Fatal(err)
	}
}

// TestRunLoopBackoff: under --loop the record's own retry.backoff is
// waited between attempts (issue 18); --backoff overrides it; a backoff
// that is not a duration is refused naming the field.
func TestRunLoopBackoff(t *testing.T) {
	r, _, root := newRunner(t)
	planned(t, root, "slow", func(st *loop.State) error {
		if err := st.SetAt([]string{"retry", "backoff"}, "150ms"); err != nil {
			return err
		}
		return st.SetAt([]string{"budget", "maxAttempts"}, 2)
	})
	var progress bytes.Buffer
	res, err := r.Run(context.Background(), citadel.RunOptions{Loop: "slow", Progress: &progress, Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "attempt-limit" || res.Attempts != 2 || !strings.Contains(progress.String(), "backing off 150ms\n") {
		t.Errorf("run: %s after %d attempts; progress:\n%s\nwant the record's backoff between the attempts", res.Status, res.Attempts, progress.String())
	}
	planned(t, root, "bad-backoff", func(st *loop.State) error { return st.SetAt([]string{"retry", "backoff"}, "soon") })
	if _, err := r.Run(context.Background(), citadel.RunOptions{Loop: "bad-backoff", Yes: true}); err == nil || !strings.Contains(err.Error(), `retry.backoff: "soon": want a duration`) {
		t.Errorf("a backoff that is not a duration: %v", err)
	}
	for s, want := range map[string]time.Duration{"2s": 2 * time.Second, "500": 500 * time.Millisecond, "1m30s": 90 * time.Second, "0": 0} {
		if d, err := citadel.ParseBackoff(s); err != nil || d != want {
			t.Errorf("ParseBackoff(%q) = %v, %v; want %v", s, d, err, want)
		}
	}
}

// TestRunLoopBudget: with budget.maxSpend and costPerRun, the loop stops as
// budget-exhausted before the attempt that would pass the limit, counting
// the attempts the record already holds.
func TestRunLoopBudget(t *testing.T) {
	r, _, root := newRunner(t)
	planned(t, root, "spend", func(st *loop.State) error {
		if err := st.SetAt([]string{"budget", "maxSpend"}, 2.5); err != nil {
			return err
		}
		return st.SetAt([]string{"budget", "costPerRun"}, 1)
	})
	res, err := r.Run(context.Background(), citadel.RunOptions{Loop: "spend", Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "budget-exhausted" || res.Attempts != 2 || res.Spent == nil || *res.Spent != 2 {
		t.Errorf("run: %s after %d attempts, spent %v; want budget-exhausted after 2 (a third would spend 3 > 2.5)", res.Status, res.Attempts, res.Spent)
	}
	if !strings.Contains(res.StopReason, "spent 2 of 2.5: the next run (1) would pass budget.maxSpend") {
		t.Errorf("stop reason %q", res.StopReason)
	}
	m, runs := record(t, root, res)
	if m["status"] != "budget-exhausted" || m["stopReason"] != "budget-exhausted" || len(runs) != 4 {
		t.Errorf("record: %v / %v, %d runs", m["status"], m["stopReason"], len(runs))
	}
	// Run again (paused, then resumed by hand): the two attempts spent
	// count, so no attempt starts.
	if err := loop.Edit(context.Background(), root, filepath.Join(root, res.Path), func(st *loop.State) error {
		if err := st.Set("status", "paused"); err != nil {
			return err
		}
		st.Delete("stoppedAt")
		st.Delete("stopReason")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	res, err = r.Run(context.Background(), citadel.RunOptions{Loop: "spend", Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "budget-exhausted" || res.Attempts != 0 || len(res.Runs) != 0 {
		t.Errorf("second run: %s after %d attempts; want budget-exhausted before any", res.Status, res.Attempts)
	}
}
