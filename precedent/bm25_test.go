package precedent

import (
	"context"
	"math"
	"testing"
)

// TestScoreIsFTS5BM25 holds the scorer to FTS5's own bm25(): on the
// evaluation corpus, where the pool holds every match so the document
// counts are exact, every matching decision of every evaluation query gets
// the score bm25() gives it. This checks the tokenizer, the stemmer, the
// column weights and the index totals together.
func TestScoreIsFTS5BM25(t *testing.T) {
	lines, queries := loadCorpus(t)
	store := evalIndex(t, lines, 0)
	ctx := context.Background()
	w := DefaultWeights
	compared := 0
	for _, q := range queries {
		tokens := Tokens(q.Query)
		if len(tokens) > maxTerms {
			tokens = tokens[:maxTerms]
		}
		if len(tokens) == 0 {
			continue
		}
		got, err := score(ctx, store, tokens, Options{Weights: w, Pool: len(lines) + 1})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := store.DB.QueryxContext(ctx, `SELECT rowid, bm25(decisions_fts, ?, ?, ?, ?) FROM decisions_fts WHERE decisions_fts MATCH ?`,
			w.Input, w.Reason, w.NextAction, w.Context, MatchAny(tokens))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var seq int64
			var want float64
			if err := rows.Scan(&seq, &want); err != nil {
				t.Fatal(err)
			}
			n++
			if g, ok := got[seq]; !ok || math.Abs(g+want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("%s %q: decision %d scored %v; FTS5 bm25 says %v", q.ID, q.Query, seq, g, -want)
			}
		}
		rows.Close()
		if n != len(got) && len(tokens) < 2 {
			t.Errorf("%s %q: %d decisions scored; FTS5 matched %d", q.ID, q.Query, len(got), n)
		}
		compared += n
	}
	if compared < 1000 {
		t.Fatalf("only %d scores compared", compared)
	}
	t.Logf("%d scores compared", compared)
}

func TestSQLiteVarint(t *testing.T) {
	tests := []struct {
		in   []byte
		want uint64
		n    int
	}{
		{[]byte{0x00}, 0, 1},
		{[]byte{0x7f}, 127, 1},
		{[]byte{0x81, 0x00}, 128, 2},
		{[]byte{0x87, 0x68, 0x00}, 1000, 2},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, math.MaxUint64, 9},
		{[]byte{0x81}, 0, 0},
	}
	for _, tt := range tests {
		if v, n := sqliteVarint(tt.in); v != tt.want || n != tt.n {
			t.Errorf("sqliteVarint(% x) = %d, %d; want %d, %d", tt.in, v, n, tt.want, tt.n)
		}
	}
}
