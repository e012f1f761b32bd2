package hub_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/trust"
)

// TestViewsAcrossProjects pushes three projects and checks the views over
// all of them against the projects' own local answers: trust by category
// and calibration add up, stale decisions are each project's own, and
// paging through every decision sees each once.
func TestViewsAcrossProjects(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, s *hub.Store) {
		ctx := context.Background()
		url := serve(t, s)
		var projs []proj
		for i, n := range []int{300, 500, 200} {
			p := newProject(t, fmt.Sprintf("p%d", i), map[string]string{project.DecisionsFile: synthJournal(t, n, uint64(10+i))})
			p.pushBatches(t, url, adminToken, 64<<10)
			projs = append(projs, p)
		}
		type tally struct{ correct, incorrect int }
		want := map[string]tally{}
		wantCal := 0
		var wantStale []string
		total := 0
		for _, p := range projs {
			rep := localTrust(t, p, trust.Options{})
			for _, g := range rep.ByCategory {
				w := want[g.Value]
				want[g.Value] = tally{w.correct + g.Correct, w.incorrect + g.Incorrect}
			}
			wantCal += rep.Calibration.N
			ix := p.local(t)
			st, err := ceo.StaleDecisions(ctx, ix, ceo.StaleOptions{Iterations: 2, Limit: 100000}, testNow)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range st.Decisions {
				wantStale = append(wantStale, p.id.ID+"/"+d.ID)
			}
			c, _ := ix.Store.Counts(ctx)
			total += int(c.Decisions)
		}
		fleet := must(s.Trust(ctx, hub.AllProjects, hub.TrustOptions{}))
		got := map[string]tally{}
		for _, g := range fleet.ByCategory {
			got[g.Value] = tally{g.Correct, g.Incorrect}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || fleet.Calibration.N != wantCal || fleet.Decisions != total {
			t.Errorf("fleet trust by category = %v, calibration over %d, %d decisions; want %v, %d, %d", got, fleet.Calibration.N, fleet.Decisions, want, wantCal, total)
		}

		st := must(s.Stale(ctx, hub.AllProjects, 2, 100000, testNow))
		var gotStale []string
		for _, d := range st.Decisions {
			gotStale = append(gotStale, d.Project+"/"+d.ID)
		}
		sort.Strings(gotStale)
		sort.Strings(wantStale)
		if !slices.Equal(gotStale, wantStale) || st.Total != int64(len(wantStale)) {
			t.Errorf("stale across projects: %d (total %d); want the %d the projects list themselves", len(gotStale), st.Total, len(wantStale))
		}

		seen := map[string]bool{}
		cursor := ""
		for pages := 0; ; pages++ {
			page := must(s.Decisions(ctx, hub.AllProjects, hub.DecisionFilter{Limit: 37, Before: cursor}))
			for _, d := range page.Items {
				k := d.Project + "/" + d.ID
				if seen[k] {
					t.Fatalf("paging: %s seen twice", k)
				}
				seen[k] = true
			}
			if cursor = page.Next; cursor == "" || pages > 100 {
				break
			}
		}
		if len(seen) != total {
			t.Errorf("paging across projects saw %d decisions; want %d", len(seen), total)
		}
		var fromAPI []hub.ProjectSummary
		if st := get(t, url+"/api/v1/projects?project=*", adminToken, &fromAPI); st != 200 || len(fromAPI) != 3 {
			t.Fatalf("GET /api/v1/projects: %d, %d projects", st, len(fromAPI))
		}
		for i, ps := range fromAPI {
			h, err := trust.Current(ctx, projs[i].local(t).Store)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "headline of "+ps.ID, ps.Trust, h)
		}
	})
}
