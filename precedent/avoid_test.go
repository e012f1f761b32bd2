package precedent

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/internal/projecttest"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// TestFailedPrecedentShown is issue 15's case: the best match for a new
// decision is one proved INCORRECT, and many other decisions share a
// common word with the query. The failed one must be among the 3 hits
// `orbit decide` shows, marked AVOID with its evidence; ranked after every
// other hit, it came 19th, behind hits that barely matched.
func TestFailedPrecedentShown(t *testing.T) {
	line := func(id, input, reason string) string {
		return fmt.Sprintf(`{"id":%q,"iteration":1,"ts":"2026-03-08T10:00:00Z","tier":"quick_review","depth":"light","category":"deploy","input":%q,"decision":"APPROVED","reason":%q,"next_action":"","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"}}`, id, input, reason)
	}
	lines := []string{line("iter-1-1", "Deploy the hotfix straight to production, skipping staging", "urgent customer bug")}
	for i := 2; i <= 25; i++ {
		lines = append(lines, line(fmt.Sprintf("iter-1-%d", i), fmt.Sprintf("Update the changelog for release %d", i), "production notes"))
	}
	p := projecttest.New(t)
	write := func(rel, text string) {
		if err := os.WriteFile(p.Path(rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(project.DecisionsFile, strings.Join(lines, "\n")+"\n")
	write(project.RetroFile, `{"ts":"2026-03-09T10:00:00Z","decision_id":"iter-1-1","outcome":"INCORRECT","evidence":"the hotfix broke tax rounding in production; rolled back"}`+"\n")
	store := projecttest.Synced(t, p, time.Time{}).Store

	query := "Ship the hotfix to production and skip staging"
	hits, err := Search(context.Background(), store, query, Options{Category: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	var failed *Hit
	for i := range hits {
		if hits[i].ID == "iter-1-1" {
			failed = &hits[i]
		}
	}
	if failed == nil {
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		t.Fatalf("Search(%q) = %v; want the failed precedent iter-1-1 among the 3 hits", query, ids)
	}
	if !failed.Avoid || failed.Outcome != journal.OutcomeIncorrect {
		t.Errorf("iter-1-1: avoid %t, outcome %s; want AVOID, INCORRECT", failed.Avoid, failed.Outcome)
	}
	if want := "the hotfix broke tax rounding in production; rolled back"; failed.Evidence != want {
		t.Errorf("iter-1-1 evidence %q; want %q", failed.Evidence, want)
	}
	if d := failed.Describe(); !strings.Contains(d, "[AVOID: proved INCORRECT: the hotfix broke tax rounding") {
		t.Errorf("Describe() = %q; want the AVOID mark with its evidence", d)
	}

	// Ranked last, as before, it falls out of the top 3.
	last, err := Search(context.Background(), store, query, Options{Category: "deploy", Incorrect: RankLast})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range last {
		if h.ID == "iter-1-1" {
			t.Errorf("RankLast kept the failed precedent in the top 3; the test no longer shows the case")
		}
	}
}
