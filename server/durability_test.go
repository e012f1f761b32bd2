package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/server"
)

// TestDecideBesideCLI: decisions posted to the server while another
// process's `orbit decide` appends to the same journal (a hook) get
// distinct ids, and every one is in the journal once.
func TestDecideBesideCLI(t *testing.T) {
	e := newEnv(t, synthJournal(t, 60), server.Config{})
	e.serve()
	// The other process: its own connection to the index, as a separate
	// orbit decide has.
	other, err := db.Open(context.Background(), e.proj.DB, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	oix := journal.NewIndex(other, e.proj)
	before := len(e.journalIDs())
	const posts, cli = 60, 20
	var mu sync.Mutex
	var ids []string
	var wg sync.WaitGroup
	wg.Go(func() {
		yes := true
		for i := range cli {
			res, err := ceo.Decide(context.Background(), oix, ceo.Input{Title: fmt.Sprintf("Hook decision %d", i), Category: "quality", Impact: "low", Reversible: &yes}, ceo.Options{})
			if err != nil {
				t.Errorf("ceo.Decide beside the server: %v", err)
				return
			}
			mu.Lock()
			ids = append(ids, res.Decision.ID)
			mu.Unlock()
		}
	})
	for i := range posts {
		wg.Go(func() {
			r := e.post("/api/v1/decisions", fmt.Sprintf(`{"title":"Served decision %d","category":"quality","impact":"low","reversible":true}`, i))
			if r.status != 201 {
				t.Errorf("POST %d: %s", i, r)
				return
			}
			var d decided
			json.Unmarshal(r.body, &d)
			mu.Lock()
			ids = append(ids, d.ID)
			mu.Unlock()
		})
	}
	wg.Wait()
	journalIDs := e.journalIDs()
	if got, want := len(journalIDs), before+posts+cli; got != want {
		t.Errorf("journal has %d lines; want %d", got, want)
	}
	seen := map[string]bool{}
	for _, id := range journalIDs {
		if seen[id] {
			t.Errorf("id %s is in the journal twice", id)
		}
		seen[id] = true
	}
	for _, id := range ids {
		if !seen[id] {
			t.Errorf("%s was acknowledged but is not in the journal", id)
		}
	}
	// The server's index catches up with the other process's lines.
	if !eventually(func() bool {
		var p page
		r := e.get(fmt.Sprintf("/api/v1/decisions?limit=%d", posts+cli))
		json.Unmarshal(r.body, &p.Items)
		n := 0
		for _, it := range p.Items {
			if slices.Contains(ids, it.ID) {
				n++
			}
		}
		return n == posts+cli
	}) {
		t.Errorf("the server does not list every decision of both writers")
	}
}

// TestDecideStateFileUnreadable: when the loop's state file cannot be
// read, a decision is either refused and not written, or written and
// acknowledged — never written and answered with an error a client would
// retry (recording it twice).
func TestDecideStateFileUnreadable(t *testing.T) {
	e := newEnv(t, synthJournal(t, 40), server.Config{})
	e.serve()
	ids := e.journalIDs()
	if err := os.WriteFile(e.proj.Path(project.StateFile), []byte(`{"active": true, "iteration": 5,`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, body, file string
	}{
		{"decision with an iteration", "/api/v1/decisions", `{"title":"Pin the linter version","category":"quality","impact":"low","reversible":true,"iteration":9}`, project.DecisionsFile},
		{"decision without one", "/api/v1/decisions", `{"title":"Pin the formatter version","category":"quality","impact":"low","reversible":true}`, project.DecisionsFile},
		{"retro", "/api/v1/retro", `{"id":"` + ids[0] + `","outcome":"CORRECT"}`, project.RetroFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(e.lines(tt.file))
			r := e.post(tt.path, tt.body)
			written := len(e.lines(tt.file)) - n
			switch {
			case r.status == 201 && written == 1:
			case r.status >= 400 && written == 0:
			default:
				t.Errorf("POST %s %s: status %d with %d line(s) appended to %s; want 201 with the line, or an error with none (a client retrying this error records it twice)\n%s",
					tt.path, tt.body, r.status, written, tt.file, strings.TrimSpace(string(r.body)))
			}
		})
	}
}

// TestMethodNotAllowedIsProblem: every API error is a problem detail, a
// wrong method included.
func TestMethodNotAllowedIsProblem(t *testing.T) {
	e := newEnv(t, synthJournal(t, 10), server.Config{}).handler()
	for _, tt := range []struct{ method, path string }{
		{"PUT", "/api/v1/decisions"},
		{"DELETE", "/api/v1/decisions/iter-1-1"},
		{"PATCH", "/api/v1/trust"},
		{"GET", "/api/v1/retro"},
		{"DELETE", "/"},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := e.request(tt.method, tt.path, testToken, strings.NewReader("{}"))
			if r.status != 405 {
				t.Fatalf("%s %s: status %d; want 405", tt.method, tt.path, r.status)
			}
			if allow := r.header.Get("Allow"); allow == "" || strings.Contains(allow, tt.method) {
				t.Errorf("%s %s: Allow %q; want the methods the path serves", tt.method, tt.path, allow)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("%s %s: %d with Content-Type %q, body %q; want application/problem+json (openapi.json: \"Errors are RFC 9457 problem details\")",
					tt.method, tt.path, r.status, ct, r.body)
			}
		})
	}
}

// TestPagingStableUnderAppends: a cursor keeps its place while decisions
// are appended: no duplicate, no gap.
func TestPagingStableUnderAppends(t *testing.T) {
	e := newEnv(t, synthJournal(t, 50), server.Config{})
	e.serve()
	want := e.storeIDs(db.DecisionFilter{})
	r := e.get("/api/v1/decisions?limit=20")
	p := r.page(t)
	got := []string{}
	for _, it := range p.Items {
		got = append(got, it.ID)
	}
	for i := range 5 {
		wantStatus(t, "POST", e.post("/api/v1/decisions", fmt.Sprintf(`{"title":"Interleaved %d","category":"quality","impact":"low","reversible":true}`, i)), 201)
	}
	time.Sleep(50 * time.Millisecond)
	got = append(got, e.walkFrom("", 20, p.Next)...)
	if !slices.Equal(got, want) {
		t.Errorf("pages across appends: %d ids; want the %d there were when paging began", len(got), len(want))
	}
}

// TestDecideLineTooLong: a request under MaxBody whose journal line would
// be longer than the journal's line limit is refused, or recorded so that
// the index has it; it must never be acknowledged while the sync rejects
// its line (the next decision would then reuse its id).
func TestDecideLineTooLong(t *testing.T) {
	e := newEnv(t, synthJournal(t, 40), server.Config{})
	e.serve()
	// The body fits MaxBody; the line, with the fields orbit adds, does not
	// fit journal.MaxLineBytes.
	title := strings.Repeat("x", journal.MaxLineBytes-120)
	body := `{"title":"` + title + `","category":"quality","impact":"low","reversible":true}`
	if len(body) > server.MaxBody {
		t.Fatalf("body of %d bytes exceeds MaxBody %d: shorten the title", len(body), server.MaxBody)
	}
	r := e.post("/api/v1/decisions", body)
	var first decided
	switch r.status {
	case 422:
		if got := len(e.journalIDs()); got != 40 {
			t.Errorf("refused with 422 but the journal has %d lines; want 40", got)
		}
	case 201:
		r.decodeJSON(t, &first)
		if !e.indexed(first.ID) {
			t.Errorf("POST decisions with a %d-byte title: 201 with id %s, but the index does not have it (the sync rejected the line as longer than %d bytes)",
				len(title), first.ID, journal.MaxLineBytes)
		}
	default:
		t.Fatalf("POST decisions with a %d-byte title: %s; want 422, or 201 and indexed", len(title), r)
	}
	r = e.post("/api/v1/decisions", validDecision)
	wantStatus(t, "the next POST", r, 201)
	var next decided
	r.decodeJSON(t, &next)
	if first.ID != "" && next.ID == first.ID {
		t.Errorf("two decisions acknowledged with the same id %s", next.ID)
	}
	seen := map[string]bool{}
	for _, id := range e.journalIDs() {
		if seen[id] {
			t.Errorf("id %s is in the journal twice", id)
		}
		seen[id] = true
	}
}

// TestRetroLineTooLong: an outcome whose retrograde line would be longer
// than the journal's line limit is refused, or recorded so that it counts;
// never acknowledged while the sync rejects its line.
func TestRetroLineTooLong(t *testing.T) {
	e := newEnv(t, marshalLines(t, ptr(fixedDecision("iter-1-1", 1, "quality"))), server.Config{})
	e.serve()
	evidence := strings.Repeat("e", journal.MaxLineBytes-60)
	body := `{"id":"iter-1-1","outcome":"INCORRECT","evidence":"` + evidence + `"}`
	if len(body) > server.MaxBody {
		t.Fatalf("body of %d bytes exceeds MaxBody %d", len(body), server.MaxBody)
	}
	r := e.post("/api/v1/retro", body)
	outcome := func() string {
		var d struct {
			Outcome string `json:"outcome"`
		}
		e.get("/api/v1/decisions/iter-1-1").decodeJSON(t, &d)
		return d.Outcome
	}
	switch r.status {
	case 422:
		if n := len(e.lines(project.RetroFile)); n != 0 {
			t.Errorf("refused with 422 but the retrograde journal has %d lines", n)
		}
	case 201:
		if got := outcome(); got != "INCORRECT" {
			t.Errorf("POST retro with %d bytes of evidence: 201, but the decision's outcome is %s (the sync rejected the line as longer than %d bytes); want INCORRECT",
				len(evidence), got, journal.MaxLineBytes)
		}
	default:
		t.Fatalf("POST retro with %d bytes of evidence: %s; want 422, or 201 and applied", len(evidence), r)
	}
}
