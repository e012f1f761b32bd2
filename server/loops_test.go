package server_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/server"
)

// loopsEnv is a served project holding the loops of all five frameworks
// (testdata/loops/project) and gearsnitch's error registry.
func loopsEnv(t *testing.T) *env {
	t.Helper()
	p := newProject(t, "")
	if err := os.CopyFS(p.Root, os.DirFS(filepath.Join("..", "testdata", "loops", "project"))); err != nil {
		t.Fatal(err)
	}
	reg, err := os.ReadFile(filepath.Join("..", "testdata", "knowledge", "gearsnitch.errors.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(p.Root, "conductor", "knowledge"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.Root, "conductor", "knowledge", "errors.json"), reg, 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnvIn(t, p, server.Config{})
	e.serve()
	return e
}

func TestLoopsList(t *testing.T) {
	e := loopsEnv(t)
	var got []loop.View
	r := e.get("/api/v1/loops")
	wantStatus(t, "GET loops", r, 200)
	r.decodeJSON(t, &got)
	want := frameworks.ScanProject(e.proj.Root, testNow).Loops
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("GET loops: %d loops; want %d (frameworks.ScanProject)", len(got), len(want))
	}
	frameworks := map[string]bool{}
	for i, v := range got {
		frameworks[v.Framework] = true
		if v.Key() != want[i].Key() || v.Status != want[i].Status {
			t.Errorf("loop %d = %s %s; want %s %s", i, v.Key(), v.Status, want[i].Key(), want[i].Status)
		}
	}
	if len(frameworks) != len(loop.Frameworks()) {
		t.Errorf("frameworks listed %v; want all of %v", frameworks, loop.Frameworks())
	}
	// The listing records what orbit saw: one seen event per loop.
	if n := len(e.lines(loop.EventsFile)); n != len(want) {
		t.Errorf("%s has %d events after the first listing; want %d (one seen per loop)", loop.EventsFile, n, len(want))
	}
	e.get("/api/v1/loops")
	if n := len(e.lines(loop.EventsFile)); n != len(want) {
		t.Errorf("%s has %d events after a second listing; want still %d", loop.EventsFile, n, len(want))
	}

	r = e.get("/api/v1/loops?framework=ccw&active=true")
	wantStatus(t, "GET loops?framework=ccw", r, 200)
	got = nil
	r.decodeJSON(t, &got)
	if len(got) == 0 {
		t.Fatal("GET loops?framework=ccw&active=true: none; the fixture has running ccw loops")
	}
	for _, v := range got {
		if v.Framework != "ccw" || loop.IsStopped(v.Status) {
			t.Errorf("framework=ccw&active=true listed %s (%s)", v.Key(), v.Status)
		}
	}
	for _, q := range []string{"framework=jenkins", "active=maybe"} {
		r := e.get("/api/v1/loops?" + q)
		wantStatus(t, "GET loops?"+q, r, 400)
		r.problem(t)
	}
}

func TestLoopShow(t *testing.T) {
	e := loopsEnv(t)
	var v loop.View
	r := e.get("/api/v1/loops/loop-v2-20260123-def456")
	wantStatus(t, "GET one loop", r, 200)
	r.decodeJSON(t, &v)
	if v.Framework != "ccw" || v.Status != "paused" || len(v.History) != 1 || v.History[0].Kind != loop.EventSeen {
		t.Errorf("GET one loop = %s %s, history %+v; want ccw paused with one seen event", v.Key(), v.Status, v.History)
	}
	r = e.get("/api/v1/loops/no-such-loop")
	wantStatus(t, "GET an unknown loop", r, 404)
	r.problem(t)
	// "loop-v2-2026012" is a prefix of two CCW loops.
	r = e.get("/api/v1/loops/loop-v2-2026012")
	wantStatus(t, "GET an ambiguous id", r, 409)
	if p := r.problem(t); !strings.Contains(p.Detail, "ccw:loop-v2-20260122-abc123") {
		t.Errorf("ambiguous id: detail %q; want the matches named", p.Detail)
	}
}

func TestLoopControl(t *testing.T) {
	e := loopsEnv(t)
	const id = "pr-watch-pr-review-and-repair-2026-11-29T19-19-30-743Z"
	file := filepath.Join(e.proj.Root, ".planning", "loops", id+".json")
	status := func() string {
		t.Helper()
		var rec struct {
			Status     string `json:"status"`
			StopReason string `json:"stopReason"`
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		return rec.Status + "/" + rec.StopReason
	}
	path := "/api/v1/loops/" + url.PathEscape(id)

	// Without the token nothing changes.
	r := e.request("POST", path+"/stop", "", strings.NewReader(`{}`))
	wantStatus(t, "stop without the token", r, 401)
	if got := status(); got != "planned/" {
		t.Fatalf("after an unauthorized stop the record is %s; want planned", got)
	}

	for _, step := range []struct {
		action, body string
		status       int
		want         string // the record's status/stopReason after
	}{
		{"pause", `{"reason":"reviewer away"}`, 200, "paused/"},
		{"pause", `{}`, 409, "paused/"},
		{"resume", `{}`, 200, "running/"},
		{"stop", `{"status":"exploded"}`, 422, "running/"},
		{"pause", `{"status":"blocked"}`, 422, "running/"},
		// The word in stopReason; the reason is a note (seed 001).
		{"stop", `{"reason":"stopped from the dashboard"}`, 200, "stopped/stopped"},
		{"stop", `{}`, 409, "stopped/stopped"},
		{"explode", `{}`, 404, "stopped/stopped"},
		{"stop", `{"unknown":1}`, 400, "stopped/stopped"},
	} {
		r := e.post(path+"/"+step.action, step.body)
		wantStatus(t, step.action+" "+step.body, r, step.status)
		if step.status != 200 {
			r.problem(t)
		} else {
			var res server.LoopControlResult
			r.decodeJSON(t, &res)
			if res.ID != id || res.Event.Kind != step.action {
				t.Errorf("%s: result %+v; want the loop's id and a %s event", step.action, res, step.action)
			}
		}
		if got := status(); got != step.want {
			t.Errorf("after %s %s the record is %s; want %s", step.action, step.body, got, step.want)
		}
	}
	// Every change is in the loop event journal, after the seen event.
	var kinds []string
	for _, ev := range e.lines(loop.EventsFile) {
		if ev["loop"] == id {
			kinds = append(kinds, ev["event"].(string))
		}
	}
	if strings.Join(kinds, ",") != "seen,pause,resume,stop" {
		t.Errorf("events of %s: %v; want seen,pause,resume,stop", id, kinds)
	}

	// ORBIT's loop has no paused state; its stop frees the loop in its
	// state file.
	r = e.post("/api/v1/loops/orbit/pause", `{}`)
	wantStatus(t, "pause the ORBIT loop", r, 409)
	r = e.post("/api/v1/loops/orbit/stop", `{"status":"done"}`)
	wantStatus(t, "stop the ORBIT loop", r, 200)
	// The answer says what the stop wrote, as for every other framework.
	var res server.LoopControlResult
	if err := json.Unmarshal(r.body, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Wrote) != 2 || !strings.HasPrefix(res.Wrote[0], ".claude/ceo-loop-state.json: ") || res.Wrote[1] != ".claude/ceo-loop-progress.md: session summary" {
		t.Errorf("stop the ORBIT loop: wrote %q; want the state file's fields and the progress file", res.Wrote)
	}
	st, err := loop.ReadState("", e.proj.Path(project.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	if active, _, _ := st.Bool("active"); active {
		t.Errorf("the ORBIT state file is still active after a stop")
	}
}

func TestKnowledgeMatch(t *testing.T) {
	e := loopsEnv(t)
	r := e.post("/api/v1/knowledge/match", `{"text":"ESLint 9 could not find an eslint.config file","k":3}`)
	wantStatus(t, "knowledge match", r, 200)
	var ms []struct {
		ID  string `json:"id"`
		Via string `json:"match"`
	}
	r.decodeJSON(t, &ms)
	if len(ms) == 0 || ms[0].ID != "api-eslint-flat-config-missing" {
		t.Errorf("knowledge match: %+v; want api-eslint-flat-config-missing first", ms)
	}
	for _, body := range []string{`{"text":"  "}`, `{"text":"x","k":51}`} {
		r := e.post("/api/v1/knowledge/match", body)
		wantStatus(t, "knowledge match "+body, r, 422)
		r.problem(t)
	}
	r = e.request("POST", "/api/v1/knowledge/match", "", strings.NewReader(`{"text":"x"}`))
	wantStatus(t, "knowledge match without the token", r, 401)
}

// TestLoopControlEmptyBody: an empty body means no options (issue 18):
// the dashboard's and curl's bare POST stops, pauses and resumes, and the
// answer to a CCW resume says what continues the loop, since CCW's skill
// exits on a pause.
func TestLoopControlEmptyBody(t *testing.T) {
	e := loopsEnv(t)
	const id = "loop-v2-20260122-abc123"
	path := "/api/v1/loops/" + id
	for _, step := range []struct {
		action, body string
	}{{"pause", ""}, {"resume", " \n"}, {"pause", ""}, {"resume", ""}} {
		var r response
		if step.body == "" {
			r = e.request("POST", path+"/"+step.action, testToken, nil)
		} else {
			r = e.post(path+"/"+step.action, step.body)
		}
		wantStatus(t, step.action+" with an empty body", r, 200)
		var res server.LoopControlResult
		r.decodeJSON(t, &res)
		want := ""
		if step.action == "resume" {
			want = "/ccw-loop --loop-id=" + id + " --auto"
		}
		if res.Next != want || res.Event.Next != want {
			t.Errorf("%s: next %q (event %q); want %q", step.action, res.Next, res.Event.Next, want)
		}
		if len(res.Wrote) != 1 || res.Wrote[0] != ".workflow/.loop/"+id+".json: status, updated_at" {
			t.Errorf("%s: wrote %q", step.action, res.Wrote)
		}
	}
	r := e.request("POST", path+"/stop", testToken, nil)
	wantStatus(t, "stop with no body", r, 200)
	var res server.LoopControlResult
	r.decodeJSON(t, &res)
	if res.Status != "stopped" {
		t.Errorf("stop with no body: status %q; want stopped", res.Status)
	}
	// The resume is recorded, with what continues the loop.
	var nexts []string
	for _, ev := range e.lines(loop.EventsFile) {
		if ev["loop"] == id && ev["event"] == "resume" {
			nexts = append(nexts, ev["next"].(string))
		}
	}
	if len(nexts) != 2 || nexts[0] != "/ccw-loop --loop-id="+id+" --auto" {
		t.Errorf("resume events record next %q", nexts)
	}
}
