package precedent

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
)

// Weights are the bm25 weights of the indexed fields: what was decided
// counts most, then the request's own description, then why, then what
// came next.
type Weights struct {
	Input, Reason, NextAction, Context float64
}

// DefaultWeights were tuned on testdata/precedent (see BENCHMARKS.md).
var DefaultWeights = Weights{Input: 4, Reason: 1, NextAction: 0.5, Context: 1.5}

// Incorrect says what to do with decisions proved wrong.
type Incorrect int

const (
	// RankLast (the default) keeps them, marked "avoid", after the others.
	RankLast Incorrect = iota
	// Include ranks them like any other (still marked).
	Include
	// Exclude drops them.
	Exclude
)

// Options tune a search.
type Options struct {
	// K is how many hits to return (default 3).
	K int
	// Category boosts decisions of the same category (not a filter).
	Category string
	// Incorrect: RankLast, Include or Exclude.
	Incorrect Incorrect
	// Weights of the fields (zero: DefaultWeights).
	Weights Weights
	// CategoryBoost multiplies the score of a same-category hit (0: 1.3).
	CategoryBoost float64
	// Pool bounds how many matching decisions bm25 scores, newest first
	// (0: 500).
	Pool int
}

func (o *Options) defaults() {
	if o.K <= 0 {
		o.K = 3
	}
	if o.Weights == (Weights{}) {
		o.Weights = DefaultWeights
	}
	if o.CategoryBoost == 0 {
		o.CategoryBoost = 1.3
	}
	if o.Pool <= 0 {
		o.Pool = 500
	}
}

// Hit is a past decision similar to the query.
type Hit struct {
	ID         string  `json:"id"`
	Score      float64 `json:"score"`
	Category   string  `json:"category"`
	Input      string  `json:"input"`
	Decision   string  `json:"decision"`
	Reason     string  `json:"reason"`
	NextAction string  `json:"next_action"`
	Outcome    string  `json:"outcome"`
	Iteration  int64   `json:"iteration"`
	TS         string  `json:"ts"`
	Tier       string  `json:"tier"`
	Depth      string  `json:"depth"`
	// Avoid marks a decision proved INCORRECT: seed 000 says not to repeat it.
	Avoid bool  `json:"avoid"`
	Seq   int64 `json:"-"`
}

// Search returns the decisions most similar to query, best first.
//
// Cost is bounded whatever the size of the journal: bm25 scores the Pool
// newest decisions that hold any query word (FTS5 walks its doclists
// newest first and stops there), and a second, unscored lookup finds the
// newest decisions holding every query word, however old, so that a
// near-exact precedent is never lost to age.
func Search(ctx context.Context, store *db.Store, query string, opts Options) ([]Hit, error) {
	opts.defaults()
	tokens := Tokens(query)
	if len(tokens) > maxTerms {
		tokens = tokens[:maxTerms]
	}
	if len(tokens) == 0 {
		return nil, nil
	}
	scores, err := score(ctx, store, tokens, opts)
	if err != nil {
		return nil, err
	}
	return rank(ctx, store, scores, opts)
}

// maxTerms bounds the words of one search (the first ones: a hook passing
// a long message puts the subject first).
const maxTerms = 16

// score returns bm25 scores (higher is better) by journal position.
//
// FTS5's own bm25() counts, before it scores a row, every row that holds
// each query term: on 1M decisions a common word costs tens of
// milliseconds. So the pool (the Pool newest decisions holding any query
// word, read newest first, which FTS5 does without scoring) is scored here,
// by the same formula, with each term's document count taken from the
// pool: exact when the pool holds every match, else the term's share of
// the pool's span of the journal, scaled to the whole.
func score(ctx context.Context, store *db.Store, tokens []string, opts Options) (map[int64]float64, error) {
	w := opts.Weights
	weights := [4]float64{w.Input, w.Reason, w.NextAction, w.Context}
	st, err := readStats(ctx, store)
	if err != nil || st.rows == 0 {
		return map[int64]float64{}, err
	}
	rows, err := store.DB.QueryxContext(ctx, `SELECT rowid, input, reason, next_action, context FROM decisions_fts
		WHERE decisions_fts MATCH ? ORDER BY rowid DESC LIMIT ?`, MatchAny(tokens), opts.Pool)
	if err != nil {
		return nil, fmt.Errorf("precedent: search: %w", err)
	}
	defer rows.Close()
	t := newTerms(tokens)
	type doc struct {
		seq  int64
		cols [4]string
	}
	var pool []doc
	for rows.Next() {
		var d doc
		if err := rows.Scan(&d.seq, &d.cols[0], &d.cols[1], &d.cols[2], &d.cols[3]); err != nil {
			return nil, fmt.Errorf("precedent: search: %w", err)
		}
		pool = append(pool, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("precedent: search: %w", err)
	}
	rows.Close()
	// How often each document holds each term (bm25 weighs the count by
	// the column's weight), its length, and how many documents hold each.
	freq := make([][]float64, len(pool))
	dl := make([]int, len(pool))
	hits := make([]float64, len(tokens))
	tf := make([]int, len(tokens))
	var buf []byte
	for i := range pool {
		freq[i] = make([]float64, len(tokens))
		held := make([]bool, len(tokens))
		for c, text := range pool[i].cols {
			clear(tf)
			var n int
			n, buf = t.scan(text, tf, buf)
			dl[i] += n
			for j, k := range tf {
				freq[i][j] += weights[c] * float64(k)
				held[j] = held[j] || k > 0
			}
		}
		for j, h := range held {
			if h {
				hits[j]++
			}
		}
	}
	if len(pool) == opts.Pool {
		// The pool is the newest part of the matches: scale its counts to
		// the journal from the span of row ids it covers.
		var top int64
		if err := store.DB.GetContext(ctx, &top, `SELECT coalesce(max(seq), 0) FROM decisions`); err != nil {
			return nil, fmt.Errorf("precedent: search: %w", err)
		}
		if span := top - pool[len(pool)-1].seq + 1; span > 0 {
			for j := range hits {
				hits[j] = min(hits[j]*float64(st.rows)/float64(span), float64(st.rows))
			}
		}
	}
	idfs := make([]float64, len(tokens))
	for j, h := range hits {
		idfs[j] = idf(st.rows, h)
	}
	scores := make(map[int64]float64, len(pool))
	best := 0.0
	for i, d := range pool {
		norm := bm25K1 * (1 - bm25B + bm25B*float64(dl[i])/st.avgdl)
		s := 0.0
		for j, f := range freq[i] {
			s += idfs[j] * (f * (bm25K1 + 1)) / (f + norm)
		}
		scores[d.seq] = s
		best = max(best, s)
	}
	if len(tokens) < 2 || len(pool) < opts.Pool {
		return scores, nil // a pool short of its bound holds every match
	}
	// Older decisions holding the query's rarest words (all of them when
	// there are few): scored as high as the best of the newest (they match
	// at least as well), so rank and recency decide. The rarest words keep
	// this bounded: FTS5 finds rows holding every word of a long query by
	// walking each word's whole list of rows.
	var all []int64
	if err := store.DB.SelectContext(ctx, &all, `SELECT rowid FROM decisions_fts WHERE decisions_fts MATCH ?
		ORDER BY rowid DESC LIMIT ?`, MatchAll(rarest(tokens, hits, allTerms)), opts.K*4); err != nil {
		return nil, fmt.Errorf("precedent: search: %w", err)
	}
	for _, seq := range all {
		if _, ok := scores[seq]; !ok {
			scores[seq] = best
		}
	}
	return scores, nil
}

// allTerms is how many of a query's rarest words an older decision must
// hold to join the pool.
const allTerms = 3

// rarest returns the n tokens held by the fewest documents (by hits), in
// query order.
func rarest(tokens []string, hits []float64, n int) []string {
	if len(tokens) <= n {
		return tokens
	}
	idx := make([]int, len(tokens))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(hits[a], hits[b]) })
	idx = idx[:n]
	slices.Sort(idx)
	out := make([]string, n)
	for i, j := range idx {
		out[i] = tokens[j]
	}
	return out
}

// rank orders the scored decisions: decisions proved wrong after the others
// (unless asked otherwise), a same-category boost, then score, then the
// newer first. Only the k best are read in full.
func rank(ctx context.Context, store *db.Store, scores map[int64]float64, opts Options) ([]Hit, error) {
	// Only the best candidates by raw score can reach the top k after the
	// category boost and the AVOID ordering: read those, not the whole pool.
	seqs := make([]int64, 0, len(scores))
	for s := range scores {
		seqs = append(seqs, s)
	}
	slices.SortFunc(seqs, func(a, b int64) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return int(b - a)
	})
	if n := max(opts.K*20, 60); len(seqs) > n {
		seqs = seqs[:n]
	}
	briefs, err := store.Briefs(ctx, seqs)
	if err != nil {
		return nil, err
	}
	type cand struct {
		db.Brief
		score float64
		avoid bool
	}
	cands := make([]cand, 0, len(briefs))
	for _, b := range briefs {
		c := cand{Brief: b, score: scores[b.Seq], avoid: b.Outcome == journal.OutcomeIncorrect}
		if opts.Category != "" && b.Category == opts.Category {
			c.score *= opts.CategoryBoost
		}
		if c.avoid && opts.Incorrect == Exclude {
			continue
		}
		cands = append(cands, c)
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if opts.Incorrect == RankLast && a.avoid != b.avoid {
			if a.avoid {
				return 1
			}
			return -1
		}
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		case a.Seq > b.Seq:
			return -1
		case a.Seq < b.Seq:
			return 1
		}
		return 0
	})
	if len(cands) > opts.K {
		cands = cands[:opts.K]
	}
	top := make([]int64, len(cands))
	for i, c := range cands {
		top[i] = c.Seq
	}
	rows, err := store.DecisionsBySeq(ctx, top)
	if err != nil {
		return nil, err
	}
	bySeq := map[int64]*db.DecisionRow{}
	for i := range rows {
		bySeq[rows[i].Seq] = &rows[i]
	}
	hits := make([]Hit, 0, len(cands))
	for _, c := range cands {
		d, ok := bySeq[c.Seq]
		if !ok {
			continue
		}
		hits = append(hits, Hit{ID: d.ID, Score: c.score, Category: d.Category, Input: d.Input, Decision: d.Decision, Reason: d.Reason,
			NextAction: d.NextAction, Outcome: d.Outcome, Iteration: d.Iteration, TS: d.TS, Tier: d.Tier, Depth: d.Depth,
			Avoid: c.avoid, Seq: d.Seq})
	}
	return hits, nil
}

// Describe is a one-line summary of a hit for a terminal or a hook prompt.
func (h Hit) Describe() string {
	mark := ""
	if h.Avoid {
		mark = " [AVOID: proved INCORRECT]"
	}
	return fmt.Sprintf("%s (iter %d, %s): %s -> %s, outcome %s%s", h.ID, h.Iteration, h.Category, strings.TrimSpace(h.Input), h.Decision, h.Outcome, mark)
}
