package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/server"
)

// decided is POST /api/v1/decisions's answer: the record's fields, the
// envelope beside them.
type decided struct {
	ID        string `json:"id"`
	Iteration int64  `json:"iteration"`
	Tier      string `json:"tier"`
	Depth     string `json:"depth"`
	Category  string `json:"category"`
	Input     string `json:"input"`
	Verdict   string `json:"decision"`
	Level     string `json:"trust_level"`
	Written   bool   `json:"written"`
}

const validDecision = `{"title":"Add ESLint rule eqeqeq","category":"quality","impact":"low","reversible":true}`

func TestDecideRefused(t *testing.T) {
	e := newEnv(t, synthJournal(t, 40), server.Config{})
	e.serve()
	before := e.journalIDs()
	huge := `{"title":"` + strings.Repeat("x", server.MaxBody) + `","category":"quality","impact":"low","reversible":true}`
	tests := []struct {
		name, token, body string
		status            int
		mention           string // in the problem's title or detail
	}{
		{"no token", "", validDecision, 401, "token"},
		{"wrong token", "0123", validDecision, 401, "token"},
		{"token of another case", strings.ToUpper(testToken), validDecision, 401, "token"},
		{"bad JSON", testToken, `{"title":"x",`, 400, "JSON"},
		{"not an object", testToken, `["title"]`, 400, "JSON"},
		{"empty body", testToken, ``, 400, "JSON"},
		{"two values", testToken, validDecision + validDecision, 400, "more than one"},
		{"unknown field", testToken, `{"title":"x","category":"quality","impact":"low","reversible":true,"priority":1}`, 400, "priority"},
		{"wrong type", testToken, `{"title":"x","category":"quality","impact":"low","reversible":"yes"}`, 400, "reversible"},
		{"oversized body", testToken, huge, 413, strconv.Itoa(server.MaxBody)},
		{"invalid category", testToken, `{"title":"x","category":"marketing","impact":"low","reversible":true}`, 422, `"marketing"`},
		{"invalid impact", testToken, `{"title":"x","category":"quality","impact":"huge","reversible":true}`, 422, `"huge"`},
		{"no title", testToken, `{"category":"quality","impact":"low","reversible":true}`, 422, "title"},
		{"reversibility unsaid", testToken, `{"title":"x","category":"quality","impact":"low"}`, 422, "reversible"},
		{"quick_review without decision", testToken, `{"title":"Drop the legacy column","category":"quality","impact":"low","reversible":false}`, 422, "decision is required"},
		{"decision without reason", testToken, `{"title":"x","category":"quality","impact":"low","reversible":false,"decision":"APPROVED"}`, 422, "reason"},
		{"confidence out of range", testToken, `{"title":"x","category":"quality","impact":"low","reversible":true,"confidence":1.5}`, 422, "1.5"},
		{"iteration -1", testToken, `{"title":"x","category":"quality","impact":"low","reversible":true,"iteration":-1}`, 422, "iteration"},
		{"retro without outcome", testToken, `{"title":"x","category":"quality","impact":"low","reversible":true,"retro":"iter-1-1"}`, 422, "iter-1-1"},
		{"retro of an unknown decision", testToken, `{"title":"x","category":"quality","impact":"low","reversible":true,"retro":"iter-404-1=CORRECT"}`, 422, "iter-404-1"},
		{"retro with a bad outcome", testToken, `{"title":"x","category":"quality","impact":"low","reversible":true,"retro":"` + before[0] + `=MEH"}`, 422, "MEH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.request("POST", "/api/v1/decisions", tt.token, strings.NewReader(tt.body))
			wantStatus(t, "POST decisions ("+tt.name+")", r, tt.status)
			p := r.problem(t)
			if !strings.Contains(p.Title+" "+p.Detail, tt.mention) {
				t.Errorf("problem %s does not mention %q", r.body, tt.mention)
			}
			if tt.status == 401 {
				if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="orbit"` {
					t.Errorf("WWW-Authenticate = %q; want Bearer realm=\"orbit\"", got)
				}
			}
		})
	}
	if after := e.journalIDs(); !slices.Equal(after, before) {
		t.Errorf("refused requests changed the journal: %d lines, then %d", len(before), len(after))
	}
}

func TestDecide(t *testing.T) {
	e := newEnv(t, synthJournal(t, 40), server.Config{})
	e.serve()
	before := e.journalIDs()
	tests := []struct {
		name, body         string
		tier, decision     string
		depth, iterationIs string
	}{
		{"auto-approved", validDecision, "auto_approve", "APPROVED", "trivial", ""},
		{"quick_review decided", `{"title":"Drop the legacy column","category":"quality","impact":"low","reversible":false,"decision":"REJECTED","reason":"keep it one more release","confidence":0.7}`, "quick_review", "REJECTED", "light", ""},
		{"explicit iteration", `{"title":"Pin the Go toolchain","category":"quality","impact":"low","reversible":true,"iteration":77}`, "auto_approve", "APPROVED", "trivial", "77"},
		{"with a retro", `{"title":"Cache rendered pages","category":"feature","impact":"low","reversible":true,"retro":"` + before[0] + `=CORRECT"}`, "auto_approve", "APPROVED", "trivial", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.post("/api/v1/decisions", tt.body)
			wantStatus(t, "POST decisions", r, 201)
			var d decided
			r.decodeJSON(t, &d)
			if !d.Written || d.Tier != tt.tier || d.Verdict != tt.decision || d.Depth != tt.depth || d.Level == "" {
				t.Errorf("POST decisions = %s; want written, tier %s, decision %s, depth %s, a trust level", r.body, tt.tier, tt.decision, tt.depth)
			}
			if tt.iterationIs != "" && !strings.HasPrefix(d.ID, "iter-"+tt.iterationIs+"-") {
				t.Errorf("id %s; want one of iteration %s", d.ID, tt.iterationIs)
			}
			if !regexp.MustCompile(`^iter-\d+-\d+$`).MatchString(d.ID) {
				t.Errorf("id %q is not iter-N-M", d.ID)
			}
			// Durable and indexed before the answer.
			ids := e.journalIDs()
			if ids[len(ids)-1] != d.ID {
				t.Errorf("last journal line is %s; want %s", ids[len(ids)-1], d.ID)
			}
			if !e.indexed(d.ID) {
				t.Errorf("%s is not in the index when its 201 arrives", d.ID)
			}
			g := e.get("/api/v1/decisions/" + d.ID)
			wantStatus(t, "GET the new decision", g, 200)
		})
	}
	if got, want := len(e.journalIDs()), len(before)+len(tests); got != want {
		t.Errorf("journal has %d lines; want %d", got, want)
	}
	// The retro carried by a decision line is an outcome event.
	r := e.get("/api/v1/decisions/" + before[0])
	if !strings.Contains(string(r.body), `"outcome":"CORRECT"`) {
		t.Errorf("GET decisions/%s = %s; want outcome CORRECT", before[0], r.body)
	}
}

// TestDecideBatchIsolation: decisions that arrive together are committed
// together, and one refused does not spoil the others.
func TestDecideBatchIsolation(t *testing.T) {
	e := newEnv(t, synthJournal(t, 40), server.Config{})
	e.serve()
	const n = 40
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = fmt.Sprintf(`{"title":"Good change %d","category":"quality","impact":"low","reversible":true}`, i)
		if i%4 == 0 { // needs a decision: refused in the batch
			bodies[i] = fmt.Sprintf(`{"title":"Risky change %d","category":"deploy","impact":"high","reversible":false}`, i)
		}
	}
	statuses := make([]int, n)
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range bodies {
		wg.Go(func() {
			r := e.post("/api/v1/decisions", bodies[i])
			statuses[i] = r.status
			if r.status == 201 {
				var d decided
				json.Unmarshal(r.body, &d)
				ids[i] = d.ID
			}
		})
	}
	wg.Wait()
	journalIDs := e.journalIDs()
	for i := range bodies {
		want := 201
		if i%4 == 0 {
			want = 422
		}
		if statuses[i] != want {
			t.Errorf("request %d: status %d; want %d", i, statuses[i], want)
		}
		if want == 201 && !slices.Contains(journalIDs, ids[i]) {
			t.Errorf("request %d got 201 with %s, not in the journal", i, ids[i])
		}
	}
	if got, want := len(journalIDs), 40+n-n/4; got != want {
		t.Errorf("journal has %d lines; want %d", got, want)
	}
}

// TestGroupCommit: 200 concurrent decisions all get 201 with distinct ids,
// the journal holds 200 new well-formed lines, and they were committed in
// batches of more than one.
func TestGroupCommit(t *testing.T) {
	e := newEnv(t, synthJournal(t, 100), server.Config{})
	e.serve()
	before := e.journalIDs()
	const n = 200
	ids := make([]string, n)
	statuses := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			r := e.post("/api/v1/decisions", fmt.Sprintf(`{"title":"Parallel change %d","category":"quality","impact":"low","reversible":true}`, i))
			statuses[i] = r.status
			if r.status != 201 {
				t.Logf("request %d: %s", i, r)
			}
			var d decided
			if r.status == 201 {
				json.Unmarshal(r.body, &d)
			}
			ids[i] = d.ID
		})
	}
	close(start)
	wg.Wait()
	seen := map[string]int{}
	for i := range n {
		if statuses[i] != 201 {
			t.Errorf("request %d: status %d; want 201", i, statuses[i])
			continue
		}
		if j, dup := seen[ids[i]]; dup {
			t.Errorf("requests %d and %d both got id %s", j, i, ids[i])
		}
		seen[ids[i]] = i
	}
	after := e.journalIDs()
	if len(after) != len(before)+n {
		t.Fatalf("journal has %d lines; want %d + %d", len(after), len(before), n)
	}
	if !slices.Equal(after[:len(before)], before) {
		t.Errorf("the journal's past changed")
	}
	added := after[len(before):]
	for _, id := range added {
		if _, ok := seen[id]; !ok {
			t.Errorf("journal line %s answers no request", id)
		}
	}
	// Every new line is a valid record, and the index agrees.
	rep, err := journal.NewIndex(e.store, e.proj).Sync(e.ctx, journal.SyncOptions{})
	if err != nil || rep.Errors() > 0 || len(rep.Torn) > 0 {
		t.Errorf("sync after the commits: %v, %d rejected, %d torn", err, rep.Errors(), len(rep.Torn))
	}
	for _, id := range added {
		if !e.indexed(id) {
			t.Errorf("%s is not indexed", id)
		}
	}
	// The commit batch histogram: fewer commits than decisions.
	m := e.get("/metrics")
	count := metricValue(t, m.body, "orbit_decision_commit_batch_size_count")
	sum := metricValue(t, m.body, "orbit_decision_commit_batch_size_sum")
	ones := metricValue(t, m.body, `orbit_decision_commit_batch_size_bucket{le="1"}`)
	if sum != n {
		t.Errorf("commit batch sizes sum to %v; want %d", sum, n)
	}
	if count >= n || ones >= count {
		t.Errorf("%v commits for %d decisions, %v of one decision; want batches of more than one", count, n, ones)
	}
	t.Logf("%d decisions in %v commits (mean batch %.1f)", n, count, sum/count)
}

// metricValue reads one sample of the Prometheus text format.
func metricValue(t *testing.T, text []byte, series string) float64 {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && name == series {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			return v
		}
	}
	t.Fatalf("metrics lack %s:\n%s", series, text)
	return 0
}

// TestGracefulShutdown: cancelling Run's context while decisions are being
// posted loses none that got a 201, and Run returns nil.
func TestGracefulShutdown(t *testing.T) {
	e := newEnv(t, synthJournal(t, 100), server.Config{})
	stop := e.serve()
	client := &http.Client{Timeout: 30 * time.Second}
	var (
		mu       sync.Mutex
		accepted []string
		failed   int
		wg       sync.WaitGroup
	)
	firstOK := make(chan struct{})
	var once sync.Once
	for w := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				body := fmt.Sprintf(`{"title":"Shutdown race %d-%d","category":"quality","impact":"low","reversible":true}`, w, i)
				req, _ := http.NewRequest("POST", e.url+"/api/v1/decisions", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+testToken)
				res, err := client.Do(req)
				if err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
					return
				}
				data, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 201 {
					mu.Lock()
					failed++
					mu.Unlock()
					return
				}
				var d decided
				if err := json.Unmarshal(data, &d); err != nil || d.ID == "" {
					t.Errorf("201 with %s", data)
					return
				}
				mu.Lock()
				accepted = append(accepted, d.ID)
				mu.Unlock()
				once.Do(func() { close(firstOK) })
			}
		})
	}
	select {
	case <-firstOK:
	case <-time.After(10 * time.Second):
		t.Fatal("no decision accepted within 10s")
	}
	time.Sleep(50 * time.Millisecond)
	if err := stop(); err != nil {
		t.Errorf("Run after cancel = %v; want nil", err)
	}
	wg.Wait()
	ids := e.journalIDs()
	for _, id := range accepted {
		if !slices.Contains(ids, id) {
			t.Errorf("%s got a 201 but is not in the journal", id)
		}
	}
	t.Logf("%d decisions accepted before and during shutdown, %d workers refused after", len(accepted), failed)
	if _, err := os.Stat(e.proj.Path(project.DecisionsFile)); err != nil {
		t.Fatal(err)
	}
}
