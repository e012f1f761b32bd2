package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// decisionLine is a valid journal line for id.
func decisionLine(id string, iteration int) string {
	return `{"id":"` + id + `","iteration":` + strconv.Itoa(iteration) + `,"ts":"2026-03-08T12:00:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"Appended by a hook","decision":"APPROVED","reason":"echo >>","next_action":"Commit.","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"},"confidence":0.9}`
}

func TestSyncAppendedLine(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	res := p.mustRun("sync")
	want := "synced: +6 decisions, +3 outcome events, 0 new rejected lines\nindex: 6 decisions, 3 outcome events, 0 rejected lines, 0 warnings\n"
	if res.stdout != want || res.stderr != "" {
		t.Errorf("first sync = %q, stderr %q; want %q, \"\"", res.stdout, res.stderr, want)
	}

	res = p.mustRun("sync")
	want = "synced: +0 decisions, +0 outcome events, 0 new rejected lines\nindex: 6 decisions, 3 outcome events, 0 rejected lines, 0 warnings\n"
	if res.stdout != want {
		t.Errorf("sync with nothing new = %q; want %q", res.stdout, want)
	}

	p.appendRaw(journalRel, decisionLine("iter-4-1", 4)+"\n")
	res = p.mustRun("sync")
	want = "synced: +1 decision, +0 outcome events, 0 new rejected lines\nindex: 7 decisions, 3 outcome events, 0 rejected lines, 0 warnings\n"
	if res.stdout != want || res.stderr != "" {
		t.Errorf("sync after an append = %q, stderr %q; want %q, \"\"", res.stdout, res.stderr, want)
	}
	if got := firstColumn(p.mustRun("log", "-n", "1").stdout); len(got) != 1 || got[0] != "iter-4-1" {
		t.Errorf("newest decision after sync = %q; want iter-4-1", got)
	}
}

func TestSyncBadAppendedLine(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	p.mustRun("sync")
	p.appendRaw(journalRel, `{"id":"iter-4-1","iteration":4,"tier":"sometimes"}`+"\n")

	res := p.run("sync")
	if res.code != exitOK {
		t.Errorf("sync: exit %d; want 0 (the line is reported, not fatal)", res.code)
	}
	wantErr := "orbit: .claude/ceo-loop-decisions.jsonl:7: missing required fields: depth, category, input, decision; " +
		`tier "sometimes" is not allowed (allowed: auto_approve, quick_review, deep_think, escalate); line kept in the file, not indexed` + "\n"
	if res.stderr != wantErr {
		t.Errorf("sync stderr = %q; want %q", res.stderr, wantErr)
	}
	want := "synced: +0 decisions, +0 outcome events, 1 new rejected line\nindex: 6 decisions, 3 outcome events, 1 rejected line, 0 warnings\n"
	if res.stdout != want {
		t.Errorf("sync stdout = %q; want %q", res.stdout, want)
	}
	// Reported once: the next command does not repeat it.
	if res := p.mustRun("sync"); res.stderr != "" {
		t.Errorf("second sync stderr = %q; want empty", res.stderr)
	}
	// The line stays in the file.
	if !strings.Contains(p.read(journalRel), `"tier":"sometimes"`) {
		t.Errorf("the rejected line is gone from the journal")
	}
}

func TestSyncBadLineNamedByLogToo(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	p.appendRaw(journalRel, "\n{oops\n")
	res := p.run("log", "-n", "1")
	if res.code != exitOK {
		t.Fatalf("log: exit %d; stderr %q", res.code, res.stderr)
	}
	if !strings.HasPrefix(res.stderr, "orbit: .claude/ceo-loop-decisions.jsonl:8: invalid JSON") {
		t.Errorf("log stderr = %q; want the rejected line named as .claude/ceo-loop-decisions.jsonl:8", res.stderr)
	}
	if got := firstColumn(res.stdout); len(got) != 1 || got[0] != "iter-3-2" {
		t.Errorf("log stdout = %q; want iter-3-2", res.stdout)
	}
}

// TestSyncTornLine appends half a line: sync leaves it while the writer may
// still finish it, says so once the file has gone unwritten for a while,
// and indexes the line once it is finished.
func TestSyncTornLine(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	p.mustRun("sync")
	line := decisionLine("iter-4-1", 4)
	p.appendRaw(journalRel, line[:40])
	// Written just now, by the commands' clock.
	if err := os.Chtimes(p.path(journalRel), testNow, testNow); err != nil {
		t.Fatal(err)
	}

	for range 2 {
		res := p.mustRun("sync")
		if !strings.HasPrefix(res.stdout, "synced: +0 decisions") || res.stderr != "" {
			t.Errorf("sync with a torn line = %q, stderr %q; want +0 decisions and nothing on stderr", res.stdout, res.stderr)
		}
	}
	// Unwritten for a minute: a write cut short.
	if err := os.Chtimes(p.path(journalRel), testNow.Add(-time.Minute), testNow.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	res := p.mustRun("sync")
	if want := "orbit: .claude/ceo-loop-decisions.jsonl:7: warning: last line has no newline"; !strings.HasPrefix(res.stderr, want) {
		t.Errorf("sync with the same torn line a minute later: stderr %q; want it to start %q", res.stderr, want)
	}

	p.appendRaw(journalRel, line[40:]+"\n")
	res = p.mustRun("sync")
	want := "synced: +1 decision, +0 outcome events, 0 new rejected lines\nindex: 7 decisions, 3 outcome events, 0 rejected lines, 0 warnings\n"
	if res.stdout != want || res.stderr != "" {
		t.Errorf("sync after the line was finished = %q, stderr %q; want %q, \"\"", res.stdout, res.stderr, want)
	}
}

func TestSyncJSON(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	res := p.mustRun("sync", "--json")
	var got struct {
		Decisions int   `json:"decisions_added"`
		Events    int   `json:"events_added"`
		Problems  []any `json:"problems"`
		Rewritten []any `json:"rewritten"`
		Recovered []any `json:"recovered_files"`
		Index     struct {
			Decisions int `json:"decisions"`
			Events    int `json:"outcome_events"`
			Correct   int `json:"correct"`
			Incorrect int `json:"incorrect"`
		} `json:"index"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("sync --json does not parse: %v\n%s", err, res.stdout)
	}
	if got.Decisions != 6 || got.Events != 3 || got.Problems == nil || got.Rewritten == nil || got.Recovered == nil ||
		got.Index.Decisions != 6 || got.Index.Correct != 2 || got.Index.Incorrect != 1 {
		t.Errorf("sync --json = %+v; want 6 decisions, 3 events, empty lists, index 6 decisions 2 correct 1 incorrect", got)
	}
	want := "decisions_added,events_added,records_added,problems,rewritten,recovered_files,index"
	if keys := strings.Join(objectKeys(t, []byte(res.stdout)), ","); keys != want {
		t.Errorf("sync --json keys = %s; want %s", keys, want)
	}
}

// TestSyncRewrittenJournal edits a past line: the next sync says so loudly,
// saves what the index held from that line on, and rebuilds from the file.
func TestSyncRewrittenJournal(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	p.mustRun("sync")
	original := lines(p.read(journalRel))
	p.write(journalRel, strings.Replace(p.read(journalRel), "Streaming needs it.", "Streaming needs IT.", 1))

	res := p.mustRun("sync")
	recovered := ".claude/orbit-recovered-ceo-loop-decisions-20260309T120000.000000000Z.jsonl"
	wantErr := "orbit: .claude/ceo-loop-decisions.jsonl:2: append-only promise broken: bytes already indexed have changed; " +
		`first differing line 2 (line 2 changed (the index holds record "iter-1-2" from it)); the index is rebuilt from the file as it is now; ` +
		"the records the index held from that line on are saved in " + recovered + "\n"
	if res.stderr != wantErr {
		t.Errorf("sync stderr = %q; want %q", res.stderr, wantErr)
	}
	if want := "index: 6 decisions, 3 outcome events, 0 rejected lines, 0 warnings\n"; !strings.HasSuffix(res.stdout, want) {
		t.Errorf("sync stdout = %q; want it to end %q", res.stdout, want)
	}
	if got, want := p.read(recovered), strings.Join(original[1:], "\n")+"\n"; got != want {
		t.Errorf("recovered file =\n%s\nwant the original lines 2 on:\n%s", got, want)
	}
	if res := p.run("verify"); res.code != exitOK {
		t.Errorf("verify after the rebuild: exit %d\n%s", res.code, res.stdout)
	}
	res = p.mustRun("log", "--limit", "0", "--json=id,reason")
	if !strings.Contains(res.stdout, `"reason": "Streaming needs IT."`) {
		t.Errorf("log after the rebuild does not show the file as it is now:\n%s", res.stdout)
	}
}

// TestConcurrentSyncs runs what hooks do, at once: each of several
// invocations appends a line with O_APPEND and syncs.
func TestConcurrentSyncs(t *testing.T) {
	const n = 8
	p := projectWith(t, "journal.jsonl")
	p.mustRun("sync")
	var wg sync.WaitGroup
	results := make([]result, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.appendRaw(journalRel, decisionLine("hook-"+strconv.Itoa(i), 10+i)+"\n")
			results[i] = orbit(t, env{}, "--root", p.root, "sync")
		}()
	}
	wg.Wait()
	for i, res := range results {
		if res.code != exitOK || res.stderr != "" {
			t.Errorf("sync %d: exit %d, stderr %q; want 0 and nothing on stderr", i, res.code, res.stderr)
		}
	}
	res := p.mustRun("sync")
	if want := "synced: +0 decisions, +0 outcome events, 0 new rejected lines\nindex: 14 decisions, 3 outcome events, 0 rejected lines, 0 warnings\n"; res.stdout != want {
		t.Errorf("sync after the concurrent ones = %q; want %q", res.stdout, want)
	}
	if res := p.run("verify"); res.code != exitOK {
		t.Errorf("verify: exit %d\n%s", res.code, res.stdout)
	}
}
