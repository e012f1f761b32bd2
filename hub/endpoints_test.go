package hub_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/trust"
)

// TestReadEndpointsTakeProject pushes two projects and reads every read
// endpoint of the API with ?project=ID and, where it makes sense, ?project=*:
// each answer is that project's alone, or both projects'; GET
// /api/v1/projects counts each project's decisions and outcome events as
// its own index does.
func TestReadEndpointsTakeProject(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, s *hub.Store) {
		ctx := context.Background()
		url := serve(t, s)
		a := newProject(t, "proj-a", demoFiles(t))
		b := newProject(t, "proj-b", map[string]string{project.DecisionsFile: synthJournal(t, 120, 3)})
		a.push(t, url, adminToken)
		b.push(t, url, adminToken)
		projs := map[string]proj{"proj-a": a, "proj-b": b}

		var list []hub.ProjectSummary
		if st := get(t, url+"/api/v1/projects?project=*", adminToken, &list); st != 200 || len(list) != 2 {
			t.Fatalf("GET /api/v1/projects?project=*: %d, %d projects; want 2", st, len(list))
		}
		for _, ps := range list {
			c, err := projs[ps.ID].local(t).Store.Counts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ps.Decisions != c.Decisions || ps.OutcomeEvents != c.Events || ps.Decisions == 0 || ps.OutcomeEvents == 0 {
				t.Errorf("%s: %d decisions, %d outcome events on the hub; its index has %d, %d", ps.ID, ps.Decisions, ps.OutcomeEvents, c.Decisions, c.Events)
			}
		}
		if st := get(t, url+"/api/v1/projects?project=proj-b", adminToken, &list); st != 200 || len(list) != 1 || list[0].ID != "proj-b" {
			t.Errorf("GET /api/v1/projects?project=proj-b: %d, %+v; want proj-b alone", st, list)
		}

		// Each view answers one project's records for ?project=ID, both
		// projects' for ?project=*; projectsIn reads which projects an
		// answer holds.
		type view struct {
			path       string
			both       bool // both projects have records here
			projectsIn func(t *testing.T, body []byte) map[string]int
		}
		items := func(field string) func(*testing.T, []byte) map[string]int {
			return func(t *testing.T, body []byte) map[string]int {
				var list []struct{ Project string }
				var obj map[string]json.RawMessage
				raw := body
				if json.Unmarshal(body, &obj) == nil && field != "" {
					raw = obj[field]
				}
				if err := json.Unmarshal(raw, &list); err != nil {
					t.Fatalf("%v in %s", err, body)
				}
				got := map[string]int{}
				for _, it := range list {
					got[it.Project]++
				}
				return got
			}
		}
		trustOf := func(t *testing.T, body []byte) map[string]int {
			var rep trust.Report
			if err := json.Unmarshal(body, &rep); err != nil {
				t.Fatal(err)
			}
			return map[string]int{"decisions": rep.Decisions}
		}
		views := []view{
			{"/api/v1/decisions?limit=1000", true, items("")},
			{"/api/v1/stale?iterations=1&limit=1000", false, items("decisions")},
			{"/api/v1/loops?", false, items("")},
			{"/api/v1/precedent?k=100&incorrect=include&q=deploy+cache+release+service+migration+docs", true, items("")},
		}
		for _, v := range views {
			all := map[string]int{}
			for id := range projs {
				body := getBody(t, url+v.path+"&project="+id)
				got := v.projectsIn(t, body)
				for p, n := range got {
					if p != id {
						t.Errorf("GET %s&project=%s answered %d records of %s", v.path, id, n, p)
					}
					all[p] += n
				}
			}
			got := v.projectsIn(t, getBody(t, url+v.path+"&project=*"))
			if len(got) == 0 || !sameCounts(got, all) || (v.both && len(got) != 2) {
				t.Errorf("GET %s&project=*: %v; want the projects' own answers together, %v", v.path, got, all)
			}
		}
		// Trust: a project's is its own `orbit trust`; the fleet's counts
		// both projects' decisions.
		total := 0
		for id, p := range projs {
			got := trustOf(t, getBody(t, url+"/api/v1/trust?project="+id))
			want := localTrust(t, p, trust.Options{})
			if got["decisions"] != want.Decisions {
				t.Errorf("trust of %s on the hub: %d decisions; orbit trust %d", id, got["decisions"], want.Decisions)
			}
			total += want.Decisions
			if body := getBody(t, url+"/api/v1/trust/chart.svg?project="+id); !strings.Contains(string(body), "<svg") {
				t.Errorf("trust chart of %s: not an SVG", id)
			}
		}
		if got := trustOf(t, getBody(t, url+"/api/v1/trust?project=*")); got["decisions"] != total {
			t.Errorf("trust of every project: %d decisions; want %d", got["decisions"], total)
		}
		// One decision: by project only (the same id may be in each).
		var d hub.Decision
		if st := get(t, url+"/api/v1/decisions/iter-1-1?project=proj-b", adminToken, &d); st != 200 || d.Project != "proj-b" || d.ID != "iter-1-1" {
			t.Errorf("GET /api/v1/decisions/iter-1-1?project=proj-b: %d, %s/%s", st, d.Project, d.ID)
		}
		if st := get(t, url+"/api/v1/decisions/iter-1-1?project=*", adminToken, nil); st != http.StatusBadRequest {
			t.Errorf("GET /api/v1/decisions/iter-1-1?project=*: %d; want 400", st)
		}
	})
}

func getBody(t *testing.T, url string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return body
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
