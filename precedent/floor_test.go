package precedent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// unbounded is the local index with every lookup's lower bound dropped: the
// lists newestHolders read before it bounded them.
type unbounded struct{ *localIndex }

func (u unbounded) Holders(ctx context.Context, words []string, from, before int64, n int) ([]int64, error) {
	return u.localIndex.Holders(ctx, words, 0, before, n)
}

// counting counts the rowids a lookup returns.
type counting struct {
	Index
	rows *int
}

func (c counting) Holders(ctx context.Context, words []string, from, before int64, n int) ([]int64, error) {
	seqs, err := c.Index.Holders(ctx, words, from, before, n)
	*c.rows += len(seqs)
	return seqs, err
}

// Bounding each word's lookup below by the floor the words before it set
// changes no search's candidates or scores, on every query of the
// evaluation corpus, for pools that the corpus's common words fill; and it
// reads fewer rows.
func TestHolderFloorChangesNothing(t *testing.T) {
	lines, queries := loadCorpus(t)
	store := evalIndex(t, lines, 0)
	for _, pool := range []int{20, 100, 500} {
		var bounded, all int
		sameScores(t, queries, pool, "with the floor", counting{&localIndex{store: store}, &bounded},
			"without", counting{unbounded{&localIndex{store: store}}, &all})
		t.Logf("pool %d: %d rows read with the floor, %d without", pool, bounded, all)
		if bounded >= all {
			t.Errorf("pool %d: the floor read %d rows, no fewer than %d without it", pool, bounded, all)
		}
	}
}

// The local index finds the pool in one pass (the tokens' lists merged
// newest first, cut at the pool's n-th decision): the same candidates and
// scores as each word's unbounded list of its newest holders, on every
// query of the evaluation corpus, for pools the corpus fills and pools it
// does not.
func TestMergedPoolChangesNothing(t *testing.T) {
	lines, queries := loadCorpus(t)
	store := evalIndex(t, lines, 0)
	var local Index = &localIndex{store: store}
	if _, ok := local.(pooler); !ok {
		t.Fatal("the local index does not merge the lists: this test compares nothing")
	}
	for _, pool := range []int{1, 20, 100, 500, 5000} {
		var all int
		sameScores(t, queries, pool, "merged", local, "word by word", counting{unbounded{&localIndex{store: store}}, &all})
	}
}

// sameScores fails unless every query of the corpus scores the same
// candidates the same with the lookups of got as with those of want, at
// that pool.
func sameScores(t *testing.T, queries []corpusQuery, pool int, gotName string, got Index, wantName string, want Index) {
	t.Helper()
	ctx := context.Background()
	for _, q := range queries {
		tokens := QueryTerms(q.Query)
		if len(tokens) == 0 {
			continue
		}
		opts := Options{K: 3, Category: q.Category, Pool: pool}
		opts.defaults()
		g, err := score(ctx, got, tokens, opts)
		if err != nil {
			t.Fatal(err)
		}
		w, err := score(ctx, want, tokens, opts)
		if err != nil {
			t.Fatal(err)
		}
		if gs, ws := fmt.Sprintf("%+v", g), fmt.Sprintf("%+v", w); gs != ws {
			t.Fatalf("pool %d, %s %q: %s\n%s\n%s\n%s", pool, q.ID, q.Query, gotName, gs, wantName, ws)
		}
	}
}

// The merged pool's statement sorts nothing: SQLite merges the words'
// lists in the order FTS5 walks them, newest first, and stops when the
// pool is read. A sort (a temporary B-tree) would read every word's whole
// list, hundreds of thousands of rows at 1M decisions.
func TestMergedPoolSortsNothing(t *testing.T) {
	lines, _ := loadCorpus(t)
	store := evalIndex(t, lines, 100)
	for _, words := range []int{1, 2, 7, maxTerms} {
		rows, err := store.DB.Query("EXPLAIN QUERY PLAN "+poolSQL(words), make([]any, words)...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		if strings.Contains(text, "TEMP B-TREE") || strings.Count(text, "SCAN decisions_fts") != words {
			t.Errorf("%d words: plan\n%s\nwants one FTS5 scan per word and no sort", words, text)
		}
	}
}

// cancelling cancels the search's context once the totals are read.
type cancelling struct {
	*localIndex
	cancel context.CancelFunc
}

func (c cancelling) Totals(ctx context.Context) (int64, float64, error) {
	defer c.cancel()
	return c.localIndex.Totals(ctx)
}

// The local index runs its statements without the caller's cancellation,
// but a search still stops between them once the context is done, and a
// search asked with a done context reads nothing.
func TestSearchStopsWhenCancelled(t *testing.T) {
	lines, queries := loadCorpus(t)
	store := evalIndex(t, lines, 0)
	q := queries[0]
	ctx, cancel := context.WithCancel(context.Background())
	opts := Options{K: 3}
	opts.defaults()
	if _, err := score(ctx, cancelling{&localIndex{store: store}, cancel}, QueryTerms(q.Query), opts); !errors.Is(err, context.Canceled) {
		t.Errorf("search cancelled after the totals: err %v, want context.Canceled", err)
	}
	if hits, err := Search(ctx, store, q.Query, Options{}); !errors.Is(err, context.Canceled) || hits != nil {
		t.Errorf("search with a cancelled context: %d hits, err %v; want none, context.Canceled", len(hits), err)
	}
	if hits, err := Search(context.Background(), store, q.Query, Options{}); err != nil || len(hits) == 0 {
		t.Fatalf("search: %d hits, err %v; want some (the query must match for this test to mean anything)", len(hits), err)
	}
}
