package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/knowledge"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/precedent"
	"github.com/orbit-loop/orbit/report"
	"github.com/orbit-loop/orbit/server"
)

// The contract suite: every JSON form orbit prints is written once, in
// server/openapi.json, and the CLI and the API print the same thing.

// schemas compiles the OpenAPI description's component schemas.
func schemas(tb testing.TB) func(name string) *jsonschema.Schema {
	tb.Helper()
	f, err := os.Open("../../server/openapi.json")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		tb.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("openapi.json", doc); err != nil {
		tb.Fatal(err)
	}
	return func(name string) *jsonschema.Schema {
		tb.Helper()
		sch, err := c.Compile("openapi.json#/components/schemas/" + name)
		if err != nil {
			tb.Fatalf("schema %s: %v", name, err)
		}
		return sch
	}
}

// validate checks data against a component schema (each element of a list
// when list).
func validate(tb testing.TB, what string, sch *jsonschema.Schema, data []byte, list bool) {
	tb.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("%s: not JSON: %v\n%s", what, err, data)
	}
	items := []any{v}
	if list {
		arr, ok := v.([]any)
		if !ok {
			tb.Fatalf("%s: not a list:\n%s", what, data)
		}
		if len(arr) == 0 {
			tb.Fatalf("%s: an empty list proves nothing", what)
		}
		items = arr
	}
	for i, it := range items {
		if err := sch.Validate(it); err != nil {
			tb.Errorf("%s [%d] does not match its schema: %v", what, i, err)
		}
	}
}

// contractEnv is one project, its CLI and its API.
type contractEnv struct {
	*testProject
	api http.Handler
}

func newContractEnv(t *testing.T) *contractEnv {
	t.Helper()
	p := projectWith(t, "journal.jsonl")
	p.mustRun("retro", "iter-3-1", "INCORRECT", "--evidence", "rolled back <canary> & reverted")
	p.mustRun("void", "iter-1-1", "--evidence", "recorded by a <test> run")
	return serveContract(t, p)
}

// serveContract is the project p with its API.
func serveContract(t *testing.T, p *testProject) *contractEnv {
	t.Helper()
	f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	f.Now = func() time.Time { return testNow }
	f.Getenv = func(string) string { return "" }
	f.RootFlag = p.root
	ix, err := f.Synced(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	srv, err := server.New(context.Background(), ix, server.Config{Token: "contract-test-token-0123456789abcdef", Now: f.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &contractEnv{testProject: p, api: srv.Handler()}
}

func (e *contractEnv) get(t *testing.T, path string) []byte {
	t.Helper()
	w := httptest.NewRecorder()
	req := httptest.NewRequest("GET", path, nil)
	req.Host = "localhost" // a loopback server answers only to its own name
	e.api.ServeHTTP(w, req)
	if w.Code != 200 {
		t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
	}
	return w.Body.Bytes()
}

// sameJSON reports whether two documents hold the same values.
func sameJSONValue(tb testing.TB, a, b []byte) bool {
	tb.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		tb.Fatalf("not JSON: %v\n%s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		tb.Fatalf("not JSON: %v\n%s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

// TestContractReads: each read command's JSON validates against the one
// schema of what it prints, and the API answers the same, field by field.
func TestContractReads(t *testing.T) {
	e := newContractEnv(t)
	schema := schemas(t)
	tests := []struct {
		name   string
		cli    []string
		api    string
		schema string
		list   bool
	}{
		{"log", []string{"log", "--json", "--limit", "0"}, "/api/v1/decisions?limit=1000", "Decision", true},
		{"log filtered", []string{"log", "--json", "--outcome", "INCORRECT", "--category", "deploy"}, "/api/v1/decisions?outcome=INCORRECT&category=deploy", "Decision", true},
		{"precedent", []string{"precedent", "--json", "-k", "5", "deploy production friday"}, "/api/v1/precedent?k=5&q=deploy+production+friday", "Precedent", true},
		{"stale", []string{"stale", "--json", "--iterations", "0"}, "/api/v1/stale?iterations=0", "StaleDecision", true},
		{"trust", []string{"trust", "--json"}, "/api/v1/trust", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.run(tt.cli...)
			if res.code != exitOK {
				t.Fatalf("orbit %s: exit %d\n%s", strings.Join(tt.cli, " "), res.code, res.stderr)
			}
			if tt.schema != "" {
				validate(t, "orbit "+tt.name, schema(tt.schema), []byte(res.stdout), tt.list)
			}
			api := e.get(t, tt.api)
			if !sameJSONValue(t, []byte(res.stdout), api) {
				t.Errorf("orbit %s and GET %s differ:\nCLI %s\nAPI %s", strings.Join(tt.cli, " "), tt.api, res.stdout, api)
			}
		})
	}
	t.Run("show", func(t *testing.T) {
		res := e.mustRun("show", "--json", "iter-3-1")
		validate(t, "orbit show --json", schema("DecisionDetail"), []byte(res.stdout), false)
		api := e.get(t, "/api/v1/decisions/iter-3-1")
		if !sameJSONValue(t, []byte(res.stdout), api) {
			t.Errorf("orbit show iter-3-1 and GET /api/v1/decisions/iter-3-1 differ:\nCLI %s\nAPI %s", res.stdout, api)
		}
		var d struct {
			Outcome, Evidence, File string
			OutcomeTS               *string `json:"outcome_ts"`
			Line                    int
			Events                  []map[string]any
		}
		json.Unmarshal(api, &d)
		if d.Outcome != "INCORRECT" || d.Evidence != "rolled back <canary> & reverted" || d.OutcomeTS == nil ||
			d.File != ".claude/ceo-loop-decisions.jsonl" || d.Line != 5 || len(d.Events) != 1 || d.Events[0]["evidence"] != d.Evidence {
			t.Errorf("GET decisions/iter-3-1 = %s; want outcome INCORRECT with its evidence, time, file:line and one event", api)
		}
	})
	t.Run("show voided", func(t *testing.T) {
		res := e.mustRun("show", "--json", "iter-1-1")
		validate(t, "orbit show --json", schema("DecisionDetail"), []byte(res.stdout), false)
		api := e.get(t, "/api/v1/decisions/iter-1-1")
		if !sameJSONValue(t, []byte(res.stdout), api) {
			t.Errorf("orbit show iter-1-1 and GET /api/v1/decisions/iter-1-1 differ:\nCLI %s\nAPI %s", res.stdout, api)
		}
		var d struct {
			Voided     bool
			VoidReason string `json:"void_reason"`
			Outcome    string
			Voids      []map[string]any
		}
		json.Unmarshal(api, &d)
		if !d.Voided || d.VoidReason != "recorded by a <test> run" || d.Outcome != "CORRECT" || len(d.Voids) != 1 ||
			d.Voids[0]["void"] != true || d.Voids[0]["line"] != 2.0 || d.Voids[0]["file"] != ".claude/ceo-loop-retrograde.jsonl" {
			t.Errorf("GET decisions/iter-1-1 = %s; want voided with its reason, its outcome kept, and its void event", api)
		}
	})
}

// TestContractLoopsQueueKnowledge: the loops (list, show, the ORBIT
// loop's status), the pending queue and knowledge matches print their one
// form on the CLI, and the API answers the same, field by field.
func TestContractLoopsQueueKnowledge(t *testing.T) {
	p := frameworkProject(t, "project")
	p.put("conductor/knowledge/errors.json", knowledgeFixture(t, "template.errors.json"))
	// The fixture's ORBIT loop is active (iteration 7).
	p.write(".claude/ceo-decisions-pending.json", `[
  {"id": "req-1", "title": "Pin the <eslint> version", "category": "quality", "impact": "low", "reversible": true},
  {"id": "req-2", "title": "Move state to Postgres", "category": "architecture", "impact": "high", "reversible": false},
  {"id": "req-3", "title": "A bad one", "category": "security", "impact": "low", "reversible": true}
]`)
	e := serveContract(t, p)
	schema := schemas(t)

	// Lists and one loop: the CLI's JSON is the API's.
	res := e.mustRun("loop", "list", "--json")
	validate(t, "orbit loop list --json", schema("Loop"), []byte(res.stdout), true)
	if api := e.get(t, "/api/v1/loops"); !sameJSONValue(t, []byte(res.stdout), api) {
		t.Errorf("orbit loop list --json and GET /api/v1/loops differ:\nCLI %s\nAPI %s", res.stdout, api)
	}
	var loops []struct{ Framework, ID string }
	json.Unmarshal([]byte(res.stdout), &loops)
	frameworks := map[string]bool{}
	for _, l := range loops {
		frameworks[l.Framework] = true
	}
	if len(frameworks) != 5 {
		t.Errorf("loop list: frameworks %v; want all five, the ORBIT loop included", frameworks)
	}
	for _, id := range []string{"orbit", "foreground-loop-touch-done-flag-2026-11-29T19-19-30-576Z"} {
		res := e.mustRun("loop", "show", "--json", id)
		validate(t, "orbit loop show --json "+id, schema("Loop"), []byte(res.stdout), false)
		if api := e.get(t, "/api/v1/loops/"+id); !sameJSONValue(t, []byte(res.stdout), api) {
			t.Errorf("orbit loop show --json %s and GET /api/v1/loops/%s differ:\nCLI %s\nAPI %s", id, id, res.stdout, api)
		}
	}

	// The ORBIT loop's status is the state the queue's answer carries,
	// with the lock beside it.
	status := e.mustRun("loop", "status", "--json")
	validate(t, "orbit loop status --json", schema("LoopStatus"), []byte(status.stdout), false)
	queue := e.get(t, "/api/v1/queue")
	validate(t, "GET /api/v1/queue", schema("Queue"), queue, false)
	var st map[string]json.RawMessage
	var q struct {
		Loop    json.RawMessage
		Pending []struct{ ID, Depth string }
		Invalid []struct {
			Item  int
			Field string
		}
	}
	json.Unmarshal([]byte(status.stdout), &st)
	json.Unmarshal(queue, &q)
	delete(st, "lock")
	stLoop, _ := json.Marshal(st)
	if !sameJSONValue(t, stLoop, q.Loop) {
		t.Errorf("orbit loop status --json (without its lock) and GET /api/v1/queue's loop differ:\nCLI %s\nAPI %s", stLoop, q.Loop)
	}
	if len(q.Pending) != 2 || q.Pending[0].ID != "req-1" || q.Pending[0].Depth != "trivial" || len(q.Invalid) != 1 || q.Invalid[0].Item != 3 || q.Invalid[0].Field != "category" {
		t.Errorf("GET /api/v1/queue = %s; want req-1 (trivial) and req-2 pending, item 3 invalid by its category", queue)
	}

	if len(q.Invalid) == 1 && !strings.Contains(string(queue), `"error":".claude/ceo-decisions-pending.json: item 3 (req-3): category: `) {
		t.Errorf("GET /api/v1/queue = %s; want the invalid item named by the project's path of the file, not the server's", queue)
	}
	// Done, with an item left in the queue: exit 3.
	if res = e.run("decide", "--queue", "--dry-run", "--json", "--precedents", "0"); res.code != exitFindings {
		t.Fatalf("decide --queue --dry-run --json: exit %d; want %d\n%s", res.code, exitFindings, res.stderr)
	}
	validate(t, "orbit decide --queue --dry-run --json", schema("QueueResult"), []byte(res.stdout), false)

	// Knowledge: the CLI's matches are the API's, nothing recorded.
	text := "Error: Cannot find module 'react'"
	res = e.mustRun("knowledge", "match", "--json", "--no-record", text)
	validate(t, "orbit knowledge match --json", schema("KnowledgeMatch"), []byte(res.stdout), true)
	api := e.postWant(t, "/api/v1/knowledge/match", `{"text":"Error: Cannot find module 'react'","record":false}`, http.StatusOK)
	if !sameJSONValue(t, []byte(res.stdout), api) {
		t.Errorf("orbit knowledge match --json and POST /api/v1/knowledge/match differ:\nCLI %s\nAPI %s", res.stdout, api)
	}
}

// TestContractWrites: decide and retro answer the one form of what they
// wrote, on the CLI and the API alike.
func TestContractWrites(t *testing.T) {
	e := newContractEnv(t)
	schema := schemas(t)
	res := e.mustRun("decide", "--json", "--title", "Pin <eslint> & prettier", "--category", "quality", "--impact", "low", "--reversible")
	validate(t, "orbit decide --json", schema("Decided"), []byte(res.stdout), false)
	var cli map[string]any
	json.Unmarshal([]byte(res.stdout), &cli)
	if cli["id"] != "iter-3-3" || cli["decision"] != "APPROVED" || cli["written"] != true || cli["line"] != 7.0 {
		t.Errorf("decide --json = %s; want the record iter-3-3 at the top level, its line, written", res.stdout)
	}
	if !strings.Contains(res.stdout, "Pin <eslint> & prettier") {
		t.Errorf("decide --json escapes HTML: %s", res.stdout)
	}
	res = e.mustRun("decide", "--json", "--dry-run", "--title", "Pin eslint again", "--category", "quality", "--impact", "low", "--reversible")
	validate(t, "orbit decide --dry-run --json", schema("Decided"), []byte(res.stdout), false)
	json.Unmarshal([]byte(res.stdout), &cli)
	if cli["id"] != nil || cli["next_id"] != "iter-3-4" || cli["written"] != false {
		t.Errorf("decide --dry-run --json: id %v, next_id %v; want null and iter-3-4", cli["id"], cli["next_id"])
	}
	res = e.mustRun("retro", "--json", "iter-3-3", "CORRECT", "--evidence", "CI <green>")
	validate(t, "orbit retro --json", schema("Retro"), []byte(res.stdout), false)
	json.Unmarshal([]byte(res.stdout), &cli)
	if cli["decision_id"] != "iter-3-3" || cli["outcome"] != "CORRECT" || cli["evidence"] != "CI <green>" || cli["file"] != ".claude/ceo-loop-retrograde.jsonl" || cli["line"] != 3.0 {
		t.Errorf("retro --json = %s; want the event's fields at the top level", res.stdout)
	}

	res = e.mustRun("void", "--json", "iter-3-3", "--evidence", "a <test> decision")
	validate(t, "orbit void --json", schema("Void"), []byte(res.stdout), false)
	json.Unmarshal([]byte(res.stdout), &cli)
	if cli["decision_id"] != "iter-3-3" || cli["void"] != true || cli["evidence"] != "a <test> decision" || cli["written"] != true || cli["line"] != 4.0 {
		t.Errorf("void --json = %s; want the void event's fields at the top level, written", res.stdout)
	}

	// The API's answers to the same requests have the same fields.
	for _, tt := range []struct{ path, body, schema, cliOut string }{
		{"/api/v1/decisions", `{"title":"Pin <eslint> & prettier","category":"quality","impact":"low","reversible":true}`, "Decided", ""},
		{"/api/v1/retro", `{"id":"iter-3-2","outcome":"CORRECT","evidence":"CI <green>"}`, "Retro", ""},
		{"/api/v1/void", `{"id":"iter-3-2","evidence":"a <test> decision"}`, "Void", ""},
	} {
		got := e.post(t, tt.path, tt.body)
		validate(t, "POST "+tt.path, schema(tt.schema), got, false)
	}
}

// post runs a write through the API's committer: the server runs on a
// loopback port of its own.
func (e *contractEnv) post(t *testing.T, path, body string) []byte {
	t.Helper()
	return e.postWant(t, path, body, http.StatusCreated)
}

// postWant is post answered with status want.
func (e *contractEnv) postWant(t *testing.T, path, body string, want int) []byte {
	t.Helper()
	f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	f.Now = func() time.Time { return testNow }
	f.Getenv = func(string) string { return "" }
	f.RootFlag = e.root
	ix, err := f.Synced(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	srv, err := server.New(context.Background(), ix, server.Config{Addr: "127.0.0.1:0", Token: "contract-test-token-0123456789abcdef", Now: f.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewUnstartedServer(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ts.Listener) }()
	defer func() { cancel(); <-done }()
	req, _ := http.NewRequest("POST", "http://"+ts.Listener.Addr().String()+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer contract-test-token-0123456789abcdef")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("POST %s: %d %s; want %d", path, resp.StatusCode, data, want)
	}
	return data
}

// TestContractFieldsDocumented: the schema of each form lists exactly the
// fields of the Go type that prints it, in order, so that the README and
// openapi.json cannot drift from the code.
func TestContractFieldsDocumented(t *testing.T) {
	data, err := os.ReadFile("../../server/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{
		"Decision": journal.DecisionView{}, "Decided": ceo.Result{}, "Precedent": precedent.Hit{},
		"OutcomeEvent": journal.EventView{}, "Retro": ceo.RetroResult{}, "StaleDecision": ceo.StaleDecision{},
		"DecisionDetail": ceo.Shown{}, "DecideRequest": ceo.Request{},
		"Void": ceo.VoidResult{}, "VoidEvent": journal.VoidView{}, "VoidRequest": server.VoidRequest{},
		"Loop": loop.View{}, "LoopInfo": ceo.LoopInfo{}, "LoopStatus": orbitloop.Status{}, "Queue": ceo.QueueView{}, "QueueResult": ceo.QueueResult{},
		"KnowledgeMatch": knowledge.Match{},
	} {
		keys := objectKeys(t, doc.Components.Schemas[name].Properties)
		if want := report.Fields(v); !slices.Equal(keys, want) {
			t.Errorf("openapi.json %s properties = %v; want the fields the code prints, %v", name, keys, want)
		}
	}
}

// TestJSONFlagForms: --json a,b (gh's form) is --json=a,b; a field of
// another mode's output is refused, not printed as null.
func TestJSONFlagForms(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	eq := p.mustRun("log", "--json=id,outcome", "--limit", "2")
	sp := p.mustRun("log", "--json", "id,outcome", "--limit", "2")
	if eq.stdout != sp.stdout || !strings.Contains(sp.stdout, `"outcome"`) || strings.Contains(sp.stdout, `"input"`) {
		t.Errorf("log --json id,outcome printed\n%s\nwant what --json=id,outcome prints:\n%s", sp.stdout, eq.stdout)
	}
	// A query word that is not a field stays a query.
	res := p.mustRun("precedent", "--json", "deploy")
	if !strings.Contains(res.stdout, `"score"`) {
		t.Errorf("precedent --json deploy: %s", res.stdout)
	}
	p.write(".claude/ceo-decisions-pending.json", `[]`)
	res = p.run("decide", "--queue", "--json=decided,remaining")
	if res.code != exitOK || !strings.Contains(res.stdout, `"decided": []`) {
		t.Errorf("decide --queue --json=decided: exit %d, %s%s; want decided: []", res.code, res.stdout, res.stderr)
	}
	res = p.run("decide", "--queue", "--json=tier")
	if res.code != exitUsage || !strings.Contains(res.stderr, `"tier" is not a field of what this prints`) {
		t.Errorf("decide --queue --json=tier: exit %d, stdout %q stderr %q; want a usage error", res.code, res.stdout, res.stderr)
	}
}

// TestJSONUnknownIsNull: nothing scored is null accuracy, not 0.
func TestJSONUnknownIsNull(t *testing.T) {
	p := newProject(t)
	p.mustRun("init")
	res := p.mustRun("trust", "--json=accuracy,calibration,last10")
	var got struct {
		Accuracy    *float64 `json:"accuracy"`
		Calibration struct {
			Brier *float64 `json:"brier"`
			ECE   *float64 `json:"ece"`
		} `json:"calibration"`
		Last10 struct {
			Accuracy *float64 `json:"accuracy"`
		} `json:"last10"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.Accuracy != nil || got.Calibration.Brier != nil || got.Calibration.ECE != nil || got.Last10.Accuracy != nil {
		t.Errorf("trust --json with nothing scored:\n%s\nwant accuracy, brier, ece, last10.accuracy null", res.stdout)
	}
}
