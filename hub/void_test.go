package hub_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/precedent"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/trust"
)

// TestVoidsAsLocal voids decisions in the retrograde journal (one with an
// outcome, one without, one voided then taken back, one the journal does
// not hold) and holds the hub to what the project's own index answers:
// trust whole and by category, the decision's view, stale decisions; a
// voided decision is no precedent. Taking a void back makes it count again.
// The project list's trust headline, trust and stale decisions (each cached
// by the projects' push counters) follow each push: the project list's
// headline equals the project's own `orbit trust`.
func TestVoidsAsLocal(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, s *hub.Store) {
		ctx := context.Background()
		url := serve(t, s)
		p := newProject(t, "gamma", map[string]string{project.DecisionsFile: synthJournal(t, 600, 11)})
		ix := p.local(t)
		var scored []string
		if err := ix.Store.DB.SelectContext(ctx, &scored, `SELECT decision_id FROM decision_outcomes WHERE outcome IN ('CORRECT', 'INCORRECT') ORDER BY decision_id LIMIT 2`); err != nil || len(scored) != 2 {
			t.Fatalf("scored decisions: %v %v", scored, err)
		}
		var pending string
		if err := ix.Store.DB.GetContext(ctx, &pending, `SELECT id FROM decisions d WHERE NOT EXISTS (SELECT 1 FROM decision_outcomes o WHERE o.decision_id = d.id) ORDER BY seq LIMIT 1`); err != nil {
			t.Fatal(err)
		}
		// The project list's headline, as `orbit trust` gives it locally.
		listed := func(when string) {
			t.Helper()
			ps := must(s.Projects(ctx, "gamma"))
			want, err := trust.Current(ctx, p.local(t).Store)
			if err != nil || len(ps) != 1 {
				t.Fatalf("%s: %d projects listed, %v", when, len(ps), err)
			}
			sameJSON(t, when+": the project list's trust", ps[0].Trust, want)
		}
		p.push(t, url, adminToken)
		listed("pushed")
		listed("listed again")
		// Read (and cached) before the void: the pending decision is stale.
		if !slices.ContainsFunc(must(s.Stale(ctx, "gamma", 0, 100000, time.Now())).Decisions, func(d hub.StaleDecision) bool { return d.ID == pending }) {
			t.Fatalf("before its void, %s is not listed stale", pending)
		}
		void := func(ts, id string, v bool) string {
			return fmt.Sprintf(`{"ts":%q,"decision_id":%q,"void":%v,"evidence":"recorded by mistake"}`+"\n", ts, id, v)
		}
		p.write(t, project.RetroFile, void("2026-03-09T10:00:00Z", scored[0], true)+void("2026-03-09T10:00:00Z", scored[1], true)+
			void("2026-03-09T10:00:00Z", pending, true)+void("2026-03-09T11:00:00Z", scored[1], false)+void("2026-03-09T11:00:00Z", "iter-9999-1", true))
		p.push(t, url, adminToken)

		check := func(when string) {
			t.Helper()
			ix := p.local(t)
			listed(when)
			sameJSON(t, when+": trust", must(s.Trust(ctx, "gamma", hub.TrustOptions{})), localTrust(t, p, trust.Options{}))
			for _, c := range journal.Categories {
				sameJSON(t, when+": trust of "+c, must(s.Trust(ctx, "gamma", hub.TrustOptions{Category: c})),
					localTrust(t, p, trust.Options{Filter: trust.Filter{Category: c}}))
			}
			for _, id := range []string{scored[0], scored[1], pending} {
				d, found, err := s.DecisionByID(ctx, "gamma", id)
				row, lfound, lerr := ix.Store.Decision(ctx, id)
				if err != nil || lerr != nil || !found || !lfound {
					t.Fatalf("%s: decision %s: %v %v %v %v", when, id, found, err, lfound, lerr)
				}
				sameJSON(t, when+": decision "+id, d.DecisionView, journal.ViewOf(&row))
			}
			st, err := ceo.StaleDecisions(ctx, ix, ceo.StaleOptions{Iterations: 2, Limit: 100000}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for _, d := range st.Decisions {
				want = append(want, d.ID)
			}
			for _, d := range must(s.Stale(ctx, "gamma", 2, 100000, time.Now())).Decisions {
				got = append(got, d.ID)
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: stale on the hub: %d decisions; the project lists %d", when, len(got), len(want))
			}
		}
		check("voided")
		if d := decisionOf(t, s, scored[0]); !d.Voided || d.VoidReason != "recorded by mistake" {
			t.Errorf("voided decision %s: voided %v, reason %q", scored[0], d.Voided, d.VoidReason)
		}
		stale := must(s.Stale(ctx, "gamma", 0, 100000, time.Now()))
		for _, d := range stale.Decisions {
			if d.ID == pending {
				t.Errorf("the voided decision %s is listed stale", pending)
			}
		}
		for _, id := range []string{scored[0], pending} {
			d := decisionOf(t, s, id)
			hits := must(s.Precedent(ctx, "gamma", d.Input, precedent.Options{K: 100, Incorrect: precedent.Include}))
			if len(hits) == 0 {
				t.Errorf("precedent for %q found nothing", d.Input)
			}
			for _, h := range hits {
				if h.ID == id {
					t.Errorf("the voided decision %s is a precedent", id)
				}
			}
		}

		// Taking the void back: it counts again.
		p.appendTo(t, project.RetroFile, void("2026-03-09T12:00:00Z", scored[0], false))
		p.push(t, url, adminToken)
		check("taken back")
		if d := decisionOf(t, s, scored[0]); d.Voided {
			t.Errorf("decision %s still voided after its void was taken back", scored[0])
		}
	})
}

func decisionOf(t *testing.T, s *hub.Store, id string) hub.Decision {
	t.Helper()
	d, found, err := s.DecisionByID(context.Background(), "gamma", id)
	if err != nil || !found {
		t.Fatalf("decision %s: %v %v", id, found, err)
	}
	return d
}
