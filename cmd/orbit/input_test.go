package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func decoded(tb testing.TB, s string) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		tb.Fatalf("not a JSON object: %v\n%s", err, s)
	}
	return m
}

// TestDecideStdinHonoursEveryField: the verdict's fields on stdin are
// journaled, not dropped; an unknown key is refused with the allowed ones.
func TestDecideStdinHonoursEveryField(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	in := `{"title":"Move sessions to Redis","category":"architecture","impact":"medium","reversible":true,` +
		`"decision":"rejected","reason":"one more service to run","confidence":0.7,"next_action":"keep Postgres","iteration":0}`
	res := p.runIn(in, false, "decide", "--stdin", "--json")
	if res.code != exitOK {
		t.Fatalf("decide --stdin: exit %d\n%s", res.code, res.stderr)
	}
	got := decoded(t, res.stdout)
	for k, want := range map[string]any{"decision": "REJECTED", "reason": "one more service to run", "confidence": 0.7,
		"next_action": "keep Postgres", "iteration": 0.0, "id": "iter-0-1"} {
		if got[k] != want {
			t.Errorf("decide --stdin: %s = %#v; want %#v", k, got[k], want)
		}
	}
	before := p.read(journalRel)
	res = p.runIn(`{"title":"x","category":"quality","impact":"low","reversible":true,"tier":"auto_approve"}`, false, "decide", "--stdin")
	if res.code != exitUsage || !strings.Contains(res.stderr, `stdin: tier is not a field of a decision request`) ||
		!strings.Contains(res.stderr, "allowed: title, description, category") {
		t.Errorf("unknown key: exit %d, stderr %q; want exit 2 naming tier and the allowed fields", res.code, res.stderr)
	}
	if p.read(journalRel) != before {
		t.Errorf("a refused request changed the journal")
	}
}

// TestDecideStdinJSONLines: several requests, all validated before any is
// written, then written together.
func TestDecideStdinJSONLines(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	before := p.read(journalRel)
	lines := `{"title":"One","category":"quality","impact":"low","reversible":true}
{"title":"Two","category":"qualty","impact":"low","reversible":true}
`
	res := p.runIn(lines, false, "decide", "--stdin")
	if res.code != exitUsage || !strings.Contains(res.stderr, "request 2 of 2 (nothing written)") || !strings.Contains(res.stderr, `did you mean "quality"`) {
		t.Errorf("a bad second line: exit %d, stderr %q; want exit 2 naming request 2 and the closest category", res.code, res.stderr)
	}
	if p.read(journalRel) != before {
		t.Fatalf("a batch with a bad line wrote its good one")
	}
	res = p.runIn(strings.Replace(lines, "qualty", "QUALITY", 1), false, "decide", "--stdin", "--json=id,input,category")
	if res.code != exitOK {
		t.Fatalf("decide --stdin (JSON Lines): exit %d\n%s", res.code, res.stderr)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil || len(got) != 2 || got[1]["category"] != "quality" || got[0]["id"] == got[1]["id"] {
		t.Errorf("decide --stdin (JSON Lines) printed %s; want two decisions, the category written canonically", res.stdout)
	}
	if n := strings.Count(p.read(journalRel), "\n") - strings.Count(before, "\n"); n != 2 {
		t.Errorf("journal grew by %d lines; want 2", n)
	}
}

// TestDecideStdinWrongShapes: a value of the wrong JSON type is named by
// its field, its line, what it wants and what it got, in JSON's words (not
// Go's); a value that is no object says so.
func TestDecideStdinWrongShapes(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	before := p.read(journalRel)
	for _, tt := range []struct{ in, want string }{
		{`{"title":"x","category":"quality","impact":3,"reversible":true}`, "orbit: stdin: impact has the wrong type: want a string, got a number (line 1)\n"},
		{"{\"title\":\"x\",\"category\":\"quality\",\"impact\":\"low\",\"reversible\":true}\n{\"title\":\"y\",\"reversible\":\"yes\"}", "orbit: stdin: reversible has the wrong type: want true or false, got a string (line 2)\n"},
		{`[{"title":"x"}]`, "orbit: stdin: line 1: want a JSON object, got an array\n"},
		{"\n\n\"x\"", "orbit: stdin: line 3: want a JSON object, got a string\n"},
		{"{\"title\":", "orbit: stdin: line 1: invalid JSON: unexpected EOF\n"},
	} {
		res := p.runIn(tt.in, false, "decide", "--stdin")
		if res.code != exitUsage || !strings.HasPrefix(res.stderr, tt.want) {
			t.Errorf("decide --stdin < %q: exit %d, stderr %q; want exit 2, %q", tt.in, res.code, res.stderr, tt.want)
		}
	}
	if p.read(journalRel) != before {
		t.Errorf("a refused request changed the journal")
	}
}

// TestDecideEnumerationsAnyCase: enumerations in any case, written
// canonically; a misspelling gets "did you mean"; a missing flag is
// "required".
func TestDecideEnumerationsAnyCase(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	res := p.run("decide", "--json=decision,category,depth", "--title", "Adopt ruff", "--category", "Quality", "--impact", "LOW",
		"--irreversible", "--decision", "approved", "--reason", "fast", "--depth", "Light")
	if res.code != exitOK {
		t.Fatalf("decide in mixed case: exit %d\n%s", res.code, res.stderr)
	}
	if got := decoded(t, res.stdout); got["decision"] != "APPROVED" || got["category"] != "quality" || got["depth"] != "light" {
		t.Errorf("decide in mixed case printed %s; want the canonical values", res.stdout)
	}
	if !strings.Contains(p.read(journalRel), `"category":"quality","input":"Adopt ruff","decision":"APPROVED"`) {
		t.Errorf("the journal line does not hold the canonical values")
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--title", "x", "--category", "featur", "--impact", "low", "--reversible"}, `--category "featur" is not allowed (allowed: feature, architecture, quality, scope, deploy); did you mean "feature"?`},
		{[]string{"--title", "x", "--impact", "low", "--reversible"}, `--category is required (allowed: feature`},
		{[]string{"--category", "quality", "--impact", "low", "--reversible"}, `--title is required`},
	} {
		res := p.run(append([]string{"decide"}, tt.args...)...)
		if res.code != exitUsage || !strings.Contains(res.stderr, tt.want) {
			t.Errorf("decide %q: exit %d, stderr %q; want exit 2 and %q", tt.args, res.code, res.stderr, tt.want)
		}
	}
}

// TestDecideDryRunAndDepth: a dry run classifies a deep item with its
// decision open and no id; a depth above the matrix's is not auto-approved.
func TestDecideDryRunAndDepth(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	res := p.run("decide", "--dry-run", "--json", "--title", "Drop the v1 API", "--category", "scope", "--impact", "high", "--irreversible")
	if res.code != exitOK {
		t.Fatalf("decide --dry-run of a deep item: exit %d\n%s", res.code, res.stderr)
	}
	got := decoded(t, res.stdout)
	if got["id"] != nil || got["next_id"] != "iter-3-3" || got["decision"] != nil || got["tier"] != "deep_think" || got["depth"] != "heavy" {
		t.Errorf("decide --dry-run printed %s; want id null, next_id iter-3-3, decision open, deep_think heavy", res.stdout)
	}
	res = p.run("decide", "--title", "Rewrite the billing core", "--category", "quality", "--impact", "low", "--reversible", "--depth", "heavy")
	if res.code != exitUsage || !strings.Contains(res.stderr, "--decision is required") || !strings.Contains(res.stderr, "deep_think") {
		t.Errorf("--depth heavy on a low-impact item: exit %d, stderr %q; want it raised to deep_think, a decision required", res.code, res.stderr)
	}
}

// TestDecideKeyIsIdempotent: a retried hook with the same key records one
// decision and answers it both times.
func TestDecideKeyIsIdempotent(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	args := []string{"decide", "--json=id,written,existing", "--key", "hook-7f3a", "--title", "Pin eslint", "--category", "quality", "--impact", "low", "--reversible"}
	first := decoded(t, p.mustRun(args...).stdout)
	again := p.mustRun(args...)
	second := decoded(t, again.stdout)
	if first["id"] != second["id"] || first["written"] != true || second["written"] != false || second["existing"] != true {
		t.Errorf("the same key twice: %v then %v; want the same id, written then existing", first, second)
	}
	if n := strings.Count(p.read(journalRel), "hook-7f3a"); n != 1 {
		t.Errorf("the journal holds the key %d times; want 1", n)
	}
	if !strings.Contains(again.stderr, "already in the journal") {
		t.Errorf("second run stderr %q; want a note that nothing was written", again.stderr)
	}
}

// TestDurations: days and weeks are durations.
func TestDurations(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	for _, args := range [][]string{{"stale", "--older-than", "2d"}, {"trust", "--since", "7d"}, {"log", "--since", "2w"}, {"stale", "--older-than", "1d12h"}} {
		if res := p.run(args...); res.code != exitOK && res.code != exitFindings {
			t.Errorf("orbit %s: exit %d, stderr %q", strings.Join(args, " "), res.code, res.stderr)
		}
	}
	if res := p.run("stale", "--older-than", "2x"); res.code != exitUsage || strings.Contains(res.stderr, "time: unknown unit") {
		t.Errorf("--older-than 2x: exit %d, stderr %q; want our own usage error", res.code, res.stderr)
	}
}

// TestRetroRetraction: a verdict taken back with PENDING, as an event; the
// decision is unverified again and show says so.
func TestRetroRetraction(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	p.mustRun("retro", "iter-3-1", "correct", "--evidence", "looked fine")
	if res := p.run("retro", "iter-3-1", "PENDING"); res.code != exitUsage || !strings.Contains(res.stderr, "--evidence is required") {
		t.Errorf("retro PENDING without evidence: exit %d, %q; want a usage error asking for evidence", res.code, res.stderr)
	}
	res := p.mustRun("retro", "--json", "iter-3-1", "pending", "--evidence", "judged the wrong decision")
	if got := decoded(t, res.stdout); got["outcome"] != "PENDING" || got["previous_outcome"] != "CORRECT" {
		t.Errorf("retro pending printed %s", res.stdout)
	}
	show := decoded(t, p.mustRun("show", "--json", "iter-3-1").stdout)
	events, _ := show["events"].([]any)
	if show["outcome"] != "PENDING" || len(events) != 2 {
		t.Errorf("show after a retraction: outcome %v, %d events; want PENDING and both events", show["outcome"], len(events))
	}
	text := p.mustRun("show", "iter-3-1").stdout
	if !strings.Contains(text, "PENDING (verdict taken back)") || !strings.Contains(text, "judged the wrong decision") {
		t.Errorf("show does not say the verdict was taken back:\n%s", text)
	}
}

// TestLogFilters: what awaits a human, by tier, text, iteration and time.
func TestLogNewFilters(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--decision", "needs_review"}, "iter-2-1"},
		{[]string{"--tier", "DEEP_THINK"}, "iter-1-2"},
		{[]string{"--grep", "grpc"}, "iter-1-2"},
		{[]string{"--iteration", "3"}, "iter-3-2,iter-3-1"},
		{[]string{"--since", "2026-03-08T11:00:00Z"}, "iter-3-2,iter-3-1"},
	} {
		res := p.mustRun(append([]string{"log", "--json=id"}, tt.args...)...)
		var got []struct{ ID string }
		json.Unmarshal([]byte(res.stdout), &got)
		var ids []string
		for _, g := range got {
			ids = append(ids, g.ID)
		}
		if strings.Join(ids, ",") != tt.want {
			t.Errorf("log %q = %v; want %s", tt.args, ids, tt.want)
		}
	}
}

// TestVersion: the version, the revision and the schema, as text and JSON.
func TestVersionCommand(t *testing.T) {
	res := orbit(t, env{}, "version", "--json")
	got := decoded(t, res.stdout)
	if res.code != exitOK || got["version"] == nil || got["schema"] == nil || !strings.HasPrefix(got["go"].(string), "go") {
		t.Errorf("version --json: exit %d, %s", res.code, res.stdout)
	}
	if res := orbit(t, env{}, "version"); !strings.HasPrefix(res.stdout, "orbit ") {
		t.Errorf("version: %q", res.stdout)
	}
}

// TestCompletionValues: shell completion offers the enumerations and the
// decision ids.
func TestCompletionValues(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	res := p.run("__complete", "log", "--category", "arc")
	if !strings.HasPrefix(res.stdout, "architecture\n") {
		t.Errorf("completing --category arc: %q", res.stdout)
	}
	res = p.run("__complete", "show", "iter-3")
	if !strings.Contains(res.stdout, "iter-3-1\tDeploy to production on Friday") || strings.Contains(res.stdout, "iter-2-1") {
		t.Errorf("completing show iter-3: %q", res.stdout)
	}
	if res := orbit(t, env{}, "completion", "bash"); res.code != exitOK || !strings.Contains(res.stdout, "bash completion") {
		t.Errorf("completion bash: exit %d", res.code)
	}
}
