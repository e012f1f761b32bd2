package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLogGolden pins the terminal and piped renderings of `orbit log` on a
// small fixed journal (refresh with -update).
func TestLogGolden(t *testing.T) {
	tests := []struct {
		name   string
		tty    bool
		args   []string
		golden string
	}{
		{name: "terminal", tty: true, golden: "log_terminal.golden"},
		{name: "piped", tty: false, golden: "log_piped.golden"},
		{name: "terminal, incorrect only", tty: true, args: []string{"--outcome", "INCORRECT"}, golden: "log_terminal_incorrect.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := projectWith(t, "journal.jsonl")
			args := append([]string{"log"}, tt.args...)
			var res result
			if tt.tty {
				res = p.runTTY(args...)
			} else {
				res = p.run(args...)
			}
			if res.code != exitOK {
				t.Fatalf("log: exit %d; stderr %q", res.code, res.stderr)
			}
			if res.stderr != "" {
				t.Errorf("log stderr = %q; want empty", res.stderr)
			}
			goldenCmd(t, tt.golden, res.stdout)
		})
	}
}

func TestLogPipedFormat(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	res := p.mustRun("log")
	got := lines(res.stdout)
	if len(got) != 6 {
		t.Fatalf("log piped: %d lines; want 6 (no header):\n%s", len(got), res.stdout)
	}
	for i, l := range got {
		if n := strings.Count(l, "\t"); n != 9 {
			t.Errorf("line %d has %d tabs; want 9 (10 columns): %q", i+1, n, l)
		}
	}
	// A tab inside a cell must not make a new column.
	want := "iter-2-2\t2\t2026-03-08T10:25:00Z\tquick_review\tmedium\tfeature\tAPPROVED\t0.8\tPENDING\tAdd CSV export"
	if got[2] != want {
		t.Errorf("line 3 = %q; want %q", got[2], want)
	}
	// Piped output is never truncated.
	if !strings.HasSuffix(got[3], "\tSplit the integration test suite into fast and slow tiers so CI stays under ten minutes") {
		t.Errorf("line 4 = %q; want the whole input", got[3])
	}
}

func TestLogFilters(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // ids, newest first
	}{
		{name: "all", args: []string{"--limit", "0"}, want: "iter-3-2,iter-3-1,iter-2-2,iter-2-1,iter-1-2,iter-1-1"},
		{name: "default limit covers a small journal", want: "iter-3-2,iter-3-1,iter-2-2,iter-2-1,iter-1-2,iter-1-1"},
		{name: "limit", args: []string{"--limit", "2"}, want: "iter-3-2,iter-3-1"},
		{name: "limit shorthand", args: []string{"-n", "1"}, want: "iter-3-2"},
		{name: "category", args: []string{"--category", "scope"}, want: "iter-3-2,iter-1-1"},
		{name: "category without decisions", args: []string{"--category", "quality", "--outcome", "INCORRECT"}, want: ""},
		{name: "outcome correct", args: []string{"--outcome", "CORRECT"}, want: "iter-2-1,iter-1-1"},
		{name: "outcome incorrect", args: []string{"--outcome", "INCORRECT"}, want: "iter-1-2"},
		{name: "outcome pending", args: []string{"--outcome", "PENDING"}, want: "iter-3-2,iter-3-1,iter-2-2"},
		{name: "filter then limit", args: []string{"--outcome", "PENDING", "--limit", "1"}, want: "iter-3-2"},
		{name: "category and outcome", args: []string{"--category", "architecture", "--outcome", "INCORRECT"}, want: "iter-1-2"},
	}
	p := projectWith(t, "journal.jsonl")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := p.run(append([]string{"log"}, tt.args...)...)
			if res.code != exitOK {
				t.Fatalf("log %q: exit %d; stderr %q", tt.args, res.code, res.stderr)
			}
			if got := strings.Join(firstColumn(res.stdout), ","); got != tt.want {
				t.Errorf("log %q = %s; want %s", tt.args, got, tt.want)
			}
		})
	}
}

func TestLogEmpty(t *testing.T) {
	tests := []struct {
		name string
		tty  bool
		want string
	}{
		{name: "terminal", tty: true, want: "no decisions\n"},
		{name: "piped", tty: false, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProject(t)
			var res result
			if tt.tty {
				res = p.runTTY("log")
			} else {
				res = p.run("log")
			}
			if res.code != exitOK || res.stdout != tt.want || res.stderr != "" {
				t.Errorf("log on an empty journal = exit %d, stdout %q, stderr %q; want 0, %q, \"\"", res.code, res.stdout, res.stderr, tt.want)
			}
		})
	}
}

func TestLogJSON(t *testing.T) {
	p := projectWith(t, "journal.jsonl")

	res := p.mustRun("log", "--json", "--limit", "2")
	var all []map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &all); err != nil {
		t.Fatalf("log --json does not parse: %v\n%s", err, res.stdout)
	}
	if len(all) != 2 {
		t.Fatalf("log --json --limit 2: %d objects; want 2", len(all))
	}
	var raws []json.RawMessage
	json.Unmarshal([]byte(res.stdout), &raws)
	if got, want := strings.Join(objectKeys(t, raws[0]), ","), "id,iteration,ts,tier,depth,category,input,decision,reason,next_action,verification,retrograde,confidence,requestor,context,request_id,outcome,outcome_ts,evidence,voided,void_reason,line"; got != want {
		t.Errorf("log --json keys = %s; want %s", got, want)
	}
	first := all[0]
	for k, want := range map[string]any{"id": "iter-3-2", "iteration": 3.0, "outcome": "PENDING", "outcome_ts": nil, "evidence": nil,
		"requestor": nil, "confidence": 1.0, "line": 6.0, "input": "Défer dark mode — next sprint"} {
		if first[k] != want {
			t.Errorf("log --json [0].%s = %#v; want %#v", k, first[k], want)
		}
	}

	if r, ok := first["retrograde"].(map[string]any); !ok || r["previous_id"] != "iter-2-1" || r["outcome"] != "CORRECT" {
		t.Errorf("log --json [0].retrograde = %#v; want {previous_id: iter-2-1, outcome: CORRECT}, as in the journal line", first["retrograde"])
	}

	tests := []struct {
		name string
		json string
		keys string
	}{
		{name: "two fields", json: "id,outcome", keys: "id,outcome"},
		{name: "order as asked", json: "outcome,id", keys: "outcome,id"},
		{name: "one field", json: "confidence", keys: "confidence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := p.mustRun("log", "--limit", "0", "--json="+tt.json)
			var objs []json.RawMessage
			if err := json.Unmarshal([]byte(res.stdout), &objs); err != nil {
				t.Fatalf("log --json=%s does not parse: %v\n%s", tt.json, err, res.stdout)
			}
			if len(objs) != 6 {
				t.Fatalf("log --json=%s: %d objects; want 6", tt.json, len(objs))
			}
			for i, o := range objs {
				if got := strings.Join(objectKeys(t, o), ","); got != tt.keys {
					t.Errorf("object %d keys = %s; want %s", i, got, tt.keys)
				}
			}
		})
	}

	res = p.mustRun("log", "--limit", "0", "--json=id,outcome")
	var pairs []struct{ ID, Outcome string }
	if err := json.Unmarshal([]byte(res.stdout), &pairs); err != nil {
		t.Fatal(err)
	}
	want := []struct{ ID, Outcome string }{{"iter-3-2", "PENDING"}, {"iter-3-1", "PENDING"}, {"iter-2-2", "PENDING"},
		{"iter-2-1", "CORRECT"}, {"iter-1-2", "INCORRECT"}, {"iter-1-1", "CORRECT"}}
	if len(pairs) != len(want) {
		t.Fatalf("log --json=id,outcome = %+v; want %+v", pairs, want)
	}
	for i := range want {
		if pairs[i] != want[i] {
			t.Errorf("log --json=id,outcome [%d] = %+v; want %+v", i, pairs[i], want[i])
		}
	}

	// No decisions: an empty array, on a terminal too.
	empty := newProject(t)
	for _, r := range []result{empty.run("log", "--json"), empty.runTTY("log", "--json")} {
		if strings.TrimSpace(r.stdout) != "[]" {
			t.Errorf("log --json on an empty journal = %q; want []", r.stdout)
		}
	}
}

func TestLogJSONUnknownField(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	res := p.run("log", "--json=id,bogus")
	if res.code != exitUsage {
		t.Errorf("log --json=id,bogus: exit %d; want %d", res.code, exitUsage)
	}
	if !strings.Contains(res.stderr, `unknown JSON field "bogus" (available: id, iteration, ts, tier, depth, category, input, decision, reason, next_action, verification, retrograde, confidence, requestor, context, request_id, outcome, outcome_ts, evidence, voided, void_reason, line)`) {
		t.Errorf("stderr %q does not name the allowed fields", res.stderr)
	}
	if res.stdout != "" {
		t.Errorf("stdout = %q; want empty", res.stdout)
	}
}
