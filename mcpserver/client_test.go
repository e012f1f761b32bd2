package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orbit-loop/orbit/hook"
	"github.com/orbit-loop/orbit/synth"
)

// wantTools are the tools orbit mcp lists (by name, as the SDK lists them).
var wantTools = []string{"decide", "knowledge_match", "loop_status", "precedent", "queue", "retro", "stale", "trust", "void"}

// TestGoClient drives the real binary through the Go SDK's client over the
// command transport: it lists the tools, records a decision, an outcome,
// searches precedents, works the queue, and checks after each write the
// journal line and the index.
func TestGoClient(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	p := newProject(t)
	s := p.connect(ctx)

	if got := s.InitializeResult().ServerInfo.Name; got != "orbit" {
		t.Errorf("server name = %q; want orbit", got)
	}
	list, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" {
			t.Errorf("tool %s has no description", tl.Name)
		}
		if m, ok := tl.InputSchema.(map[string]any); !ok || m["type"] != "object" {
			t.Errorf("tool %s input schema = %v; want an object schema", tl.Name, tl.InputSchema)
		}
	}
	if !slices.Equal(names, wantTools) {
		t.Errorf("tools = %q; want %q", names, wantTools)
	}

	// A decision: classified, tiered, journaled and indexed.
	journalBefore := len(p.lines(journalRel))
	// decide answers with orbit decide --json: the record, then what the
	// call adds beside it.
	var d struct {
		ID, Tier, Depth, Category, Input, Decision, Reason string
		Iteration                                          int64
		Written                                            bool              `json:"written"`
		TrustLevel                                         string            `json:"trust_level"`
		Precedents                                         []json.RawMessage `json:"precedents"`
	}
	text := mustCall(t, ctx, s, "decide", map[string]any{
		"title": "Pin the eslint version in CI", "category": "quality", "impact": "low", "reversible": true,
		"next_action": "commit the lockfile", "confidence": 0.9,
	}, &d)
	if d.ID != "iter-3-3" || d.Tier != "auto_approve" || d.Depth != "trivial" || d.Decision != "APPROVED" || !d.Written {
		t.Errorf("decide = %+v; want iter-3-3, auto_approve, trivial, APPROVED, written", d)
	}
	if !strings.HasPrefix(text, "[CEO-LOOP] Decision on: Pin the eslint version in CI\n├─ Id: iter-3-3 | Iteration: 3 | Depth: trivial | Category: quality\n") {
		t.Errorf("decide text =\n%s\nwant seed 000's decision block", text)
	}
	lines := p.lines(journalRel)
	if len(lines) != journalBefore+1 {
		t.Fatalf("journal has %d lines; want %d", len(lines), journalBefore+1)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &line); err != nil {
		t.Fatal(err)
	}
	if line["id"] != "iter-3-3" || line["input"] != "Pin the eslint version in CI" || line["next_action"] != "commit the lockfile" || line["confidence"] != 0.9 || line["verification"] != "PENDING" {
		t.Errorf("journal line = %v; want the decision as recorded", line)
	}
	if got := p.decisions()["iter-3-3"]; got.Input != "Pin the eslint version in CI" || got.Tier != "auto_approve" || got.Outcome != "PENDING" {
		t.Errorf("index holds iter-3-3 as %+v; want it, PENDING", got)
	}

	// An outcome: an event in the retrograde journal, and the index's
	// current outcome.
	var r struct {
		ID       string `json:"decision_id"`
		Outcome  string `json:"outcome"`
		Previous string `json:"previous_outcome"`
	}
	text = mustCall(t, ctx, s, "retro", map[string]any{"id": "iter-3-3", "outcome": "CORRECT", "evidence": "CI green"}, &r)
	if r.ID != "iter-3-3" || r.Outcome != "CORRECT" || r.Previous != "PENDING" {
		t.Errorf("retro = %+v; want iter-3-3 CORRECT, was PENDING", r)
	}
	if !strings.HasPrefix(text, "iter-3-3: recorded CORRECT (was PENDING)\nAccuracy: ") {
		t.Errorf("retro text = %q", text)
	}
	retro := p.lines(retroRel)
	if len(retro) != 1 || !strings.Contains(retro[0], `"decision_id":"iter-3-3","outcome":"CORRECT","evidence":"CI green"`) {
		t.Errorf("retrograde journal = %q; want the one event", retro)
	}
	if got := p.decisions()["iter-3-3"].Outcome; got != "CORRECT" {
		t.Errorf("index outcome of iter-3-3 = %q; want CORRECT", got)
	}

	// A precedent search finds it, with its outcome.
	var hits []struct {
		ID, Outcome string
		Avoid       bool
	}
	text = mustCall(t, ctx, s, "precedent", map[string]any{"query": "pin eslint version", "category": "quality"}, &hits)
	if len(hits) == 0 || hits[0].ID != "iter-3-3" || hits[0].Outcome != "CORRECT" {
		t.Errorf("precedent hits = %+v; want iter-3-3 first, CORRECT", hits)
	}
	if !strings.HasPrefix(text, "iter-3-3 (iter 3, quality): Pin the eslint version in CI -> APPROVED, outcome CORRECT") {
		t.Errorf("precedent text = %q", text)
	}

	// The queue: listed, then its trivial item decided in a batch, then the
	// deep focus decided by request.
	var q struct {
		Pending []struct{ ID, Depth string } `json:"pending"`
		Next    string                       `json:"next_depth"`
	}
	mustCall(t, ctx, s, "queue", nil, &q)
	if len(q.Pending) != 4 || q.Next != "heavy" {
		t.Errorf("queue = %+v; want 4 pending, next depth heavy", q)
	}
	var pr struct {
		Decided []json.RawMessage `json:"decided"`
		Focus   struct {
			Request struct{ ID string } `json:"request"`
		} `json:"focus"`
		Remaining int `json:"remaining"`
	}
	mustCall(t, ctx, s, "queue", map[string]any{"process": true}, &pr)
	if len(pr.Decided) != 2 || pr.Remaining != 2 {
		t.Errorf("queue process = %d decided, %d remaining; want 2 and 2", len(pr.Decided), pr.Remaining)
	}
	focus := pr.Focus.Request.ID
	mustCall(t, ctx, s, "decide", map[string]any{"request": focus, "decision": "NEEDS_REVIEW", "reason": "a production gate"}, &d)
	if d.Decision != "NEEDS_REVIEW" || !d.Written {
		t.Errorf("decide request %s = %+v; want NEEDS_REVIEW, written", focus, d)
	}
	if strings.Contains(p.read(pendingRel), `"`+focus+`"`) {
		t.Errorf("%s still queued after it was decided", focus)
	}
	last := p.lines(journalRel)
	if !strings.Contains(last[len(last)-1], `"request_id":"`+focus+`"`) {
		t.Errorf("journal's last line = %s; want the decision of %s", last[len(last)-1], focus)
	}

	// The read tools answer with their command's JSON.
	var trust struct {
		Level  string `json:"level"`
		Last20 struct{ N int }
	}
	text = mustCall(t, ctx, s, "trust", map[string]any{"fields": []string{"level", "last20"}}, &trust)
	if trust.Level != "standard" || trust.Last20.N != 4 || !strings.HasPrefix(text, "Accuracy: 3/4 = 75.0% | last 20: 3/4 = 75.0%") {
		t.Errorf("trust = %+v, %q; want standard, 4 scored", trust, text)
	}
	var stale []struct{ ID string }
	mustCall(t, ctx, s, "stale", map[string]any{"iterations": 0, "limit": 0}, &stale)
	if len(stale) == 0 {
		t.Errorf("stale with iterations 0 = none; want the PENDING decisions of earlier iterations")
	}
	var status struct {
		HasState bool `json:"has_state"`
	}
	if text := mustCall(t, ctx, s, "loop_status", nil, &status); status.HasState || !strings.HasPrefix(text, "no ORBIT loop") {
		t.Errorf("loop_status = %+v, %q; want no loop", status, text)
	}
	var matches []json.RawMessage
	if text := mustCall(t, ctx, s, "knowledge_match", map[string]any{"text": "Error: Cannot find module 'x'"}, &matches); len(matches) != 0 || text != "no known solution" {
		t.Errorf("knowledge_match without a registry = %d, %q; want none", len(matches), text)
	}

	// A decision recorded by mistake, voided: an event in the retrograde
	// journal, out of trust (iter-3-3's CORRECT no longer counts).
	var v struct {
		ID      string `json:"decision_id"`
		Void    bool   `json:"void"`
		Written bool   `json:"written"`
		Line    int    `json:"line"`
	}
	text = mustCall(t, ctx, s, "void", map[string]any{"id": "iter-3-3", "evidence": "a test decision"}, &v)
	if v.ID != "iter-3-3" || !v.Void || !v.Written || v.Line != 2 || !strings.HasPrefix(text, "iter-3-3: voided (.claude/ceo-loop-retrograde.jsonl:2)\nAccuracy: 2/3 = 66.7%") {
		t.Errorf("void = %+v, %q; want iter-3-3 voided at line 2, trust without it", v, text)
	}
	if retro := p.lines(retroRel); len(retro) != 2 || !strings.Contains(retro[1], `"decision_id":"iter-3-3","void":true,"evidence":"a test decision"`) {
		t.Errorf("retrograde journal = %q; want the void line after the outcome", retro)
	}

	p.orbit("", 0, "verify")
}

// TestToolErrors: a refused call is a tool error carrying the CLI's
// one-line message, and writes nothing.
func TestToolErrors(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	p := newProject(t)
	s := p.connect(ctx)
	journal, queue := p.read(journalRel), p.read(pendingRel)
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"bad category", "decide", map[string]any{"title": "x", "category": "qualty", "impact": "low", "reversible": true},
			`category "qualty" is not allowed (allowed: feature, architecture, quality, scope, deploy); did you mean "quality"?`},
		{"no title", "decide", map[string]any{"category": "quality", "impact": "low", "reversible": true}, "title is required: what is being decided"},
		{"no reversibility", "decide", map[string]any{"title": "x", "category": "quality", "impact": "low"}, "reversible is required: say whether the change can be undone (--reversible or --irreversible)"},
		{"decision without reason", "decide", map[string]any{"title": "x", "category": "quality", "impact": "low", "reversible": true, "decision": "APPROVED"},
			"reason is required: with a decision: the journal is the only record of why"},
		{"deep item without a decision", "decide", map[string]any{"title": "Rewrite the store", "category": "architecture", "impact": "high", "reversible": false},
			`decision is required: "Rewrite the store" is a deep_think item (impact high, irreversible, depth heavy, trust standard); decide APPROVED, NEEDS_REVIEW or REJECTED with a reason`},
		{"confidence out of range", "decide", map[string]any{"title": "x", "category": "quality", "impact": "low", "reversible": true, "confidence": 1.5}, `confidence "1.5" is outside 0..1`},
		{"bad retro", "decide", map[string]any{"title": "x", "category": "quality", "impact": "low", "reversible": true, "retro": "iter-1-1"}, `retro "iter-1-1" is not ID=OUTCOME (e.g. iter-6-2=CORRECT)`},
		{"retro of an unknown decision", "decide", map[string]any{"title": "x", "category": "quality", "impact": "low", "reversible": true, "retro": "iter-9-9=CORRECT"}, `retro "iter-9-9" names no decision in the journal`},
		{"unknown request", "decide", map[string]any{"request": "req-999", "decision": "APPROVED", "reason": "r"}, "--request req-999: no such item in .claude/ceo-decisions-pending.json"},
		{"request with its own title", "decide", map[string]any{"request": "req-001", "title": "other", "decision": "APPROVED", "reason": "r"}, "--title comes from the queued request with --request"},
		{"unknown argument", "decide", map[string]any{"titel": "x"}, `unknown argument "titel" (arguments: title, category, impact, reversible, decision, reason, next_action, confidence, depth, iteration, requestor, context, retro, request, dry_run)`},
		{"wrong type", "decide", map[string]any{"title": "x", "reversible": "yes"}, "argument reversible is a JSON string, want true or false"},
		{"unknown outcome", "retro", map[string]any{"id": "iter-1-1", "outcome": "MAYBE"}, `outcome "MAYBE" is not allowed (allowed: CORRECT, INCORRECT, CONFIRMED, FAILED, PENDING)`},
		{"retro of an unknown id", "retro", map[string]any{"id": "iter-9-9", "outcome": "CORRECT"}, `no decision "iter-9-9" in the journal (` + "`orbit log`" + ` lists them)`},
		{"precedent k", "precedent", map[string]any{"query": "x", "k": 500}, "-k 500: must be between 1 and 100"},
		{"trust field", "trust", map[string]any{"fields": []string{"levl"}}, `unknown JSON field "levl" (available: ` + strings.Join(trustFields, ", ") + ")"},
		{"stale limit", "stale", map[string]any{"limit": -1}, "--limit -1: must be 0 (all) or more"},
		{"empty error text", "knowledge_match", map[string]any{"text": "  "}, "the error text is empty"},
		{"queue dry run without process", "queue", map[string]any{"dry_run": true}, "dry_run goes with process: listing the queue writes nothing"},
		{"loop_status argument", "loop_status", map[string]any{"id": "x"}, `unknown argument "id" (arguments: )`},
	}
	for _, tt := range tests {
		text, _, isErr := call(t, ctx, s, tt.tool, tt.args)
		if !isErr || text != tt.want {
			t.Errorf("%s: %s %v = %q (error %t); want the tool error %q", tt.name, tt.tool, tt.args, text, isErr, tt.want)
		}
	}
	if p.read(journalRel) != journal || p.read(pendingRel) != queue {
		t.Errorf("refused calls changed the journal or the queue")
	}
	// An unknown tool is a protocol error, not a tool error.
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "decid"}); err == nil || !strings.Contains(err.Error(), `unknown tool "decid"`) {
		t.Errorf("unknown tool: %v; want a protocol error", err)
	}
}

var trustFields = []string{"decisions", "with_outcome", "correct", "incorrect", "accuracy", "ci95", "baseline", "last20", "last10", "level",
	"alert", "alert_text", "by_category", "by_tier", "by_depth", "by_requestor", "iterations", "calibration", "filter"}

// TestParallelClients: 8 MCP clients, each its own orbit mcp process,
// record decisions at once: every one lands once, with a unique id, and
// orbit verify finds the journal and the index in step.
func TestParallelClients(t *testing.T) {
	t.Parallel()
	const clients, each = 8, 10
	ctx := testContext(t)
	p := newProject(t)
	before := len(p.lines(journalRel))
	var wg sync.WaitGroup
	ids := make([][]string, clients)
	errs := make(chan error, clients*each)
	for c := range clients {
		s := p.connect(ctx)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "decide", Arguments: map[string]any{
					"title": fmt.Sprintf("client %d decision %d", c, i), "category": "feature", "impact": "low", "reversible": true, "iteration": 7,
				}})
				if err != nil || res.IsError {
					errs <- fmt.Errorf("client %d call %d: %v %v", c, i, err, res)
					continue
				}
				var d struct{ ID string }
				if err := json.Unmarshal([]byte(res.Content[1].(*mcp.TextContent).Text), &d); err != nil {
					errs <- err
					continue
				}
				ids[c] = append(ids[c], d.ID)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	seen := map[string]bool{}
	for _, l := range ids {
		for _, id := range l {
			if seen[id] {
				t.Errorf("id %s given twice", id)
			}
			seen[id] = true
		}
	}
	lines := p.lines(journalRel)
	if len(seen) != clients*each || len(lines) != before+clients*each {
		t.Errorf("%d unique ids, %d new journal lines; want %d of each", len(seen), len(lines)-before, clients*each)
	}
	indexed := p.decisions()
	for id := range seen {
		if _, ok := indexed[id]; !ok || !strings.HasPrefix(id, "iter-7-") {
			t.Errorf("decision %s: in the index %t; want it there, in iteration 7", id, ok)
		}
	}
	p.orbit("", 0, "verify")
}

// TestToolListTokens: the whole tool list, as a client receives it, stays
// under 2,000 tokens by hook.EstimateTokens (bytes / 3, which overcounts
// Claude's and OpenAI's tokenizers on it: BENCHMARKS.md, section mcp).
func TestToolListTokens(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	s := newProject(t).connect(ctx)
	list, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(list.Tools)
	if err != nil {
		t.Fatal(err)
	}
	if n := hook.EstimateTokens(string(data)); n >= 2000 {
		t.Errorf("the tool list is %d bytes, ~%d tokens; want under 2,000", len(data), n)
	}
	t.Logf("tool list: %d bytes, ~%d tokens", len(data), hook.EstimateTokens(string(data)))
}

// TestCompactionThenMCP is the compaction scenario: a loop is under way,
// Claude Code compacts the conversation, the SessionStart hook primes the
// agent, and the agent, which has no shell, records its next decision
// through the MCP tools the prime named, with the id it said.
func TestCompactionThenMCP(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	p := newProject(t)
	p.write(stateRel, `{"active": true, "iteration": 4, "max_iterations": 20, "time_limit_minutes": 0, "started_at": "2026-03-09T11:50:00Z",
  "trust_level": "standard", "depth_escalation_counter": 0, "correct_decisions": 2, "incorrect_decisions": 1,
  "completion_sentinel": "<promise>ORBIT COMPLETE</promise>", "last_stop_decisions": 6, "last_stop_at": "2026-03-09T11:55:00Z"}
`)
	mcpJSON, _, _, err := hook.InstallMCP(p.path(hook.MCPFile), nil, orbitBin)
	if err != nil {
		t.Fatal(err)
	}
	p.write(hook.MCPFile, string(mcpJSON))

	in := fmt.Sprintf(`{"session_id":"s1","transcript_path":"/tmp/none.jsonl","cwd":%q,"hook_event_name":"SessionStart","source":"compact"}`, p.root)
	var out struct {
		Specific struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(p.orbit(in, 0, "hook", "session-start")), &out); err != nil {
		t.Fatal(err)
	}
	prime := out.Specific.AdditionalContext
	for _, want := range []string{
		"ORBIT loop — iteration 4 of 20. Continue this CEO-LOOP iteration",
		"Queue: 4 pending; next depth target: heavy. Decide with mcp__orbit__queue {process: true}",
		"- MCP tools (server \"orbit\" in .mcp.json): mcp__orbit__queue",
		"mcp__orbit__decide (a decision; request: ID decides a queued item)",
		`{"id":"iter-4-1","iteration":4,`,
	} {
		if !strings.Contains(prime, want) {
			t.Errorf("the compacted session's context lacks %q:\n%s", want, prime)
		}
	}

	// The agent, with no shell, decides the deep focus through MCP.
	s := p.connect(ctx)
	var d struct{ ID, Decision string }
	mustCall(t, ctx, s, "decide", map[string]any{"request": "req-003", "decision": "NEEDS_REVIEW", "reason": "a production gate needs a human"}, &d)
	if d.ID != "iter-4-1" || d.Decision != "NEEDS_REVIEW" {
		t.Errorf("the decision after the compaction = %+v; want iter-4-1, the id the context named", d)
	}
	lines := p.lines(journalRel)
	if last := lines[len(lines)-1]; !strings.Contains(last, `"id":"iter-4-1"`) || !strings.Contains(last, `"request_id":"req-003"`) {
		t.Errorf("journal's last line = %s; want iter-4-1 for req-003", last)
	}
	if got := p.decisions()["iter-4-1"]; got.Input != "Ship v2 to production behind a flag" {
		t.Errorf("index holds iter-4-1 as %+v", got)
	}
	// The Stop that ends the iteration sees it.
	stop := fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"Stop","last_assistant_message":"decided req-003"}`, p.root)
	var blocked struct{ Decision, Reason string }
	if err := json.Unmarshal([]byte(p.orbit(stop, 0, "hook", "stop")), &blocked); err != nil {
		t.Fatal(err)
	}
	if blocked.Decision != "block" || !strings.Contains(blocked.Reason, "ORBIT loop — iteration 5 of 20.") || !strings.Contains(blocked.Reason, "Queue: 3 pending") {
		t.Errorf("the next Stop = %+v; want iteration 5 with 3 queued", blocked)
	}
}

// TestDamagedIndex: a call that finds the index damaged in the middle of a
// query (SQLite opens it, and fails only when a query reaches a bad page)
// removes it and runs again on a fresh one, rebuilt from the files, as a
// command does: the answer is the one from before the damage.
func TestDamagedIndex(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	p := newProject(t)
	var b bytes.Buffer
	if err := synth.Generate(&b, synth.Options{Decisions: 3000, Seed: 11}); err != nil {
		t.Fatal(err)
	}
	p.write(journalRel, b.String())
	args := map[string]any{"iterations": 0, "limit": 0}
	var before, after json.RawMessage
	mustCall(t, ctx, p.connect(ctx), "stale", args, &before)

	dbPath := p.path(".claude/orbit.db")
	data, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 256<<10 {
		t.Fatalf("index is %d bytes; the test needs pages in its middle", len(data))
	}
	for off := len(data) * 30 / 100 &^ (16<<10 - 1); off < len(data)*70/100; off += 16 << 10 {
		copy(data[off:], bytes.Repeat([]byte{0xA5, 0x5A, 0x00, 0xFF}, 16<<10/4))
	}
	if err := os.WriteFile(dbPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	mustCall(t, ctx, p.connectLogging(ctx, &stderr), "stale", args, &after)
	// age_seconds is measured against the clock, which moves between the
	// two calls.
	age := regexp.MustCompile(`"age_seconds":[0-9]+`)
	if !bytes.Equal(age.ReplaceAll(before, nil), age.ReplaceAll(after, nil)) {
		t.Errorf("stale on a damaged index differs from before the damage:\n%.600s\n%.600s", before, after)
	}
	if !strings.Contains(stderr.String(), "removing it and rebuilding it") {
		t.Errorf("server stderr %q; want it to say the damaged index was removed mid-call", stderr.String())
	}
	p.orbit("", 0, "verify")
}

// syncBuffer is a bytes.Buffer safe to write from the command's copier
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
