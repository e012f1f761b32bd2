package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/report"
	"github.com/orbit-loop/orbit/server"
	"github.com/orbit-loop/orbit/trust"
)

// page is GET /api/v1/decisions's answer.
type page struct {
	Items []struct {
		ID        string `json:"id"`
		Iteration int64  `json:"iteration"`
		Category  string `json:"category"`
		Outcome   string `json:"outcome"`
	}
	// Next is the before= cursor of the Link header's next page.
	Next string
}

// page reads a page of decisions: the list `orbit log --json` prints, the
// next page in the Link header.
func (r response) page(tb testing.TB) page {
	tb.Helper()
	var p page
	r.decodeJSON(tb, &p.Items)
	if link := r.header.Get("Link"); link != "" {
		target, rel, _ := strings.Cut(link, ">; ")
		if rel != `rel="next"` {
			tb.Fatalf("Link %q; want <…>; rel=\"next\"", link)
		}
		u, err := url.Parse(strings.TrimPrefix(target, "<"))
		if err != nil {
			tb.Fatalf("Link %q: %v", link, err)
		}
		p.Next = u.Query().Get("before")
	}
	return p
}

// storeIDs are the ids of the indexed decisions matching f, newest first.
func (e *env) storeIDs(f db.DecisionFilter) []string {
	e.tb.Helper()
	rows, err := e.store.LatestDecisions(e.ctx, f)
	if err != nil {
		e.tb.Fatal(err)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

// walk follows a listing's next cursors from query and returns every id.
func (e *env) walk(query string, limit int) []string {
	e.tb.Helper()
	return e.walkFrom(query, limit, "")
}

// walkFrom is walk from the cursor before ("": the newest).
func (e *env) walkFrom(query string, limit int, before string) []string {
	e.tb.Helper()
	var ids []string
	for pages := 0; ; pages++ {
		if pages > 1000 {
			e.tb.Fatal("more than 1000 pages: the cursor does not advance")
		}
		q := fmt.Sprintf("/api/v1/decisions?limit=%d%s", limit, query)
		if before != "" {
			q += "&before=" + url.QueryEscape(before)
		}
		r := e.get(q)
		wantStatus(e.tb, "GET "+q, r, 200)
		p := r.page(e.tb)
		if len(p.Items) > limit {
			e.tb.Fatalf("GET %s: %d items; want at most %d", q, len(p.Items), limit)
		}
		for _, it := range p.Items {
			ids = append(ids, it.ID)
		}
		if p.Next == "" {
			return ids
		}
		if len(p.Items) != limit {
			e.tb.Fatalf("GET %s: a page of %d items (< limit %d) has a next cursor %q", q, len(p.Items), limit, p.Next)
		}
		before = p.Next
	}
}

func TestDecisionsPaging(t *testing.T) {
	e := newEnv(t, synthJournal(t, 120), server.Config{}).handler()
	want := e.storeIDs(db.DecisionFilter{})
	if len(want) != 120 {
		t.Fatalf("index holds %d decisions; want 120", len(want))
	}
	for _, limit := range []int{1, 7, 25, 120, 1000} {
		t.Run(fmt.Sprint("limit=", limit), func(t *testing.T) {
			e.tb = t
			if got := e.walk("", limit); !slices.Equal(got, want) {
				t.Errorf("pages of %d: %d ids %v…; want the index's %d, newest first", limit, len(got), head(got), len(want))
			}
		})
	}
	t.Run("default limit", func(t *testing.T) {
		e.tb = t
		r := e.get("/api/v1/decisions")
		wantStatus(t, "GET /api/v1/decisions", r, 200)
		p := r.page(t)
		if len(p.Items) != 50 || p.Next == "" {
			t.Errorf("GET /api/v1/decisions: %d items, next %q; want 50 and a cursor", len(p.Items), p.Next)
		}
	})
}

func head(ids []string) []string { return ids[:min(len(ids), 5)] }

func TestDecisionsFilters(t *testing.T) {
	e := newEnv(t, synthJournal(t, 400), server.Config{}).handler()
	it := int64(3)
	tests := []struct {
		name  string
		query string
		f     db.DecisionFilter
	}{
		{"category", "&category=architecture", db.DecisionFilter{Category: "architecture"}},
		{"outcome CORRECT", "&outcome=CORRECT", db.DecisionFilter{Outcome: "CORRECT"}},
		{"outcome INCORRECT", "&outcome=INCORRECT", db.DecisionFilter{Outcome: "INCORRECT"}},
		{"outcome PENDING", "&outcome=PENDING", db.DecisionFilter{Outcome: "PENDING"}},
		{"iteration", "&iteration=3", db.DecisionFilter{Iteration: &it}},
		{"category and outcome", "&category=quality&outcome=CORRECT", db.DecisionFilter{Category: "quality", Outcome: "CORRECT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.tb = t
			want := e.storeIDs(tt.f)
			if len(want) == 0 {
				t.Fatalf("the journal has no decision for %s: pick another filter", tt.query)
			}
			if got := e.walk(tt.query, 10); !slices.Equal(got, want) {
				t.Errorf("GET decisions%s: %d ids %v…; want %d %v…", tt.query, len(got), head(got), len(want), head(want))
			}
		})
	}
}

func TestDecisionsBadParameters(t *testing.T) {
	e := newEnv(t, synthJournal(t, 20), server.Config{}).handler()
	tests := []struct {
		query, mention string
	}{
		{"limit=0", "limit"},
		{"limit=1001", "limit"},
		{"limit=ten", "limit"},
		{"limit=-5", "limit"},
		{"category=nope", "category"},
		{"outcome=MAYBE", "outcome"},
		{"before=0", "before"},
		{"before=-3", "before"},
		{"before=abc", "before"},
		{"iteration=three", "iteration"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := e.get("/api/v1/decisions?" + tt.query)
			wantStatus(t, "GET decisions?"+tt.query, r, 400)
			p := r.problem(t)
			if !strings.Contains(p.Detail, tt.mention) {
				t.Errorf("detail %q does not name %s", p.Detail, tt.mention)
			}
		})
	}
}

func TestDecisionByID(t *testing.T) {
	e := newEnv(t, synthJournal(t, 30), server.Config{}).handler()
	ids := e.storeIDs(db.DecisionFilter{})
	for _, id := range []string{ids[0], ids[len(ids)-1]} {
		r := e.get("/api/v1/decisions/" + id)
		wantStatus(t, "GET decisions/"+id, r, 200)
		var d struct {
			ID      string `json:"id"`
			Outcome string `json:"outcome"`
			Line    int64  `json:"line"`
		}
		r.decodeJSON(t, &d)
		if d.ID != id || d.Outcome == "" || d.Line < 1 {
			t.Errorf("GET decisions/%s = %s; want the decision with its outcome and line", id, r.body)
		}
	}
	r := e.get("/api/v1/decisions/iter-999-9")
	wantStatus(t, "GET decisions/iter-999-9", r, 404)
	if p := r.problem(t); !strings.Contains(p.Detail, "iter-999-9") {
		t.Errorf("detail %q does not name the id", p.Detail)
	}
}

func TestPrecedent(t *testing.T) {
	e := newEnv(t, synthJournal(t, 300), server.Config{}).handler()
	bad := []string{"", "q=", "q=%20%20", "q=cache&k=0", "q=cache&k=101", "q=cache&k=x", "q=cache&category=nope"}
	for _, q := range bad {
		t.Run("bad "+q, func(t *testing.T) {
			r := e.get("/api/v1/precedent?" + q)
			wantStatus(t, "GET precedent?"+q, r, 400)
			r.problem(t)
		})
	}
	// The words of an indexed decision find it.
	rows, err := e.store.LatestDecisions(e.ctx, db.DecisionFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	q := rows[0].Input
	r := e.get("/api/v1/precedent?k=5&q=" + url.QueryEscape(q))
	wantStatus(t, "GET precedent", r, 200)
	var hits []struct {
		ID    string `json:"id"`
		Avoid bool   `json:"avoid"`
	}
	r.decodeJSON(t, &hits)
	if len(hits) == 0 || len(hits) > 5 {
		t.Fatalf("precedent %q: %d hits; want 1 to 5", q, len(hits))
	}
	if !slices.ContainsFunc(hits, func(h struct {
		ID    string `json:"id"`
		Avoid bool   `json:"avoid"`
	}) bool {
		return h.ID == rows[0].ID
	}) {
		t.Errorf("precedent %q: hits %s lack %s, whose input it is", q, r.body, rows[0].ID)
	}
	// Any text is a valid query; no match is an empty array, not null.
	for _, q := range []string{`"unbalanced AND (NEAR title:x*`, "zzzqqqxxy"} {
		r := e.get("/api/v1/precedent?q=" + url.QueryEscape(q))
		wantStatus(t, "GET precedent?q="+q, r, 200)
		if q == "zzzqqqxxy" && strings.TrimSpace(string(r.body)) != "[]" {
			t.Errorf("precedent with no match = %s; want []", r.body)
		}
	}
}

// sameJSON reports whether a and b encode the same JSON value.
func sameJSON(t *testing.T, got []byte, want any) {
	t.Helper()
	wb, err := report.JSON(want)
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wb, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got\n%s\nwant\n%s", got, wb)
	}
}

func TestTrust(t *testing.T) {
	e := newEnv(t, synthJournal(t, 500), server.Config{}).handler()
	tests := []struct {
		query string
		opts  trust.Options
	}{
		{"", trust.Options{Bins: 10}},
		{"?category=architecture", trust.Options{Bins: 10, Filter: trust.Filter{Category: "architecture"}}},
		{"?window=50&bins=5", trust.Options{Bins: 5, Filter: trust.Filter{Window: 50}}},
	}
	for _, tt := range tests {
		t.Run("trust"+tt.query, func(t *testing.T) {
			r := e.get("/api/v1/trust" + tt.query)
			wantStatus(t, "GET trust"+tt.query, r, 200)
			want, err := trust.Load(e.ctx, e.store, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if want.WithOutcome == 0 {
				t.Fatal("nothing scored: the comparison would prove little")
			}
			sameJSON(t, r.body, want)
		})
	}
	for _, q := range []string{"window=-1", "window=x", "bins=0", "bins=101", "category=nope", "since=yesterday"} {
		for _, path := range []string{"/api/v1/trust", "/api/v1/trust/chart.svg"} {
			t.Run(path+"?"+q, func(t *testing.T) {
				r := e.get(path + "?" + q)
				wantStatus(t, "GET "+path+"?"+q, r, 400)
				r.problem(t)
			})
		}
	}
}

func TestTrustChart(t *testing.T) {
	for _, n := range []int{0, 200} {
		t.Run(fmt.Sprint(n, " decisions"), func(t *testing.T) {
			j := ""
			if n > 0 {
				j = synthJournal(t, n)
			}
			e := newEnv(t, j, server.Config{}).handler()
			r := e.get("/api/v1/trust/chart.svg")
			wantStatus(t, "GET chart.svg", r, 200)
			if ct := r.header.Get("Content-Type"); ct != "image/svg+xml" {
				t.Errorf("Content-Type = %q; want image/svg+xml", ct)
			}
			s := string(r.body)
			if !strings.Contains(s, "<svg") || !strings.HasSuffix(strings.TrimSpace(s), "</svg>") {
				t.Errorf("chart.svg is not an SVG document: %.200s…", s)
			}
		})
	}
}

func TestStale(t *testing.T) {
	e := newEnv(t, synthJournal(t, 300), server.Config{}).handler()
	for _, tt := range []struct {
		query string
		opts  ceo.StaleOptions
	}{
		{"", ceo.StaleOptions{Iterations: ceo.DefaultStaleIterations, Limit: 50}},
		{"?iterations=5&limit=3", ceo.StaleOptions{Iterations: 5, Limit: 3}},
	} {
		t.Run("stale"+tt.query, func(t *testing.T) {
			r := e.get("/api/v1/stale" + tt.query)
			wantStatus(t, "GET stale"+tt.query, r, 200)
			want, err := ceo.StaleDecisions(e.ctx, e.ix, tt.opts, testNow)
			if err != nil {
				t.Fatal(err)
			}
			if want.Total == 0 {
				t.Fatal("nothing stale: the comparison would prove little")
			}
			sameJSON(t, r.body, want.Decisions)
			if got := r.header.Get("X-Total-Count"); got != fmt.Sprint(want.Total) {
				t.Errorf("X-Total-Count = %q; want %d", got, want.Total)
			}
			if got := r.header.Get("X-Current-Iteration"); got != fmt.Sprint(want.Current) {
				t.Errorf("X-Current-Iteration = %q; want %d", got, want.Current)
			}
		})
	}
	for _, q := range []string{"iterations=-1", "iterations=x", "limit=-1", "limit=10001"} {
		t.Run(q, func(t *testing.T) {
			r := e.get("/api/v1/stale?" + q)
			wantStatus(t, "GET stale?"+q, r, 400)
			r.problem(t)
		})
	}
}

func TestQueue(t *testing.T) {
	p := newProject(t, synthJournal(t, 50))
	for src, dst := range map[string]string{
		"../ceo/testdata/doc-example.ceo-decisions-pending.json": project.PendingFile,
		"../ceo/testdata/doc-example.ceo-loop-state.json":        project.StateFile,
	} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p.Path(dst), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnvIn(t, p, server.Config{}).handler()
	r := e.get("/api/v1/queue")
	wantStatus(t, "GET queue", r, 200)
	var q struct {
		Loop struct {
			Active    bool  `json:"active"`
			Iteration int64 `json:"iteration"`
		} `json:"loop"`
		Pending []struct {
			ID, Title, Category, Impact, Depth string
		} `json:"pending"`
		NextDepth string `json:"next_depth"`
	}
	r.decodeJSON(t, &q)
	if len(q.Pending) != 1 || q.Pending[0].ID != "req-001" || q.Pending[0].Category != "architecture" || q.Pending[0].Depth != "medium" {
		t.Errorf("queue pending = %+v; want req-001, architecture, depth medium", q.Pending)
	}
	if !q.Loop.Active || q.Loop.Iteration != 7 {
		t.Errorf("queue loop = %+v; want the state file's: active, iteration 7", q.Loop)
	}
	if q.NextDepth == "" {
		t.Errorf("queue next_depth is empty")
	}

	// No queue file: an empty list, not null.
	e2 := newEnv(t, "", server.Config{}).handler()
	r = e2.get("/api/v1/queue")
	wantStatus(t, "GET queue (no files)", r, 200)
	if !strings.Contains(string(r.body), `"pending":[]`) {
		t.Errorf("queue without a queue file = %s; want \"pending\":[]", r.body)
	}
}

func TestHealth(t *testing.T) {
	e := newEnv(t, synthJournal(t, 10), server.Config{}).handler()
	for path, want := range map[string]string{"/healthz": "ok\n", "/readyz": "ready\n"} {
		r := e.get(path)
		if r.status != 200 || string(r.body) != want {
			t.Errorf("GET %s = %d %q; want 200 %q", path, r.status, r.body, want)
		}
	}
}

func TestReadyzAfterFailedSync(t *testing.T) {
	e := newEnv(t, synthJournal(t, 10), server.Config{})
	e.serve()
	// The journal's past changes into something that is not a regular file:
	// sync fails until it is back.
	path := e.proj.Path(project.DecisionsFile)
	if err := os.Rename(path, path+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { return e.get("/readyz").status == 503 }) {
		t.Fatalf("GET /readyz = %s; want 503 while sync fails", e.get("/readyz"))
	}
	e.get("/readyz").problem(t)
	os.Remove(path)
	if err := os.Rename(path+".away", path); err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { return e.get("/readyz").status == 200 }) {
		t.Fatalf("GET /readyz = %s; want 200 once sync works again", e.get("/readyz"))
	}
}

func TestUnknownAPIPath(t *testing.T) {
	e := newEnv(t, synthJournal(t, 10), server.Config{}).handler()
	for _, tt := range []struct{ method, path string }{
		{"GET", "/api/v1/nope"},
		{"GET", "/api/v2/decisions"},
		{"POST", "/api/v1/nope"},
		{"GET", "/api/v1/decisions/"},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			tok := ""
			if tt.method == "POST" {
				tok = testToken
			}
			r := e.request(tt.method, tt.path, tok, nil)
			wantStatus(t, tt.method+" "+tt.path, r, 404)
			if p := r.problem(t); !strings.Contains(p.Detail, tt.path) {
				t.Errorf("detail %q does not name the path", p.Detail)
			}
		})
	}
}

func TestDashboard(t *testing.T) {
	e := newEnv(t, synthJournal(t, 10), server.Config{}).handler()
	for path, want := range map[string]string{"/": "<title>orbit", "/app.js": "EventSource", "/style.css": ".alert"} {
		r := e.get(path)
		wantStatus(t, "GET "+path, r, 200)
		if !strings.Contains(string(r.body), want) {
			t.Errorf("GET %s lacks %q", path, want)
		}
		if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q; want default-src 'self'", path, csp)
		}
	}
}

// TestOffLoopbackNeedsToken: off loopback, every API endpoint needs the
// token, reads included.
func TestOffLoopbackNeedsToken(t *testing.T) {
	if _, err := server.New(t.Context(), newEnv(t, "", server.Config{}).ix, server.Config{Addr: "0.0.0.0:0"}); err == nil {
		t.Errorf("server.New(Addr 0.0.0.0:0, no token) succeeded; want an error")
	}
	e := newEnv(t, synthJournal(t, 20), server.Config{Addr: "0.0.0.0:0", Token: testToken}).handler()
	id := e.storeIDs(db.DecisionFilter{Limit: 1})[0]
	for _, rt := range server.RouteList() {
		method, path := rt[0], rt[1]
		if method != "GET" || path == "/api/v1/events" {
			continue
		}
		// A path naming something that does not exist is fine: the token
		// is checked first, then a 404.
		params := strings.Contains(path, "{")
		path = strings.Replace(path, "/api/v1/decisions/{id}", "/api/v1/decisions/"+id, 1)
		path = regexp.MustCompile(`\{[a-z]+\}`).ReplaceAllString(path, "none")
		if path == "/api/v1/precedent" {
			path += "?q=cache"
		}
		t.Run(method+" "+path, func(t *testing.T) {
			for _, tok := range []string{"", "wrong"} {
				r := e.request(method, path, tok, nil)
				wantStatus(t, fmt.Sprintf("%s %s with token %q", method, path, tok), r, 401)
				if got := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
					t.Errorf("WWW-Authenticate = %q; want Bearer …", got)
				}
				r.problem(t)
			}
			r := e.request(method, path, testToken, nil)
			if r.status != 200 && !(params && r.status == 404) {
				t.Errorf("%s %s with the token: %s; want 200 (or 404 for a thing that does not exist)", method, path, r)
			}
		})
	}
	// On loopback the same reads need no token.
	l := newEnv(t, synthJournal(t, 20), server.Config{}).handler()
	wantStatus(t, "GET trust on loopback without a token", l.get("/api/v1/trust"), 200)
}

// TestRetroEndpoint covers POST /api/v1/retro.
func TestRetroEndpoint(t *testing.T) {
	e := newEnv(t, marshalLines(t, ptr(fixedDecision("iter-1-1", 1, "quality")), ptr(fixedDecision("iter-1-2", 1, "deploy"))), server.Config{})
	e.serve()
	tests := []struct {
		name, token, body string
		status            int
		mention           string
	}{
		{"no token", "", `{"id":"iter-1-1","outcome":"CORRECT"}`, 401, "token"},
		{"wrong token", "nope", `{"id":"iter-1-1","outcome":"CORRECT"}`, 401, "token"},
		{"bad JSON", testToken, `{"id":"iter-1-1",`, 400, ""},
		{"unknown field", testToken, `{"id":"iter-1-1","outcome":"CORRECT","why":"x"}`, 400, "why"},
		{"unknown id", testToken, `{"id":"iter-9-9","outcome":"CORRECT"}`, 404, "iter-9-9"},
		{"bad outcome", testToken, `{"id":"iter-1-1","outcome":"GREAT"}`, 422, "GREAT"},
		{"no id", testToken, `{"outcome":"CORRECT"}`, 422, "id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.request("POST", "/api/v1/retro", tt.token, strings.NewReader(tt.body))
			wantStatus(t, "POST retro "+tt.body, r, tt.status)
			if p := r.problem(t); !strings.Contains(p.Detail+p.Title, tt.mention) {
				t.Errorf("problem %s does not mention %q", r.body, tt.mention)
			}
			if tt.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
		})
	}
	if got := e.lines(project.RetroFile); len(got) != 0 {
		t.Fatalf("refused requests wrote %d retrograde lines", len(got))
	}
	r := e.post("/api/v1/retro", `{"id":"iter-1-2","outcome":"FAILED","evidence":"rolled back"}`)
	wantStatus(t, "POST retro", r, 201)
	var res ceo.RetroResult
	r.decodeJSON(t, &res)
	if res.DecisionID != "iter-1-2" || res.Outcome != "INCORRECT" || res.Previous != "PENDING" {
		t.Errorf("POST retro = %+v; want iter-1-2 INCORRECT, previously PENDING", res)
	}
	lines := e.lines(project.RetroFile)
	if len(lines) != 1 || lines[0]["decision_id"] != "iter-1-2" || lines[0]["outcome"] != "INCORRECT" || lines[0]["evidence"] != "rolled back" {
		t.Errorf("retrograde journal = %v; want one line for iter-1-2 INCORRECT with its evidence", lines)
	}
	r = e.get("/api/v1/decisions/iter-1-2")
	if !strings.Contains(string(r.body), `"outcome":"INCORRECT"`) {
		t.Errorf("GET decisions/iter-1-2 after the retro = %s; want outcome INCORRECT", r.body)
	}
}

// TestVoidEndpoint covers POST /api/v1/void: refused as orbit void refuses,
// 201 for a void written, 200 for a decision already as asked; GET
// /api/v1/decisions/{id} and the list then say it is voided and why, and
// trust leaves it out.
func TestVoidEndpoint(t *testing.T) {
	e := newEnv(t, marshalLines(t, ptr(fixedDecision("iter-1-1", 1, "quality")), ptr(fixedDecision("iter-1-2", 1, "deploy"))), server.Config{})
	e.serve()
	wantStatus(t, "POST retro", e.post("/api/v1/retro", `{"id":"iter-1-2","outcome":"INCORRECT","evidence":"rolled back"}`), 201)
	tests := []struct {
		name, token, body string
		status            int
		mention           string
	}{
		{"no token", "", `{"id":"iter-1-2","evidence":"x"}`, 401, "token"},
		{"unknown field", testToken, `{"id":"iter-1-2","evidence":"x","outcome":"CORRECT"}`, 400, "outcome"},
		{"unknown id", testToken, `{"id":"iter-9-9","evidence":"x"}`, 404, "iter-9-9"},
		{"no evidence", testToken, `{"id":"iter-1-2"}`, 422, "evidence"},
		{"blank evidence", testToken, `{"id":"iter-1-2","evidence":"  "}`, 422, "evidence"},
		{"no id", testToken, `{"evidence":"x"}`, 422, "id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.request("POST", "/api/v1/void", tt.token, strings.NewReader(tt.body))
			wantStatus(t, "POST void "+tt.body, r, tt.status)
			if p := r.problem(t); !strings.Contains(p.Detail+p.Title+r.String(), tt.mention) {
				t.Errorf("problem %s does not mention %q", r.body, tt.mention)
			}
		})
	}
	if got := e.lines(project.RetroFile); len(got) != 1 {
		t.Fatalf("refused voids wrote: the retrograde journal has %d lines; want the one outcome", len(got))
	}
	r := e.post("/api/v1/void", `{"id":"iter-1-2","evidence":"recorded by a test"}`)
	wantStatus(t, "POST void", r, 201)
	var res ceo.VoidResult
	r.decodeJSON(t, &res)
	if res.DecisionID != "iter-1-2" || !res.Void || !res.Written || res.WasVoided || res.Line != 2 || res.Trust.Incorrect != 0 {
		t.Errorf("POST void = %+v; want iter-1-2 voided at line 2, trust without its INCORRECT", res)
	}
	wantStatus(t, "POST void again", e.post("/api/v1/void", `{"id":"iter-1-2","evidence":"again"}`), 200)
	if got := e.lines(project.RetroFile); len(got) != 2 || got[1]["void"] != true || got[1]["evidence"] != "recorded by a test" {
		t.Errorf("retrograde journal = %v; want the outcome, then one void line", got)
	}
	r = e.get("/api/v1/decisions/iter-1-2")
	if !strings.Contains(string(r.body), `"voided":true,"void_reason":"recorded by a test"`) {
		t.Errorf("GET decisions/iter-1-2 after the void = %s; want it voided and why", r.body)
	}
	r = e.get("/api/v1/trust")
	if !strings.Contains(string(r.body), `"incorrect":0`) {
		t.Errorf("GET trust after the void = %.300s; want iter-1-2's INCORRECT left out", r.body)
	}
}

func ptr[T any](v T) *T { return &v }

// outcomeLines are retrograde lines for ids.
func outcomeLines(t *testing.T, outcome string, ids ...string) string {
	var recs []any
	for _, id := range ids {
		recs = append(recs, &journal.OutcomeRecord{TS: "2026-03-08T09:30:00Z", DecisionID: id, Outcome: outcome, Evidence: "seeded"})
	}
	return marshalLines(t, recs...)
}
