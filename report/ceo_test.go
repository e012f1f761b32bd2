package report_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/internal/golden"
	"github.com/orbit-loop/orbit/internal/projecttest"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/queue"
	"github.com/orbit-loop/orbit/report"
	"github.com/orbit-loop/orbit/trust"
)

// now is the clock of the reports: half an hour into the fixed session.
var now = time.Date(2026, 3, 8, 10, 30, 0, 0, time.UTC)

// goldenFile compares got with testdata/name (-update rewrites it).
func goldenFile(tb testing.TB, name string, got []byte) {
	tb.Helper()
	golden.Check(tb, filepath.Join("testdata", name), got)
}

// newProject returns an index over a temporary project holding copies of
// the files under testdata/dir ("" for an empty project), synced.
func newProject(tb testing.TB, dir string) *journal.Index {
	tb.Helper()
	root := tb.TempDir()
	claude := filepath.Join(root, ".claude")
	if err := os.MkdirAll(claude, 0o755); err != nil {
		tb.Fatal(err)
	}
	if dir != "" {
		entries, err := os.ReadDir(filepath.Join("testdata", dir))
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join("testdata", dir, e.Name()))
			if err != nil {
				tb.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(claude, e.Name()), data, 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return projecttest.Synced(tb, projecttest.At(tb, root), now)
}

func gather(tb testing.TB, ix *journal.Index) ceo.Progress {
	tb.Helper()
	p, err := ceo.GatherProgress(context.Background(), ix, now)
	if err != nil {
		tb.Fatalf("GatherProgress: %v", err)
	}
	return p
}

func TestDecisionBlockGolden(t *testing.T) {
	prev := "iter-6-2"
	tests := []struct {
		name string
		res  ceo.Result
	}{
		{"auto-approved", ceo.Result{
			DecisionView: journal.DecisionView{Decision: journal.Decision{ID: "iter-7-1", Iteration: 7, Tier: "auto_approve", Depth: "trivial", Category: "quality",
				Input: "Add ESLint rule eqeqeq", Decision: "APPROVED", Reason: "Auto-approved: low impact and reversible (impact x reversibility matrix).",
				Retrograde: journal.Retrograde{Outcome: "N/A"}}},
			Impact: "low", Reversible: true, Level: trust.Standard, Written: true,
		}},
		{"dry-run", ceo.Result{
			DecisionView: journal.DecisionView{Decision: journal.Decision{Iteration: 7, Tier: "quick_review", Depth: "medium", Category: "architecture",
				Input: "SQLite vs Postgres for state storage", Decision: "APPROVED", Reason: "single user, reversible",
				NextAction: "implement on SQLite behind an interface", Retrograde: journal.Retrograde{Outcome: "N/A"}}},
			NextID: "iter-7-2", Impact: "medium", Reversible: true, Level: trust.Standard,
		}},
		{"retrograde-multiline", ceo.Result{
			DecisionView: journal.DecisionView{Decision: journal.Decision{ID: "iter-8-3", Iteration: 8, Tier: "escalate", Depth: "heavy", Category: "deploy",
				Input: "Ship to production", Decision: "NEEDS_REVIEW", Reason: "Escalated:\n  demoted trust,\r\n  irreversible",
				NextAction: "Ask the human\nin #deploys", Retrograde: journal.Retrograde{PreviousID: &prev, Outcome: "INCORRECT"}}},
			Impact: "high", Reversible: false, Level: trust.Demoted, Written: true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			report.DecisionBlock(&b, tt.res)
			goldenFile(t, "decision-"+tt.name+".golden", b.Bytes())
		})
	}
}

// TestDecisionBlockShape: whatever the text of a decision (titles from a
// queue file may hold newlines), the block is seed 000's struct: a title
// line, then one tree line per field.
func TestDecisionBlockShape(t *testing.T) {
	tests := []struct {
		name                      string
		input, reason, nextAction string
	}{
		{"plain", "Add ESLint rule", "ok", "commit"},
		{"multi-line reason and next action", "Add ESLint rule", "ok\nreally", "commit\r\nthen push"},
		{"multi-line title", "Remove the legacy v1 API\n(breaking)", "ok", "commit"},
		{"title with CRLF", "Remove the legacy v1 API\r\nnow", "ok", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			report.DecisionBlock(&b, ceo.Result{DecisionView: journal.NewView(journal.Decision{ID: "iter-1-1", Iteration: 1, Tier: "quick_review", Depth: "light",
				Category: "scope", Input: tt.input, Decision: "APPROVED", Reason: tt.reason, NextAction: tt.nextAction}),
				Impact: "low", Reversible: false, Level: trust.Standard, Written: true})
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if len(lines) != 6 {
				t.Errorf("DecisionBlock is %d lines; want 6:\n%s", len(lines), b.String())
			}
			for i, l := range lines {
				ok := strings.HasPrefix(l, "├─ ") || (i == len(lines)-1 && strings.HasPrefix(l, "└─ "))
				if i == 0 {
					ok = strings.HasPrefix(l, "[CEO-LOOP] Decision on: ")
				}
				if !ok || strings.Contains(l, "\r") {
					t.Errorf("DecisionBlock line %d = %q; want the struct's shape:\n%s", i+1, l, b.String())
				}
			}
		})
	}
}

func TestProgressMarkdownGolden(t *testing.T) {
	tests := []struct {
		name string
		dir  string
	}{
		{"progress", "project"},
		{"progress-empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := gather(t, newProject(t, tt.dir))
			var b bytes.Buffer
			report.ProgressMarkdown(&b, p)
			goldenFile(t, tt.name+".golden", b.Bytes())
		})
	}
}

func TestSessionSummaryGolden(t *testing.T) {
	tests := []struct {
		name string
		dir  string
	}{
		{"summary", "project"},
		{"summary-empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := gather(t, newProject(t, tt.dir))
			var b bytes.Buffer
			report.SessionSummary(&b, p)
			goldenFile(t, tt.name+".golden", b.Bytes())
		})
	}
}

// TestGatherProgress pins what the goldens are made of.
func TestGatherProgress(t *testing.T) {
	p := gather(t, newProject(t, "project"))
	checks := []struct {
		name      string
		got, want any
	}{
		{"iteration", p.Iteration, int64(3)},
		{"pending", p.Pending, 3},
		{"next depth", p.NextDepth, "heavy"},
		{"trust correct", p.Trust.Correct, 3},
		{"trust incorrect", p.Trust.Incorrect, 1},
		{"trust level", p.Trust.Level, trust.Standard},
		{"this iteration total", p.ThisIter.Total, int64(2)},
		{"this iteration trivial", p.ThisIter.Trivial, int64(1)},
		{"focus", p.Focus != nil && p.Focus.ID == "iter-3-2", true},
		{"session total (since started_at)", p.Session.Total, int64(6)},
		{"session auto", p.Session.Auto, int64(2)},
		// Deep decisions are the light, medium and heavy ones (seed 000).
		{"session deep", p.Session.Deep, int64(4)},
		{"session escalated", p.Session.Escalated, int64(1)},
		{"session correct", p.Session.Correct, int64(2)},
		{"session incorrect", p.Session.Incorrect, int64(1)},
		{"stale (iterations before 1)", p.Stale, int64(0)},
		{"latest events", len(p.Latest), 4},
		{"newest event first", p.Latest[0].DecisionID, "old-1"},
		{"loop started", p.Loop.Started.Equal(time.Date(2026, 3, 8, 10, 0, 0, 0, time.UTC)), true},
		{"escalation counter", p.Loop.EscalationCount, int64(1)},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("GatherProgress %s = %v; want %v", c.name, c.got, c.want)
		}
	}
}

// TestProgressTop: the Stop hook re-feeds only the first 30 lines of the
// progress file (seed gotcha 5), so queue status, the next depth target,
// the retrograde results, the accuracy and the alert must be there however
// long the queue and the history.
func TestProgressTop(t *testing.T) {
	ix := newProject(t, "")
	claude := ix.Project.Path(".claude")
	state := `{"active": true, "iteration": 40, "max_iterations": 50, "started_at": "2026-03-08T10:00:00Z", "depth_escalation_counter": 2}`
	if err := os.WriteFile(filepath.Join(claude, "ceo-loop-state.json"), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	var q strings.Builder
	q.WriteString("[\n")
	for k := range 60 {
		if k > 0 {
			q.WriteString(",\n")
		}
		fmt.Fprintf(&q, `{"id":"req-%d","category":"feature","title":"Queued item %d with a long title\nthat spans lines %s","impact":"%s","reversible":%v}`,
			k, k, strings.Repeat("and more ", 20), []string{"low", "medium", "high"}[k%3], k%2 == 0)
	}
	q.WriteString("\n]\n")
	if err := os.WriteFile(filepath.Join(claude, "ceo-decisions-pending.json"), []byte(q.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var ds, os2 bytes.Buffer
	for k := range 80 {
		id := fmt.Sprintf("iter-%d-1", k%40+1)
		if k >= 40 {
			id = fmt.Sprintf("iter-%d-2", k%40+1)
		}
		ts := time.Date(2026, 3, 8, 10, 0, 0, 0, time.UTC).Add(time.Duration(k) * time.Minute).Format(time.RFC3339)
		d := journal.Decision{ID: id, Iteration: int64(k%40 + 1), TS: ts, Tier: "quick_review", Depth: "light", Category: "feature",
			Input: "Decision " + id, Decision: "APPROVED", Reason: "r", Verification: "PENDING", Retrograde: journal.Retrograde{Outcome: "N/A"}}
		line, _ := journal.Marshal(&d)
		ds.Write(line)
		outcome := "INCORRECT"
		if k%3 == 0 {
			outcome = "CORRECT"
		}
		rec := journal.OutcomeRecord{TS: ts, DecisionID: id, Outcome: outcome,
			Evidence: "evidence line one\nline two " + strings.Repeat("long evidence ", 30)}
		line, _ = journal.Marshal(&rec)
		os2.Write(line)
	}
	if err := os.WriteFile(ix.Project.Path(project.DecisionsFile), ds.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ix.Project.Path(project.RetroFile), os2.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(context.Background(), journal.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	p := gather(t, ix)
	if !p.Trust.Alert {
		t.Fatalf("test setup: want the trust alert raised, got %+v", p.Trust)
	}
	var b bytes.Buffer
	report.ProgressMarkdown(&b, p)
	lines := strings.Split(b.String(), "\n")
	head := lines[:min(30, len(lines))]
	find := func(prefix string) int {
		for i, l := range head {
			if strings.HasPrefix(l, prefix) {
				return i + 1
			}
		}
		return 0
	}
	for _, want := range []string{
		"**Trust level**",
		"⚠️ TRUST CALIBRATION ALERT",
		"## Queue Status",
		"- Remaining pending decisions: 60",
		"- Next depth target: heavy",
		"## Retrograde Results",
		"- iter-40-2: ",
		"- Stale (PENDING > 2 iterations)",
	} {
		if find(want) == 0 {
			t.Errorf("progress file: %q is not within the first 30 lines:\n%s", want, strings.Join(head, "\n"))
		}
	}
	if n := find("**Trust level**"); n > 0 && !strings.Contains(head[n-1], "**Accuracy**: 27/80 = 33.8%") {
		t.Errorf("accuracy line = %q; want 27/80 = 33.8%%", head[n-1])
	}
}

// TestProgressIterationSummary: the trivial-batch line speaks of the
// trivial batch; a rejection of the deep focus is not a rejection in the
// batch.
func TestProgressIterationSummary(t *testing.T) {
	p := ceo.Progress{Iteration: 4, Now: now}
	// Iteration 4: one trivial item APPROVED in the batch, the deep focus
	// REJECTED.
	p.ThisIter.Total, p.ThisIter.Trivial, p.ThisIter.Approved, p.ThisIter.Rejected = 2, 1, 1, 1
	var b bytes.Buffer
	report.ProgressMarkdown(&b, p)
	var line string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "- Decisions:") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no '- Decisions:' line in\n%s", b.String())
	}
	if strings.Contains(line, "trivial batch: 1 — 1 REJECTED") {
		t.Errorf("iteration summary %q reports the deep focus's rejection as a rejection in the trivial batch (which approved its only item)", line)
	}
}

// TestProgressMarkdownFits: orbit's part of the progress file, with
// everything it can hold at once (both alerts, a queue item that cannot be
// decided, several retrograde results, a deep focus, or the session
// summary of a stopped loop), stays within ProgressLines, so that with its
// two marker lines it ends within the first 30 lines (gotcha 5).
func TestProgressMarkdownFits(t *testing.T) {
	p := gather(t, newProject(t, "project"))
	p.Trust.Level, p.Trust.Alert = trust.Demoted, true
	p.Trust.Last10, p.Trust.Last20 = trust.NewWindow(3, 7), trust.NewWindow(10, 10)
	p.Loop.EscalationCount = 4
	p.Loop.StartedAt, p.Loop.StartedUnreadable, p.Loop.FirstSeenAt = "$STARTED", true, "2026-03-09T12:00:00Z"
	p.Latest = append(p.Latest, p.Latest...)
	q, err := queueWithInvalid(t)
	if err != nil {
		t.Fatal(err)
	}
	p.Invalid = q
	for _, stopped := range []bool{false, true} {
		p.Loop.HasState, p.Loop.Active, p.Loop.StopReason = true, !stopped, ""
		if stopped {
			p.Loop.StopReason, p.Loop.StoppedAt = "done", "2026-03-09T12:30:00Z"
		}
		var b bytes.Buffer
		report.ProgressMarkdown(&b, p)
		if n := strings.Count(b.String(), "\n"); n > report.ProgressLines {
			t.Errorf("stopped %t: %d lines; want at most %d:\n%s", stopped, n, report.ProgressLines, b.String())
		}
		for _, w := range []string{"TRUST CALIBRATION ALERT", "cannot be decided as written", `"$STARTED"`, "proactive mode"} {
			if !strings.Contains(b.String(), w) {
				t.Errorf("stopped %t: lacks %q:\n%s", stopped, w, b.String())
			}
		}
	}
}

// queueWithInvalid reads a queue whose second item cannot be decided.
func queueWithInvalid(tb testing.TB) ([]queue.Invalid, error) {
	dir := tb.TempDir()
	path := filepath.Join(dir, "pending.json")
	if err := os.WriteFile(path, []byte(`[{"id":"a","title":"t","category":"quality","impact":"low","reversible":true},{"id":"b","title":"u","category":"qualty","impact":"low","reversible":true}]`), 0o644); err != nil {
		return nil, err
	}
	q, err := queue.Read("", path)
	if err != nil {
		return nil, err
	}
	return q.Invalid, nil
}

// TestQueueResultWording: a queue holding only items that cannot be
// decided is not empty, and the loop is not told to stop.
func TestQueueResultWording(t *testing.T) {
	bad := queue.Invalid{Err: &queue.Error{Path: project.PendingFile, Item: 1, Msg: "want a JSON object"}}
	for _, tt := range []struct {
		name string
		res  ceo.QueueResult
		want string
	}{
		{"empty", ceo.QueueResult{}, "The queue (.claude/ceo-decisions-pending.json) is empty: nothing to decide. With nothing found by a proactive scan either, stop the loop.\n"},
		{"one bad item", ceo.QueueResult{Invalid: []queue.Invalid{bad}}, "Nothing decided: the queue (.claude/ceo-decisions-pending.json) holds 1 item that cannot be decided as written; fix it, then decide again.\n"},
		{"two bad items", ceo.QueueResult{Invalid: []queue.Invalid{bad, bad}}, "Nothing decided: the queue (.claude/ceo-decisions-pending.json) holds 2 items that cannot be decided as written; fix them, then decide again.\n"},
	} {
		var b bytes.Buffer
		report.QueueResult(&b, tt.res)
		if b.String() != tt.want {
			t.Errorf("%s: QueueResult =\n%q\nwant\n%q", tt.name, b.String(), tt.want)
		}
	}
}
