package precedent

import (
	"context"
	"fmt"
	"testing"
)

// A brief search (what `orbit precedent` prints when piped) returns the
// same hits as a full one, with the same fields the table shows, on every
// query of the evaluation corpus, whatever the handling of decisions proved
// wrong.
func TestBriefHitsAreTheFullHits(t *testing.T) {
	lines, queries := loadCorpus(t)
	store := evalIndex(t, lines, 0)
	ctx := context.Background()
	shown := func(h Hit) string {
		return fmt.Sprintf("%s iter %d %s %s %s avoid %v score %v seq %d input %q reason %q",
			h.ID, h.Iteration, h.Category, h.Decision.Decision, h.Outcome, h.Avoid, h.Score, h.Seq, h.Input, h.Reason)
	}
	hits, avoid := 0, 0
	for _, q := range queries {
		for _, mode := range []Incorrect{Surface, RankLast, Include, Exclude} {
			for _, k := range []int{3, 10} {
				opts := Options{K: k, Category: q.Category, Incorrect: mode}
				full, err := Search(ctx, store, q.Query, opts)
				if err != nil {
					t.Fatal(err)
				}
				opts.Brief = true
				brief, err := Search(ctx, store, q.Query, opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(brief) != len(full) {
					t.Fatalf("%s %q (mode %d, k %d): %d brief hits, %d full", q.ID, q.Query, mode, k, len(brief), len(full))
				}
				for i := range full {
					if g, w := shown(brief[i]), shown(full[i]); g != w {
						t.Fatalf("%s %q (mode %d, k %d) hit %d: brief\n%s\nfull\n%s", q.ID, q.Query, mode, k, i, g, w)
					}
					hits++
					if full[i].Avoid {
						avoid++
					}
				}
			}
		}
	}
	if hits == 0 || avoid == 0 {
		t.Fatalf("%d hits, %d of them AVOID: the corpus no longer tests both", hits, avoid)
	}
}
