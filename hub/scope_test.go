package hub_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/remote"
)

// TestOneProjectCannotSeeAnother gives two projects decisions with the
// same ids and checks, through the API and through the store, that each
// project's token reads and pushes its own project only, and that only a
// fleet token reads across projects.
func TestOneProjectCannotSeeAnother(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, s *hub.Store) {
		ctx := context.Background()
		url := serve(t, s)
		a := newProject(t, "proj-a", map[string]string{project.DecisionsFile: synthJournal(t, 40, 1)})
		b := newProject(t, "proj-b", map[string]string{project.DecisionsFile: synthJournal(t, 60, 2)})
		pushA := must(s.CreateToken(ctx, "proj-a", hub.ScopePush, "", testNow))
		readB := must(s.CreateToken(ctx, "proj-b", hub.ScopeRead, "", testNow))
		fleet := must(s.CreateToken(ctx, hub.AllProjects, hub.ScopeRead, "", testNow))
		a.push(t, url, pushA)

		// A's push token cannot push B, nor can B's read token or the
		// fleet read token.
		for name, tok := range map[string]string{"A's push token": pushA, "B's read token": readB, "the fleet read token": fleet} {
			_, err := remote.Push(ctx, remote.NewClient(url, tok), b.Project, b.id, remote.PushOptions{})
			var he *remote.Error
			if !errors.As(err, &he) || he.Status != http.StatusForbidden {
				t.Errorf("push B with %s: err = %v; want 403", name, err)
			}
		}
		b.push(t, url, adminToken)

		// A page is an array, as orbit serve answers; the next page's
		// address is in the Link header.
		type page []struct {
			Project string `json:"project"`
			ID      string `json:"id"`
		}
		var pa page
		if st := get(t, url+"/api/v1/decisions?limit=1000", pushA, &pa); st != 200 || len(pa) != 40 {
			t.Fatalf("A's own decisions: status %d, %d items; want 200, 40", st, len(pa))
		}
		for _, it := range pa {
			if it.Project != "proj-a" {
				t.Fatalf("A's token read a decision of %s", it.Project)
			}
		}
		for _, path := range []string{"/api/v1/decisions?project=proj-b", "/api/v1/decisions?project=*", "/api/v1/decisions/iter-1-1?project=proj-b",
			"/api/v1/trust?project=proj-b", "/api/v1/stale?project=proj-b", "/api/v1/loops?project=*", "/api/v1/projects?project=*",
			"/api/v1/push/state?project=proj-b", "/api/v1/trust/chart.svg?project=proj-b"} {
			if st := get(t, url+path, pushA, nil); st != http.StatusForbidden {
				t.Errorf("GET %s with A's token: %d; want 403", path, st)
			}
		}
		var projects []hub.ProjectSummary
		if st := get(t, url+"/api/v1/projects", pushA, &projects); st != 200 || len(projects) != 1 || projects[0].ID != "proj-a" {
			t.Errorf("projects with A's token: %d %+v; want proj-a alone", st, projects)
		}
		if st := get(t, url+"/api/v1/projects", "", nil); st != http.StatusUnauthorized {
			t.Errorf("projects without a token: %d; want 401", st)
		}
		if st := get(t, url+"/api/v1/projects", "not-a-token", nil); st != http.StatusUnauthorized {
			t.Errorf("projects with an unknown token: %d; want 401", st)
		}
		var pb page
		if st := get(t, url+"/api/v1/decisions?limit=1000", readB, &pb); st != 200 || len(pb) != 60 {
			t.Errorf("B's read token: status %d, %d items; want 200, 60", st, len(pb))
		}
		var all page
		if st := get(t, url+"/api/v1/decisions?project=*&limit=1000", fleet, &all); st != 200 || len(all) != 100 {
			t.Errorf("fleet token over *: status %d, %d items; want 200, 100", st, len(all))
		}
		if st := get(t, url+"/api/v1/projects", fleet, &projects); st != 200 || len(projects) != 2 {
			t.Errorf("projects with the fleet token: %d, %d; want 2", st, len(projects))
		}

		// The store scopes in SQL: the same id in two projects is two
		// decisions, each read only through its own project.
		da, _, err := s.DecisionByID(ctx, "proj-a", "iter-1-1")
		if err != nil {
			t.Fatal(err)
		}
		db, _, err := s.DecisionByID(ctx, "proj-b", "iter-1-1")
		if err != nil {
			t.Fatal(err)
		}
		if da.Project != "proj-a" || db.Project != "proj-b" || da.Input == db.Input {
			t.Errorf("iter-1-1 of A = %+v, of B = %+v; want each its own", da, db)
		}
		if _, err := hub.Scope(hub.Access{Project: "proj-a", Scope: hub.ScopePush}, "proj-b", true); !errors.Is(err, hub.ErrForbidden) {
			t.Errorf("Scope(A's token, proj-b) = %v; want ErrForbidden", err)
		}
		if _, err := s.Push(ctx, hub.Access{Project: "proj-a", Scope: hub.ScopePush},
			hub.Batch{Project: "proj-b", Kind: journal.KindDecisions, Offset: 0, TailHash: hub.TailHash(nil), Data: []byte("{}\n")}, testNow); !errors.Is(err, hub.ErrForbidden) {
			t.Errorf("Push into B with A's access = %v; want ErrForbidden", err)
		}
		// A revoked token stops working at once.
		list := must(s.Tokens(ctx))
		for _, tk := range list {
			if tk.Project == "proj-a" {
				if ok, err := s.RevokeToken(ctx, tk.ID); !ok || err != nil {
					t.Fatalf("revoke %s: %v %v", tk.ID, ok, err)
				}
			}
		}
		if st := get(t, url+"/api/v1/projects", pushA, nil); st != http.StatusUnauthorized {
			t.Errorf("revoked token: %d; want 401", st)
		}
	})
}
