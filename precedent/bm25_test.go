package precedent

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// TestScoreIsFTS5BM25 holds the scorer to FTS5's own bm25(): on the
// evaluation corpus, where the pool holds every match so the document
// counts are exact, every decision a search scores gets the score bm25()
// gives it (this checks the tokenizer, the stemmer, the column weights and
// the index totals together), and the decisions it chose to read include
// the ten bm25() ranks best, for every evaluation query.
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
		got, err := score(ctx, store, tokens, Options{K: 3, Weights: w, Pool: len(lines) + 1})
		if err != nil {
			t.Fatal(err)
		}
		type scored struct {
			seq   int64
			score float64
		}
		var want []scored
		if err := func() error {
			rows, err := store.DB.QueryxContext(ctx, `SELECT rowid, -bm25(decisions_fts, ?, ?, ?, ?) FROM decisions_fts WHERE decisions_fts MATCH ?
				ORDER BY bm25(decisions_fts, ?, ?, ?, ?), rowid DESC`,
				w.Input, w.Reason, w.NextAction, w.Context, MatchAny(tokens), w.Input, w.Reason, w.NextAction, w.Context)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var s scored
				if err := rows.Scan(&s.seq, &s.score); err != nil {
					return err
				}
				want = append(want, s)
			}
			return rows.Err()
		}(); err != nil {
			t.Fatal(err)
		}
		byseq := map[int64]float64{}
		for _, s := range want {
			byseq[s.seq] = s.score
		}
		for seq, g := range got {
			wv, ok := byseq[seq]
			if !ok || math.Abs(g-wv) > 1e-9*math.Max(1, math.Abs(wv)) {
				t.Errorf("%s %q: decision %d scored %v; FTS5 bm25 says %v (matched: %v)", q.ID, q.Query, seq, g, wv, ok)
			}
			compared++
		}
		for i, s := range want[:min(10, len(want))] {
			if _, ok := got[s.seq]; !ok && s.score > 0 {
				t.Errorf("%s %q: bm25's number %d (decision %d, %v) was not read", q.ID, q.Query, i+1, s.seq, s.score)
			}
		}
	}
	if compared < 10000 {
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

// TestOlderDecisionsFound: when the pool (the newest decisions holding any
// query word) is full and does not reach back far enough, a decision
// holding the query's rarest words is still found however old.
func TestOlderDecisionsFound(t *testing.T) {
	line := func(i int, input string) string {
		return fmt.Sprintf(`{"id":"iter-%d-1","iteration":%d,"ts":"2026-02-02T08:41:28Z","tier":"auto_approve","depth":"trivial","category":"quality","input":%q,"decision":"APPROVED","reason":"","next_action":"","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"}}`, i, i, input)
	}
	lines := []string{line(1, "Pin the flakey zookeeper quorum deploy")}
	for i := 2; i <= 60; i++ {
		lines = append(lines, line(i, fmt.Sprintf("Deploy service %d to staging", i)))
	}
	store := evalIndex(t, lines, 0)
	ctx := context.Background()
	hits, err := Search(ctx, store, "deploy the zookeeper quorum", Options{K: 3, Pool: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].ID != "iter-1-1" {
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		t.Errorf("hits %v; want iter-1-1 first (it holds every word, though older than the pool)", ids)
	}
}

// TestIDFMoreHitsThanRows: totals read before a concurrent write can count
// fewer rows than the hits read after it; the score stays a number.
func TestIDFMoreHitsThanRows(t *testing.T) {
	for _, tt := range []struct {
		rows int64
		hits float64
	}{{10, 12}, {0, 1}, {5, 5.6}} {
		if v := idf(tt.rows, tt.hits); math.IsNaN(v) || v <= 0 {
			t.Errorf("idf(%d, %v) = %v; want a small positive number", tt.rows, tt.hits, v)
		}
	}
}
