package ceo_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/queue"
	"github.com/orbit-loop/orbit/trust"
)

const workedQueue = "testdata/worked-example.ceo-decisions-pending.json"

// queueItems returns a queue file's items, each compacted: the same fields
// in the same order with the same spelling compare equal.
func queueItems(tb testing.TB, content string) []string {
	tb.Helper()
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(content), &raws); err != nil {
		tb.Fatalf("queue is not a JSON array: %v\n%s", err, content)
	}
	out := make([]string, len(raws))
	for i, r := range raws {
		var b bytes.Buffer
		if err := json.Compact(&b, r); err != nil {
			tb.Fatal(err)
		}
		out[i] = b.String()
	}
	return out
}

// TestWorkedExample runs seed 000's worked example: a queue of two trivial
// items and one medium architecture choice, at iteration 7.
func TestWorkedExample(t *testing.T) {
	e := newEnv(t)
	e.write(project.StateFile, explainedState(t))
	// The journal so far: iter-3's SQLite precedent (CONFIRMED), iter-5's
	// deep decision still pending.
	p3 := past("iter-3-1", 3, "2026-03-08T08:00:00Z")
	p3.Category, p3.Input, p3.Tier, p3.Depth = "architecture", "Chose SQLite for the event log", "quick_review", "medium"
	p5 := past("iter-5-1", 5, "2026-03-08T09:00:00Z")
	e.appendRecords(project.DecisionsFile, &p3, &p5)
	e.appendRecords(project.RetroFile, &journal.OutcomeRecord{TS: "2026-03-08T08:30:00Z", DecisionID: "iter-3-1", Outcome: "CORRECT"})
	e.copyIn(workedQueue, project.PendingFile)
	items := queueItems(t, e.mustRead(project.PendingFile))

	// REASON + BUILD, batch: the two trivial items.
	res, err := ceo.ProcessQueue(e.ctx, e.ix, fixed(t0))
	if err != nil {
		t.Fatalf("ProcessQueue: %v", err)
	}
	if len(res.Decided) != 2 {
		t.Fatalf("ProcessQueue decided %d items; want the 2 trivial ones: %+v", len(res.Decided), res.Decided)
	}
	wantBatch := []journal.Decision{
		{ID: "iter-7-1", Iteration: 7, TS: "2026-03-08T10:15:00Z", Tier: "auto_approve", Depth: "trivial", Category: "quality",
			Input: "Add ESLint rule eqeqeq", Decision: "APPROVED", Reason: autoReason, Verification: "PENDING",
			Retrograde: journal.Retrograde{Outcome: "N/A"}, Requestor: "forge:builder",
			Context: "Turn on eqeqeq in .eslintrc.\nTwo bugs last month came from == coercion.", RequestID: "req-001"},
		{ID: "iter-7-2", Iteration: 7, TS: "2026-03-08T10:15:00Z", Tier: "auto_approve", Depth: "trivial", Category: "quality",
			Input: "Fix README typo", Decision: "APPROVED", Reason: autoReason, Verification: "PENDING",
			Retrograde: journal.Retrograde{Outcome: "N/A"}, Requestor: "forge:docs", RequestID: "req-002"},
	}
	for i, r := range res.Decided {
		if !reflect.DeepEqual(r.Decision, wantBatch[i]) {
			t.Errorf("Decided[%d] =\n%+v\nwant\n%+v", i, r.Decision, wantBatch[i])
		}
		if !r.Written || r.Impact != "low" || !r.Reversible || r.Level != trust.Standard {
			t.Errorf("Decided[%d] Written %v Impact %q Reversible %v Level %q; want true low true standard", i, r.Written, r.Impact, r.Reversible, r.Level)
		}
	}
	// The deep focus: the SQLite item, medium, left in the queue as it was.
	if res.Focus == nil {
		t.Fatalf("ProcessQueue Focus = nil; want req-003")
	}
	if res.Focus.Request.ID != "req-003" || res.Focus.Depth != "medium" || res.Focus.Tier != "quick_review" {
		t.Errorf("Focus = %s depth %q tier %q; want req-003 medium quick_review", res.Focus.Request.ID, res.Focus.Depth, res.Focus.Tier)
	}
	if res.Remaining != 1 || res.NextDepth != "medium" || res.Level != trust.Standard || len(res.AlreadyDecided) != 0 {
		t.Errorf("ProcessQueue Remaining %d NextDepth %q Level %q AlreadyDecided %v; want 1 medium standard none", res.Remaining, res.NextDepth, res.Level, res.AlreadyDecided)
	}
	if got := queueItems(t, e.mustRead(project.PendingFile)); !reflect.DeepEqual(got, items[2:]) {
		t.Errorf("queue after the batch =\n%v\nwant only the SQLite item as it was\n%v", got, items[2:])
	}
	lines := e.lines(project.DecisionsFile)
	if len(lines) != 4 {
		t.Fatalf("journal has %d lines; want 2 past + 2 batch", len(lines))
	}
	for i, want := range wantBatch {
		line, _ := journal.Marshal(&want)
		var m map[string]any
		json.Unmarshal(line, &m)
		if !reflect.DeepEqual(lines[2+i], m) {
			t.Errorf("journal line %d = %v; want %v", 3+i, lines[2+i], m)
		}
	}
	if got, want := e.mustRead(project.StateFile), replaceState(t, 1, 0, "standard"); got != want {
		t.Errorf("state file after the batch =\n%s\nwant\n%s", got, want)
	}

	// BUILD, deep mode: the agent's verdict on the focus.
	verdict := ceo.Input{Decision: "APPROVED", Reason: "single user, reversible",
		NextAction: "implement on SQLite behind an interface", Confidence: float64p(0.8)}
	dr, err := ceo.DecideRequest(e.ctx, e.ix, "req-003", verdict, fixed(t0.Add(5*time.Minute)))
	if err != nil {
		t.Fatalf("DecideRequest(req-003): %v", err)
	}
	wantDeep := journal.Decision{
		ID: "iter-7-3", Iteration: 7, TS: "2026-03-08T10:20:00Z", Tier: "quick_review", Depth: "medium", Category: "architecture",
		Input: "SQLite vs Postgres for state storage", Decision: "APPROVED", Reason: "single user, reversible",
		NextAction: "implement on SQLite behind an interface", Verification: "PENDING",
		Retrograde: journal.Retrograde{Outcome: "N/A"}, Confidence: float64p(0.8), Requestor: "forge:planner",
		Context: "Which database should hold the loop state?\nSingle user today; Postgres would need a server.", RequestID: "req-003",
	}
	if !reflect.DeepEqual(dr.Decision, wantDeep) || !dr.Written {
		t.Errorf("DecideRequest().Decision =\n%+v\nwant\n%+v", dr.Decision, wantDeep)
	}
	if got := e.mustRead(project.PendingFile); got != "[]\n" {
		t.Errorf("queue after deciding the focus = %q; want %q", got, "[]\n")
	}

	// INSPECT: iter-5's deep decision landed.
	if _, err := ceo.Retro(e.ctx, e.ix, "iter-5-1", "CONFIRMED", "commit 4f2a91c", fixed(t0.Add(6*time.Minute))); err != nil {
		t.Fatalf("Retro: %v", err)
	}
	if got, want := e.mustRead(project.StateFile), replaceState(t, 2, 0, "standard"); got != want {
		t.Errorf("state file after the retrograde check =\n%s\nwant\n%s", got, want)
	}

	// TURN: the queue is empty.
	journalBefore := e.mustRead(project.DecisionsFile)
	res, err = ceo.ProcessQueue(e.ctx, e.ix, fixed(t0.Add(7*time.Minute)))
	if err != nil {
		t.Fatalf("ProcessQueue on the empty queue: %v", err)
	}
	if len(res.Decided) != 0 || res.Focus != nil || res.Remaining != 0 || res.NextDepth != "" {
		t.Errorf("ProcessQueue on the empty queue = %+v; want nothing", res)
	}

	// A run that stopped before rewriting the queue left req-003 in it: it
	// is taken out, not decided twice.
	e.copyIn(workedQueue, project.PendingFile)
	q, err := queue.Read("", e.path(project.PendingFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Without(func(r queue.Request) bool { return r.ID != "req-003" }).Write(); err != nil {
		t.Fatal(err)
	}
	res, err = ceo.ProcessQueue(e.ctx, e.ix, fixed(t0.Add(8*time.Minute)))
	if err != nil {
		t.Fatalf("ProcessQueue with a decided item: %v", err)
	}
	if !reflect.DeepEqual(res.AlreadyDecided, []string{"req-003"}) || len(res.Decided) != 0 || res.Focus != nil || res.Remaining != 0 {
		t.Errorf("ProcessQueue = AlreadyDecided %v Decided %d Focus %v Remaining %d; want [req-003] 0 nil 0", res.AlreadyDecided, len(res.Decided), res.Focus, res.Remaining)
	}
	if got := e.mustRead(project.PendingFile); got != "[]\n" {
		t.Errorf("queue = %q; want %q", got, "[]\n")
	}
	if got := e.mustRead(project.DecisionsFile); got != journalBefore {
		t.Errorf("journal changed:\n%s\nwant\n%s", got, journalBefore)
	}
}

// TestProcessQueueAlreadyDecidedAmongOthers: a decided item is dropped
// while the others are processed as usual.
func TestProcessQueueAlreadyDecidedAmongOthers(t *testing.T) {
	e := newEnv(t)
	done := past("iter-2-1", 2, "2026-03-08T09:00:00Z")
	done.RequestID = "req-002"
	e.appendRecords(project.DecisionsFile, &done)
	e.copyIn(workedQueue, project.PendingFile)
	items := queueItems(t, e.mustRead(project.PendingFile))
	res, err := ceo.ProcessQueue(e.ctx, e.ix, fixed(t0))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.AlreadyDecided, []string{"req-002"}) {
		t.Errorf("AlreadyDecided = %v; want [req-002]", res.AlreadyDecided)
	}
	if len(res.Decided) != 1 || res.Decided[0].Decision.RequestID != "req-001" || res.Decided[0].Decision.ID != "iter-2-2" {
		t.Errorf("Decided = %+v; want req-001 as iter-2-2", res.Decided)
	}
	if got := queueItems(t, e.mustRead(project.PendingFile)); !reflect.DeepEqual(got, items[2:]) {
		t.Errorf("queue = %v; want only req-003", got)
	}
	n := 0
	for _, m := range e.lines(project.DecisionsFile) {
		if m["request_id"] == "req-002" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("req-002 is in the journal %d times; want 1", n)
	}
}

// TestProcessQueueBadItem is issue 15, point 8: one item that is not a
// valid request (a category "qualty") blocked the whole queue. Every valid
// item is decided; the bad one stays in the file as it was, and is named
// with the file, its item and id, the field and the allowed values.
func TestProcessQueueBadItem(t *testing.T) {
	tests := []struct {
		name    string
		content string
		decided []string // request ids decided
		want    []string // what the fault names
	}{
		{"category qualty", `[{"id":"req-1","title":"Fix a typo","category":"quality","impact":"low","reversible":true},` +
			`{"id":"req-2","title":"Pin eslint","category":"qualty","impact":"low","reversible":true},` +
			`{"id":"req-3","title":"Bump prettier","category":"quality","impact":"low","reversible":true}]`,
			[]string{"req-1", "req-3"}, []string{"item 2", "(req-2)", "category", `"qualty"`, "allowed: feature, architecture, quality, scope, deploy"}},
		{"missing impact", `[{"id":"req-1","title":"a","category":"quality","impact":"low","reversible":true},{"id":"req-2","title":"b","category":"quality","reversible":true}]`,
			[]string{"req-1"}, []string{"item 2", "(req-2)", "impact", "allowed: low, medium, high"}},
		{"duplicate id", `[{"id":"req-1","title":"a","category":"quality","impact":"low","reversible":true},{"id":"req-1","title":"b","category":"quality","impact":"low","reversible":true}]`,
			[]string{"req-1"}, []string{"item 2", "(req-1)", "id", "duplicate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.write(project.StateFile, explainedState(t))
			e.write(project.PendingFile, tt.content)
			res, err := ceo.ProcessQueue(e.ctx, e.ix, fixed(t0))
			if err != nil {
				t.Fatalf("ProcessQueue with one bad item: %v; want the valid items decided", err)
			}
			var got []string
			for _, d := range res.Decided {
				got = append(got, d.RequestID)
			}
			if !slices.Equal(got, tt.decided) {
				t.Errorf("decided %q; want %q", got, tt.decided)
			}
			if len(res.Invalid) != 1 {
				t.Fatalf("Invalid = %v; want the bad item", res.Invalid)
			}
			for _, w := range append(tt.want, project.PendingFile) {
				if !strings.Contains(res.Invalid[0].Error(), w) {
					t.Errorf("invalid item %q; want it to name %q", res.Invalid[0].Error(), w)
				}
			}
			// The bad item is still in the queue, as it was; the decided
			// ones are gone.
			var left []map[string]any
			if err := json.Unmarshal([]byte(e.mustRead(project.PendingFile)), &left); err != nil {
				t.Fatal(err)
			}
			var all []map[string]any
			if err := json.Unmarshal([]byte(tt.content), &all); err != nil {
				t.Fatal(err)
			}
			bad := all[len(all)-1]
			if tt.name == "category qualty" {
				bad = all[1]
			}
			if len(left) != 1 || !reflect.DeepEqual(left[0], bad) {
				t.Errorf("queue after = %v; want only the bad item, as it was: %v", left, bad)
			}
		})
	}
	t.Run("not an array", func(t *testing.T) {
		e := newEnv(t)
		e.write(project.PendingFile, `{"id":"req-1"}`)
		_, err := ceo.ProcessQueue(e.ctx, e.ix, fixed(t0))
		var qe *queue.Error
		if !errors.As(err, &qe) || !strings.Contains(err.Error(), "want a JSON array") {
			t.Errorf("ProcessQueue on a file that is not an array: %v; want a *queue.Error naming it", err)
		}
		if got := e.mustRead(project.PendingFile); got != `{"id":"req-1"}` {
			t.Errorf("queue file changed to %q", got)
		}
	})
}

// TestProcessQueueItemsWithoutID: ids are optional in a queue item. Deciding
// a trivial item without an id must not take other id-less items out of
// the queue.
func TestProcessQueueItemsWithoutID(t *testing.T) {
	e := newEnv(t)
	e.write(project.PendingFile, `[
  {"title": "Fix README typo", "category": "quality", "impact": "low", "reversible": true},
  {"title": "SQLite vs Postgres for state storage", "category": "architecture", "impact": "medium", "reversible": true},
  {"title": "Drop the v1 API", "category": "scope", "impact": "high", "reversible": false}
]
`)
	items := queueItems(t, e.mustRead(project.PendingFile))
	res, err := ceo.ProcessQueue(e.ctx, e.ix, fixed(t0))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Decided) != 1 || res.Decided[0].Decision.Input != "Fix README typo" {
		t.Fatalf("Decided = %+v; want the README typo only", res.Decided)
	}
	if res.Remaining != 2 || res.Focus == nil || res.Focus.Request.Title != "Drop the v1 API" || res.NextDepth != "heavy" {
		t.Errorf("ProcessQueue Remaining %d Focus %v NextDepth %q; want 2, the v1 API removal, heavy", res.Remaining, res.Focus, res.NextDepth)
	}
	if got := queueItems(t, e.mustRead(project.PendingFile)); !reflect.DeepEqual(got, items[1:]) {
		t.Errorf("queue after the batch =\n%v\nwant the two undecided items\n%v", got, items[1:])
	}
}

func TestProcessQueueNoFile(t *testing.T) {
	e := newEnv(t)
	res, err := ceo.ProcessQueue(e.ctx, e.ix, fixed(t0))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Decided) != 0 || res.Focus != nil || res.Remaining != 0 || res.NextDepth != "" {
		t.Errorf("ProcessQueue without a queue = %+v; want nothing", res)
	}
	for _, f := range []string{project.PendingFile, project.DecisionsFile} {
		if s, ok := e.read(f); ok && s != "" {
			t.Errorf("ProcessQueue without a queue wrote %s: %q", f, s)
		}
	}
}

func TestProcessQueueDryRun(t *testing.T) {
	e := newEnv(t)
	e.write(project.StateFile, explainedState(t))
	e.copyIn(workedQueue, project.PendingFile)
	queueBefore, stateBefore := e.mustRead(project.PendingFile), e.mustRead(project.StateFile)
	opts := fixed(t0)
	opts.DryRun = true
	res, err := ceo.ProcessQueue(e.ctx, e.ix, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Decided) != 2 || res.Focus == nil || res.Focus.Request.ID != "req-003" || res.Remaining != 1 {
		t.Errorf("ProcessQueue(dry run) = %d decided, focus %v, remaining %d; want 2, req-003, 1", len(res.Decided), res.Focus, res.Remaining)
	}
	for i, r := range res.Decided {
		if r.Written || r.Decision.Decision != "APPROVED" || r.Decision.Iteration != 7 {
			t.Errorf("Decided[%d] = written %v %+v; want unwritten APPROVED of iteration 7", i, r.Written, r.Decision)
		}
	}
	if got := e.mustRead(project.PendingFile); got != queueBefore {
		t.Errorf("queue changed by a dry run:\n%s", got)
	}
	if got := e.mustRead(project.StateFile); got != stateBefore {
		t.Errorf("state changed by a dry run:\n%s", got)
	}
	if s, ok := e.read(project.DecisionsFile); ok && s != "" {
		t.Errorf("journal written by a dry run: %q", s)
	}
}

// TestProcessQueueDemoted: at demoted trust an item declared trivial but of
// medium impact escalates in the batch (NEEDS_REVIEW); a light item stays
// for the agent.
func TestProcessQueueDemoted(t *testing.T) {
	e := newEnv(t)
	e.seedOutcomes(10, 10)
	e.write(project.PendingFile, `[
  {"id": "a", "title": "Bump the linter", "category": "quality", "impact": "medium", "reversible": true, "depth": "trivial"},
  {"id": "b", "title": "Add an endpoint", "category": "feature", "impact": "low", "reversible": false},
  {"id": "c", "title": "Fix a typo", "category": "quality", "impact": "low", "reversible": true}
]
`)
	res, err := ceo.ProcessQueue(e.ctx, e.ix, fixed(t0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Level != trust.Demoted {
		t.Fatalf("Level = %q; want demoted", res.Level)
	}
	var got []string
	for _, r := range res.Decided {
		got = append(got, r.Decision.RequestID+":"+r.Decision.Tier+":"+r.Decision.Decision+":"+r.Decision.Depth)
	}
	want := []string{"a:escalate:NEEDS_REVIEW:trivial", "c:auto_approve:APPROVED:trivial"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Decided = %v; want %v", got, want)
	}
	if res.Focus == nil || res.Focus.Request.ID != "b" || res.Focus.Depth != "light" || res.Focus.Tier != "quick_review" || res.Remaining != 1 {
		t.Errorf("Focus = %+v Remaining %d; want b, light, quick_review, 1", res.Focus, res.Remaining)
	}
}

func TestDecideRequestErrors(t *testing.T) {
	tests := []struct {
		name    string
		id      string
		verdict ceo.Input
		want    []string
	}{
		{"unknown request", "req-404", ceo.Input{Decision: "APPROVED", Reason: "r"}, []string{"--request req-404", project.PendingFile}},
		{"focus without a verdict", "req-003", ceo.Input{}, []string{"decision is required", "quick_review"}},
		{"verdict without a reason", "req-003", ceo.Input{Decision: "REJECTED"}, []string{"reason is required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.copyIn(workedQueue, project.PendingFile)
			before := e.mustRead(project.PendingFile)
			_, err := ceo.DecideRequest(e.ctx, e.ix, tt.id, tt.verdict, fixed(t0))
			inputError(t, err, tt.want...)
			if got := e.mustRead(project.PendingFile); got != before {
				t.Errorf("queue changed:\n%s", got)
			}
			if s, ok := e.read(project.DecisionsFile); ok && s != "" {
				t.Errorf("journal written: %q", s)
			}
		})
	}
}

func TestDecideRequestDryRunAndOverrides(t *testing.T) {
	e := newEnv(t)
	e.copyIn(workedQueue, project.PendingFile)
	before := e.mustRead(project.PendingFile)
	opts := fixed(t0)
	opts.DryRun = true
	res, err := ceo.DecideRequest(e.ctx, e.ix, "req-003", ceo.Input{Decision: "REJECTED", Reason: "not yet", Depth: "heavy", Iteration: int64p(9)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Decision
	if res.Written || d.Depth != "heavy" || d.Iteration != 9 || d.Decision != "REJECTED" || d.RequestID != "req-003" {
		t.Errorf("DecideRequest(dry run) = written %v %+v; want unwritten REJECTED heavy of iteration 9 for req-003", res.Written, d)
	}
	if got := e.mustRead(project.PendingFile); got != before {
		t.Errorf("queue changed by a dry run:\n%s", got)
	}
}

func TestFromRequestAndDepthOf(t *testing.T) {
	q, err := queue.Read("", seedQueueFile)
	if err != nil {
		t.Fatal(err)
	}
	r := q.Requests[0]
	in := ceo.FromRequest(r)
	if in.Title != r.Title || in.Category != "architecture" || in.Impact != "medium" || in.Reversible == nil || !*in.Reversible ||
		in.Requestor != "forge:builder" || in.RequestID != "req-001" || in.Context != r.Description+"\n"+r.Context {
		t.Errorf("FromRequest = %+v", in)
	}
	if got := ceo.DepthOf(r); got != "medium" {
		t.Errorf("DepthOf(seed request) = %q; want medium", got)
	}
	r.Depth = "heavy"
	if got := ceo.DepthOf(r); got != "heavy" {
		t.Errorf("DepthOf(request with depth heavy) = %q; want heavy", got)
	}
}
