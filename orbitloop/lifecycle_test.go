package orbitloop_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/internal/looptest"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/project"
)

// newIndex is an empty project (with .claude/) and its index.
func newIndex(t *testing.T) *journal.Index {
	t.Helper()
	root := filepath.Join(t.TempDir(), "project")
	if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	return looptest.Index(t, looptest.OpenHistory(t, root))
}

func read(t *testing.T, ix *journal.Index, rel string) string {
	t.Helper()
	b, err := os.ReadFile(ix.Project.Path(rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// kinds are the ORBIT loop's indexed events, as event:status.
func kinds(t *testing.T, ix *journal.Index) []string {
	t.Helper()
	return looptest.KindsOf(t, &loop.History{Root: ix.Project.Root, Store: ix.Store}, loop.ORBIT, orbitloop.ID)
}

func TestStartThenStop(t *testing.T) {
	ctx := context.Background()
	ix := newIndex(t)
	looptest.Write(t, ix.Project.Path(orbitloop.LockFile), `{"owner":"session:old"}`)
	if _, err := orbitloop.Start(ctx, ix, orbitloop.StartOptions{MaxIterations: 5}, looptest.Now); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if _, err := os.Stat(ix.Project.Path(orbitloop.LockFile)); !os.IsNotExist(err) {
		t.Errorf("the session lock survived a start: %v", err)
	}
	if _, err := orbitloop.Start(ctx, ix, orbitloop.StartOptions{MaxIterations: 5}, looptest.Now); err == nil || !strings.Contains(err.Error(), "already active") {
		t.Errorf("second Start = %v; want an error: already active", err)
	}
	res, err := orbitloop.Stop(ctx, ix, orbitloop.StopOptions{Reason: "blocked", Detail: "waiting on a key"}, looptest.Now)
	if err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if res.Before.Status != "running" || res.Event.Status != "blocked" || res.Event.Detail != "waiting on a key" || res.AlreadyStopped {
		t.Errorf("Stop = before %s, event %s %q, already %t; want running, blocked \"waiting on a key\", false",
			res.Before.Status, res.Event.Status, res.Event.Detail, res.AlreadyStopped)
	}
	// adopt: orbit met the loop's counters (nothing to adopt).
	if got := strings.Join(kinds(t, ix), " "); got != "adopt: start:running stop:blocked" {
		t.Errorf("history %q; want adopt: start:running stop:blocked", got)
	}
	// The stop says what it wrote, as every framework's control does, and
	// the journal keeps it with the event.
	wrote := []string{".claude/ceo-loop-state.json: correct_decisions, incorrect_decisions, trust_level, active, stop_reason, stopped_at",
		".claude/ceo-loop-progress.md: session summary"}
	if strings.Join(res.Event.Wrote, "; ") != strings.Join(wrote, "; ") {
		t.Errorf("Stop wrote %q; want %q", res.Event.Wrote, wrote)
	}
	if got := read(t, ix, loop.EventsFile); !strings.Contains(got, `"wrote":[".claude/ceo-loop-state.json: correct_decisions`) {
		t.Errorf("the journal's stop event does not say what was written:\n%s", got)
	}
	if p := read(t, ix, project.ProgressFile); !strings.Contains(p, "## Session Complete") {
		t.Errorf("progress file without the session summary:\n%s", p)
	}
}

// TestStopTwiceKeepsTheFirstReason: the first stop's reason and time are
// the record of why the loop ended.
func TestStopTwiceKeepsTheFirstReason(t *testing.T) {
	ctx := context.Background()
	ix := newIndex(t)
	if _, err := orbitloop.Start(ctx, ix, orbitloop.StartOptions{MaxIterations: 5}, looptest.Now); err != nil {
		t.Fatal(err)
	}
	if _, err := orbitloop.Stop(ctx, ix, orbitloop.StopOptions{Reason: "done"}, looptest.Now); err != nil {
		t.Fatal(err)
	}
	state, progress := read(t, ix, project.StateFile), read(t, ix, project.ProgressFile)
	looptest.Write(t, ix.Project.Path(orbitloop.LockFile), `{"owner":"session:late"}`)
	res, err := orbitloop.Stop(ctx, ix, orbitloop.StopOptions{Reason: "blocked"}, looptest.Now.Add(time.Hour))
	if err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if !res.AlreadyStopped || res.PreviousReason != "done" {
		t.Errorf("second Stop: already %t, previous %q; want true, done", res.AlreadyStopped, res.PreviousReason)
	}
	if read(t, ix, project.StateFile) != state || read(t, ix, project.ProgressFile) != progress {
		t.Error("a second stop rewrote the state or progress file")
	}
	if got := strings.Join(kinds(t, ix), " "); got != "adopt: start:running stop:done" {
		t.Errorf("history %q; want adopt: start:running stop:done (no second stop)", got)
	}
	if _, err := os.Stat(ix.Project.Path(orbitloop.LockFile)); !os.IsNotExist(err) {
		t.Errorf("a second stop left the session lock: %v", err)
	}
}

// TestStopBrokenFiles: a state file that is not JSON is saved aside and the
// loop stopped; a session lock nobody can read is freed.
func TestStopBrokenFiles(t *testing.T) {
	ctx := context.Background()
	ix := newIndex(t)
	looptest.Write(t, ix.Project.Path(project.StateFile), "{\"active\": tru")
	looptest.Write(t, ix.Project.Path(orbitloop.LockFile), "not json")
	res, err := orbitloop.Stop(ctx, ix, orbitloop.StopOptions{Reason: "stopped"}, looptest.Now)
	if err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if res.ReadErr == nil || res.Recovered == "" {
		t.Fatalf("Stop: read error %v, recovered %q; want both", res.ReadErr, res.Recovered)
	}
	if len(res.Event.Wrote) == 0 || !strings.HasPrefix(res.Event.Wrote[0], "saved the state file that was not JSON as .claude/ceo-loop-state.json.malformed-") {
		t.Errorf("Stop wrote %q; want the saved state first", res.Event.Wrote)
	}
	if b, err := os.ReadFile(res.Recovered); err != nil || string(b) != "{\"active\": tru" {
		t.Errorf("saved state %q, %v; want the broken bytes", b, err)
	}
	o := looptest.ReadJSON(t, ix.Project.Path(project.StateFile))
	if o["active"] != false || o["stop_reason"] != "stopped" {
		t.Errorf("state after stop: %v", o)
	}
	if _, err := os.Stat(ix.Project.Path(orbitloop.LockFile)); !os.IsNotExist(err) {
		t.Errorf("an unreadable session lock survived the stop: %v", err)
	}
	if got := strings.Join(kinds(t, ix), " "); got != "adopt: stop:stopped" {
		t.Errorf("history %q; want adopt: stop:stopped", got)
	}
}

func TestStopWithoutLoop(t *testing.T) {
	ix := newIndex(t)
	_, err := orbitloop.Stop(context.Background(), ix, orbitloop.StopOptions{Reason: "stopped"}, looptest.Now)
	if err == nil || !strings.Contains(err.Error(), "no ORBIT loop here") {
		t.Errorf("Stop without a state file = %v; want: no ORBIT loop here", err)
	}
	if _, err := orbitloop.Stop(context.Background(), ix, orbitloop.StopOptions{Reason: "finished"}, looptest.Now); err == nil || !strings.Contains(err.Error(), `"finished" is not allowed`) {
		t.Errorf("Stop with a word outside the vocabulary = %v; want: not allowed", err)
	}
}
