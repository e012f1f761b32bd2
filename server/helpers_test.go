package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/internal/projecttest"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/server"
	"github.com/orbit-loop/orbit/synth"
)

// testNow is the clock of every server in these tests.
var testNow = time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)

// testToken is the bearer token of every server in these tests.
const testToken = "0123456789abcdef0123456789abcdef"

// env is a temporary project with its index open and a server over it.
type env struct {
	tb    testing.TB
	ctx   context.Context
	proj  project.Project
	store *db.Store
	ix    *journal.Index
	srv   *server.Server
	// url is the base URL of the server once served (serve or handler).
	url string
}

// newProject creates a temporary project whose decision journal holds
// journalText (no journal file when empty).
func newProject(tb testing.TB, journalText string) project.Project {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		tb.Fatal(err)
	}
	p, err := project.New(dir, "")
	if err != nil {
		tb.Fatal(err)
	}
	if journalText != "" {
		if err := os.WriteFile(p.Path(project.DecisionsFile), []byte(journalText), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

// synthJournal is a synthetic journal of n decisions.
func synthJournal(tb testing.TB, n int) string {
	tb.Helper()
	var b bytes.Buffer
	if err := synth.Generate(&b, synth.Options{Decisions: n, Seed: 7}); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

// newEnv opens the index of a project holding journalText and a server over
// it with cfg (Token, Now, PollInterval defaulted for tests).
func newEnv(tb testing.TB, journalText string, cfg server.Config) *env {
	tb.Helper()
	return newEnvIn(tb, newProject(tb, journalText), cfg)
}

func newEnvIn(tb testing.TB, p project.Project, cfg server.Config) *env {
	tb.Helper()
	ctx := context.Background()
	ix := projecttest.Open(tb, p, testNow)
	store := ix.Store
	if cfg.Token == "" {
		cfg.Token = testToken
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return testNow }
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 20 * time.Millisecond
	}
	srv, err := server.New(ctx, ix, cfg)
	if err != nil {
		tb.Fatalf("server.New: %v", err)
	}
	tb.Cleanup(func() { srv.Close() })
	return &env{tb: tb, ctx: ctx, proj: p, store: store, ix: ix, srv: srv}
}

// handler serves the server's handler with httptest (no committer, no
// poller: for reads).
func (e *env) handler() *env {
	e.tb.Helper()
	ts := httptest.NewServer(e.srv.Handler())
	e.tb.Cleanup(ts.Close)
	e.url = ts.URL
	return e
}

// serve runs the server (Run: committer, poller, graceful shutdown) on a
// loopback port until the test ends; stop shuts it down early and returns
// Run's error.
func (e *env) serve() (stop func() error) {
	e.tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.tb.Fatal(err)
	}
	e.url = "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.Run(ctx, ln) }()
	var stopped bool
	var runErr error
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(20 * time.Second):
				runErr = errors.New("Run did not return 20s after its context was cancelled")
			}
		}
		return runErr
	}
	e.tb.Cleanup(func() {
		if err := stop(); err != nil {
			e.tb.Errorf("Run: %v", err)
		}
	})
	return stop
}

// response is what one request got.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) String() string {
	return http.StatusText(r.status) + ": " + string(r.body)
}

// problem decodes a problem+json body, failing the test when it is not one.
func (r response) problem(tb testing.TB) server.Problem {
	tb.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		tb.Fatalf("Content-Type = %q; want application/problem+json (body %s)", ct, r.body)
	}
	var p server.Problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		tb.Fatalf("problem body %s: %v", r.body, err)
	}
	if p.Status != r.status {
		tb.Errorf("problem status = %d; want the response's %d", p.Status, r.status)
	}
	if p.Title == "" || p.Type == "" {
		tb.Errorf("problem %s lacks a type or a title", r.body)
	}
	return p
}

// decodeJSON decodes the body into v.
func (r response) decodeJSON(tb testing.TB, v any) {
	tb.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		tb.Fatalf("Content-Type = %q; want application/json (body %s)", ct, r.body)
	}
	if err := json.Unmarshal(r.body, v); err != nil {
		tb.Fatalf("decode %s: %v", r.body, err)
	}
}

// request sends a request with an optional bearer token ("" for none).
func (e *env) request(method, path, token string, body io.Reader) response {
	e.tb.Helper()
	req, err := http.NewRequest(method, e.url+path, body)
	if err != nil {
		e.tb.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		e.tb.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return response{status: res.StatusCode, header: res.Header, body: data}
}

func (e *env) get(path string) response {
	e.tb.Helper()
	return e.request("GET", path, "", nil)
}

// post sends body as JSON with the server's token.
func (e *env) post(path, body string) response {
	e.tb.Helper()
	return e.request("POST", path, testToken, strings.NewReader(body))
}

// wantStatus fails the test unless r has status want.
func wantStatus(tb testing.TB, what string, r response, want int) {
	tb.Helper()
	if r.status != want {
		tb.Fatalf("%s: status %d; want %d\n%s", what, r.status, want, r.body)
	}
}

// lines returns a JSONL file's lines as generic objects (none when absent).
func (e *env) lines(rel string) []map[string]any {
	e.tb.Helper()
	data, err := os.ReadFile(e.proj.Path(rel))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		e.tb.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			e.tb.Fatalf("%s:%d is not a JSON object: %v (%q)", rel, n, err, sc.Text())
		}
		out = append(out, m)
	}
	if !bytes.HasSuffix(data, []byte("\n")) && len(data) > 0 {
		e.tb.Errorf("%s does not end with a newline", rel)
	}
	return out
}

// ids returns the ids of the lines of the decision journal, in order.
func (e *env) journalIDs() []string {
	e.tb.Helper()
	var ids []string
	for _, m := range e.lines(project.DecisionsFile) {
		id, _ := m["id"].(string)
		ids = append(ids, id)
	}
	return ids
}

// appendRaw appends s to a project file the way other tools do (O_APPEND,
// one write).
func (e *env) appendRaw(rel, s string) {
	e.tb.Helper()
	f, err := os.OpenFile(e.proj.Path(rel), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		e.tb.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		e.tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		e.tb.Fatal(err)
	}
}

// appendRecords appends records as journal lines to a project file.
func (e *env) appendRecords(rel string, recs ...any) {
	e.tb.Helper()
	var b bytes.Buffer
	for _, r := range recs {
		line, err := journal.Marshal(r)
		if err != nil {
			e.tb.Fatal(err)
		}
		b.Write(line)
	}
	e.appendRaw(rel, b.String())
}

// indexed reports whether the index holds decision id.
func (e *env) indexed(id string) bool {
	e.tb.Helper()
	_, found, err := e.store.Decision(e.ctx, id)
	if err != nil {
		e.tb.Fatal(err)
	}
	return found
}

// fixedDecision is a hand-written decision line.
func fixedDecision(id string, iteration int64, category string) journal.Decision {
	return journal.Decision{
		ID: id, Iteration: iteration, TS: "2026-03-08T09:00:00Z", Tier: "auto_approve", Depth: "trivial", Category: category,
		Input: "past decision " + id, Decision: "APPROVED", Reason: "fine", Verification: "PENDING",
		Retrograde: journal.Retrograde{Outcome: journal.OutcomeNA},
	}
}

// marshalLines renders records as journal text.
func marshalLines(tb testing.TB, recs ...any) string {
	tb.Helper()
	var b strings.Builder
	for _, r := range recs {
		line, err := journal.Marshal(r)
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(line)
	}
	return b.String()
}
