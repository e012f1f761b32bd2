package hook_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/hook"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/project"
)

// The tests of issue 15 at the Stop hook: each fails on the hook as it was
// before (a loop that adopts orbit loses nothing and never dies silently).

// TestStopTellsRejectedLines (point 5): a line the agent appended with its
// Write tool that orbit rejects appears in the re-fed prompt and the
// systemMessage with file:line and the reason; once told, not again.
func TestStopTellsRejectedLines(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.write(project.StateFile, state(5, 20))
	f, err := os.OpenFile(fx.path(project.DecisionsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Line 7: a category the seed does not allow; line 8: fine.
	fmt.Fprintln(f, `{"id":"iter-5-1","iteration":5,"ts":"2026-03-09T11:58:00Z","tier":"auto_approve","depth":"trivial","category":"qualty","input":"Pin eslint","decision":"APPROVED","reason":"r","next_action":"n","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"}}`)
	fmt.Fprintln(f, `{"id":"iter-5-2","iteration":5,"ts":"2026-03-09T11:59:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"Pin prettier","decision":"APPROVED","reason":"r","next_action":"n","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"}}`)
	f.Close()

	r := fx.stop(testNow, hook.Input{SessionID: "s1", LastAssistantMessage: "iteration 5 done"})
	want := project.DecisionsFile + `:7: category "qualty" is not allowed`
	if r.Output.Decision != "block" || !strings.Contains(r.Output.Reason, want) || !strings.Contains(r.Output.Reason, "Rejected since the last iteration: 1 line") {
		t.Errorf("reason lacks the rejected line %q:\n%s", want, r.Output.Reason)
	}
	if !strings.Contains(r.Output.SystemMessage, "1 line rejected since the last iteration") || !strings.Contains(r.Output.SystemMessage, want) {
		t.Errorf("systemMessage %q; want the rejected line", r.Output.SystemMessage)
	}
	if !strings.Contains(r.Log, "rejected=1") {
		t.Errorf("log %q; want rejected=1", r.Log)
	}
	// The next Stop does not tell it again.
	r = fx.stop(testNow.Add(time.Minute), hook.Input{SessionID: "s1", LastAssistantMessage: "iteration 6 done"})
	if strings.Contains(r.Output.Reason, "qualty") || strings.Contains(r.Output.SystemMessage, "qualty") {
		t.Errorf("the rejection was told twice:\n%s\n%s", r.Output.Reason, r.Output.SystemMessage)
	}
}

// TestStopBadQueueItem (point 8): one queue item with category "qualty"
// does not stop the loop being driven: the Stop blocks with the next
// iteration, names the item (file, item, id, field, allowed values), and
// does not take a queue of bad items for an empty one.
func TestStopBadQueueItem(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.write(project.PendingFile, `[{"id":"req-9","title":"Pin eslint","category":"qualty","impact":"low","reversible":true}]`)
	// Nothing recorded in the iteration, and no valid item: it would be
	// torn down as no-active-work if the bad item counted for nothing.
	r := fx.stop(testNow, hook.Input{SessionID: "s1", LastAssistantMessage: "x"})
	if r.Output.Decision != "block" {
		t.Fatalf("output = %+v; want the loop driven on", r.Output)
	}
	for _, w := range []string{project.PendingFile, "item 1 (req-9)", "category", `"qualty"`, "allowed: feature, architecture, quality, scope, deploy", "left in the queue untouched"} {
		if !strings.Contains(r.Output.Reason, w) {
			t.Errorf("reason lacks %q:\n%s", w, r.Output.Reason)
		}
	}
	if !fx.orbit().Active {
		t.Error("the loop was stopped")
	}
	// A queue file that is not JSON: driven on too, the prompt says why.
	fx.write(project.PendingFile, `[{"id":`)
	r = fx.stop(testNow.Add(time.Minute), hook.Input{SessionID: "s1", LastAssistantMessage: "y"})
	if r.Output.Decision != "block" || !strings.Contains(r.Output.Reason, "cannot be read") || !strings.Contains(r.Output.SystemMessage, project.PendingFile) {
		t.Errorf("unreadable queue: %+v; want the loop driven, the file named", r.Output)
	}
}

// TestStopPromptAsOfThisStop (point 9): the prompt never quotes a stale
// progress file. orbit's part is rewritten at every Stop (the queue as of
// now), and the prompt quotes only the agent's own notes.
func TestStopPromptAsOfThisStop(t *testing.T) {
	t.Parallel()
	fx := newFixture(t) // one request queued
	old := orbitloop.ProgressBegin + "\n# CEO-LOOP Progress — Iteration 4 of 20\n\n## Queue Status\n- Remaining pending decisions: 0\n" + orbitloop.ProgressEnd + "\n\n## Notes\n- iter-4: all CONFIRMED\n"
	fx.write(project.ProgressFile, old)
	r := fx.stop(testNow, hook.Input{SessionID: "s1", LastAssistantMessage: "x"})
	if strings.Contains(r.Output.Reason, "Remaining pending decisions: 0") {
		t.Errorf("the prompt quotes the old progress file beside the queue:\n%s", r.Output.Reason)
	}
	if !strings.Contains(r.Output.Reason, "Queue: 1 pending") || !strings.Contains(r.Output.Reason, "- iter-4: all CONFIRMED") {
		t.Errorf("reason lacks the queue or the agent's notes:\n%s", r.Output.Reason)
	}
	prog := fx.read(project.ProgressFile)
	if !strings.Contains(prog, "- Remaining pending decisions: 1\n") || !strings.HasSuffix(prog, orbitloop.ProgressEnd+"\n\n## Notes\n- iter-4: all CONFIRMED\n") {
		t.Errorf("progress file after the Stop:\n%s\nwant orbit's part as of now, the notes kept", prog)
	}
}

// TestStopDepthEscalation (point 10): depth_escalation_counter is advanced
// from the journal at every Stop, and its rule applied: three iterations in
// a row with trivial decisions only and an empty queue ask for a proactive
// governance scan once, before the loop is marked done.
func TestStopDepthEscalation(t *testing.T) {
	t.Parallel()
	fx := newFixture(t) // the journal's last deep decision is in iteration 3
	fx.write(project.PendingFile, "[]")
	fx.write(project.StateFile, state(6, 20, `"first_iteration": 1`))
	// Iteration 6 ends with nothing recorded: 4, 5, 6 were trivial-only.
	r := fx.stop(testNow, hook.Input{SessionID: "s1", LastAssistantMessage: "nothing to do"})
	if r.Output.Decision != "block" || !strings.Contains(r.Output.Reason, "Depth escalation counter: 3") || !strings.Contains(r.Output.Reason, "proactive governance scan") {
		t.Fatalf("output = %+v; want the proactive scan asked for", r.Output)
	}
	if o := fx.orbit(); o.EscalationCount != 3 || o.Iteration != 7 || !o.Active {
		t.Errorf("state: counter %d, iteration %d, active %t; want 3, 7, true", o.EscalationCount, o.Iteration, o.Active)
	}
	// The scan found nothing: now the loop is done.
	r = fx.stop(testNow.Add(time.Minute), hook.Input{SessionID: "s1", LastAssistantMessage: "scan found nothing"})
	if r.Output.Decision == "block" || !strings.Contains(r.Output.SystemMessage, "no-active-work") {
		t.Errorf("output = %+v; want the loop torn down (no-active-work)", r.Output)
	}
}

// TestStopDemotedAlert (point 10): seed 000 shows its TRUST CALIBRATION
// ALERT whenever trust is demoted, not only under the alert rule.
func TestStopDemotedAlert(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	var j, retro strings.Builder
	// 20 scored, 15 correct: 75% over the last 20 (demoted); the last 10
	// at 7/10, above the alert rule's 60%.
	outcomes := "CCCCCCCCII" + "CICCICCCIC"
	for i, c := range outcomes {
		fmt.Fprintf(&j, `{"id":"d-%d","iteration":1,"ts":"2026-03-09T10:%02d:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"D %d","decision":"APPROVED","reason":"r","next_action":"n","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"}}`+"\n", i, i, i)
		o := "CORRECT"
		if c == 'I' {
			o = "INCORRECT"
		}
		fmt.Fprintf(&retro, `{"ts":"2026-03-09T11:%02d:00Z","decision_id":"d-%d","outcome":%q}`+"\n", i, i, o)
	}
	fx.write(project.DecisionsFile, j.String())
	fx.write(project.RetroFile, retro.String())
	fx.write(project.StateFile, state(2, 20, `"correct_decisions": 15`, `"incorrect_decisions": 5`))
	r := fx.stop(testNow, hook.Input{SessionID: "s1", LastAssistantMessage: "x"})
	if !strings.Contains(r.Output.Reason, "⚠️ TRUST CALIBRATION ALERT: Decision accuracy at 75% (last 20 decisions).") || !strings.Contains(r.Output.Reason, "trust level: demoted") {
		t.Errorf("reason lacks the demoted alert:\n%s", r.Output.Reason)
	}
}

// TestStopStartedAtPlaceholder (point 6): the upstream initial state's
// "$STARTED" is taken as orbit's first sight (recorded), the prompt warns,
// and the time limit still applies from there.
func TestStopStartedAtPlaceholder(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.write(project.StateFile, strings.Replace(state(5, 20), `"2026-03-09T11:50:00Z"`, `"$STARTED"`, 1))
	r := fx.stop(testNow, hook.Input{SessionID: "s1", LastAssistantMessage: "x"})
	if r.Output.Decision != "block" || !strings.Contains(r.Output.Reason, `started_at "$STARTED"`) || !strings.Contains(r.Output.Reason, "Time: 0 of 30 minutes used.") {
		t.Errorf("output = %+v; want the warning and the time limit from now", r.Output)
	}
	if o := fx.orbit(); o.FirstSeenAt != testNow.Format(time.RFC3339) || o.StartedAt != "$STARTED" {
		t.Errorf("state: first_seen_at %q, started_at %q; want %s and the agent's value kept", o.FirstSeenAt, o.StartedAt, testNow.Format(time.RFC3339))
	}
	// 31 minutes later the limit has run out.
	r = fx.stop(testNow.Add(31*time.Minute), hook.Input{SessionID: "s1", LastAssistantMessage: "y"})
	if r.Output.Decision == "block" || !strings.Contains(r.Output.SystemMessage, "time limit of 30 minutes passed") {
		t.Errorf("output = %+v; want the loop torn down by its time limit", r.Output)
	}
}

// TestStopIterationsNeverRestart (point 7): a loop restarted outside orbit
// (the upstream command writes iteration 0) goes on from the journal's
// highest iteration, so that ids and summaries never mix two loops.
func TestStopIterationsNeverRestart(t *testing.T) {
	t.Parallel()
	fx := newFixture(t) // the journal goes up to iteration 3
	fx.write(project.StateFile, state(0, 20))
	r := fx.stop(testNow, hook.Input{SessionID: "s1", LastAssistantMessage: "x"})
	if o := fx.orbit(); o.Iteration != 4 || !strings.Contains(r.Output.Reason, "iteration 4 of 20") || !strings.Contains(r.Output.SystemMessage, "behind the journal's 3") {
		t.Errorf("iteration %d, output %+v; want 4, said", o.Iteration, r.Output)
	}
}

// TestStopInactiveBelowActive (point 3): a nested project whose own loop is
// not active, under a project whose loop is: the hook says so.
func TestStopInactiveBelowActive(t *testing.T) {
	t.Parallel()
	fx := newFixture(t) // active at the root
	nested := fx.path("packages/web")
	if err := os.MkdirAll(nested+"/.claude", 0o755); err != nil {
		t.Fatal(err)
	}
	// Its own orbit project (a journal), whose loop stopped.
	for rel, content := range map[string]string{project.StateFile: `{"active": false, "iteration": 2}`, project.DecisionsFile: ""} {
		if err := os.WriteFile(nested+"/"+rel, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := fx.stop(testNow, hook.Input{SessionID: "s1", CWD: nested, LastAssistantMessage: "x"})
	if !strings.Contains(r.Output.SystemMessage, "is not active, but one is active in "+fx.root) || !strings.Contains(r.Log, "loop-active-above") {
		t.Errorf("output %+v, log %q; want the active loop above named", r.Output, r.Log)
	}
}
