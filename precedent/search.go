package precedent

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
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
	// Surface (the default) ranks them like any other, marked AVOID with
	// their evidence, and makes sure the best relevant one is among the
	// hits: seed 000 asks the loop to see its failed precedents so as not
	// to repeat them (see AvoidShare).
	Surface Incorrect = iota
	// RankLast keeps them, marked, after all the others: a failed
	// precedent that is the best match can fall out of the top k behind
	// hits that barely match.
	RankLast
	// Include ranks them like any other (still marked), nothing more.
	Include
	// Exclude drops them.
	Exclude
)

// AvoidShare is how relevant a failed precedent must be for Surface to
// give it the last of the k places when none of the k best is one: a score
// at least this share of the best hit's.
const AvoidShare = 0.6

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
	// Skip is a decision never returned (the one just made, whose
	// precedents are asked for).
	Skip string
	// Brief fills each hit with what a table of hits shows (ID,
	// iteration, category, decision, outcome, AVOID, score, input and
	// reason) and nothing more: Search does not read the hits' rows in full
	// (their evidence, timestamps, the rest of the decision).
	Brief bool
}

// MaxK bounds how many hits one search returns.
const MaxK = 100

// Check refuses options a caller cannot mean: K outside 1..MaxK (0 takes
// the default), a category that does not exist.
func (o Options) Check() error {
	if o.K < 0 || o.K > MaxK {
		return fmt.Errorf("-k %d: must be between 1 and %d", o.K, MaxK)
	}
	if o.Category != "" && !slices.Contains(journal.Categories, o.Category) {
		return fmt.Errorf("--category %q is not allowed (allowed: %s)", o.Category, strings.Join(journal.Categories, ", "))
	}
	return nil
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
	// DecisionView is the past decision, in its one JSON form: its
	// evidence says why an AVOID hit failed.
	journal.DecisionView
	Score float64 `json:"score"`
	// Avoid marks a decision proved INCORRECT: seed 000 says not to repeat
	// it. JudgedBy is the decision whose line carried that verdict, when
	// one did (its retrograde field), rather than the retrograde journal.
	Avoid    bool   `json:"avoid"`
	JudgedBy string `json:"judged_by,omitempty"`
	Seq      int64  `json:"-"`
}

// Search returns the decisions most similar to query, best first.
//
// Cost is bounded whatever the size of the journal: bm25 ranks the Pool
// newest decisions that hold any query word (FTS5 walks its doclists
// newest first and stops there), reading in full only the best of them,
// plus the newest older decisions holding the query's rarest words, so
// that a near-exact precedent is never lost to age (see score).
func Search(ctx context.Context, store *db.Store, query string, opts Options) ([]Hit, error) {
	opts.defaults()
	tokens := QueryTerms(query)
	if len(tokens) == 0 {
		return nil, nil
	}
	idx := &localIndex{store: store}
	bare, err := db.Uncancelled(ctx)
	if err != nil {
		return nil, err
	}
	if restore, err := store.SmallCache(bare); err == nil {
		defer restore()
	}
	cands, err := score(ctx, idx, tokens, opts)
	if err != nil {
		return nil, err
	}
	if opts.Brief {
		return Best(cands, opts), nil
	}
	return rank(ctx, store, cands, opts)
}

// An Index is a full-text index of decisions as the bounded search reads
// it: the project's own (db.Store) or a hub's, over one project or many.
// Each decision has a seq, higher for a newer one.
type Index interface {
	// Totals are bm25's: how many decisions the index holds and their
	// average length in tokens (Length of each of the four fields, summed).
	Totals(ctx context.Context) (rows int64, avgdl float64, err error)
	// Holders returns the n newest decisions holding every one of words
	// (each a token of Tokens), newest first: only those with a seq of at
	// least from, and older than before when before > 0.
	Holders(ctx context.Context, words []string, from, before int64, n int) ([]int64, error)
	// Span is how many of the index's decisions have a seq of at least
	// from.
	Span(ctx context.Context, from int64) (int64, error)
	// Candidates reads the decisions at seqs (db.Candidate: what scoring
	// and ranking need), leaving out voided ones.
	Candidates(ctx context.Context, seqs []int64) ([]db.Candidate, error)
}

// Score scores the decisions of idx that a search for tokens (QueryTerms)
// considers, bounded as Search is (see score); Best ranks them.
func Score(ctx context.Context, idx Index, tokens []string, opts Options) ([]Hit, error) {
	opts.defaults()
	return score(ctx, idx, tokens, opts)
}

// localIndex is a project's own index. Its statements run without the
// caller's cancellation (db.Uncancelled): each is short and bounded (see
// score), so a search stops between them.
type localIndex struct {
	store *db.Store
	// newest is the newest decision's seq, read with the totals.
	newest int64
}

func (l *localIndex) Totals(ctx context.Context) (int64, float64, error) {
	ctx, err := db.Uncancelled(ctx)
	if err != nil {
		return 0, 0, err
	}
	st, err := readStats(ctx, l.store)
	l.newest = st.newest
	return st.rows, st.avgdl, err
}

func (l *localIndex) Holders(ctx context.Context, words []string, from, before int64, n int) ([]int64, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	ctx, err := db.Uncancelled(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := l.store.DB.QueryContext(ctx, `SELECT rowid FROM decisions_fts WHERE decisions_fts MATCH ? AND rowid >= ? AND rowid < ?
		ORDER BY rowid DESC LIMIT ?`, MatchAll(words), from, before, n)
	if err != nil {
		return nil, fmt.Errorf("precedent: search: %w", err)
	}
	seqs, err := scanSeqs(rows, n)
	if err != nil {
		return nil, fmt.Errorf("precedent: search: %w", err)
	}
	return seqs, nil
}

// scanSeqs reads a column of up to n sequence numbers and closes rows:
// without sqlx's reflection, which was a sixth of the lookups' CPU (each
// reads up to 500 rows).
func scanSeqs(rows *sql.Rows, n int) ([]int64, error) {
	defer rows.Close()
	seqs := make([]int64, 0, n)
	for rows.Next() {
		var s int64
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		seqs = append(seqs, s)
	}
	return seqs, rows.Err()
}

// pool reads the tokens' lists of holders merged newest first (a UNION
// ALL of one FTS5 lookup per token, which SQLite merges along the rowid
// order FTS5 gives each, pulling rows only as they are read) and stops at
// the n-th distinct decision: each list is read down to the pool's oldest
// decision and no further. Looking each token up in turn (floorPool) read
// 2.3 times as many rows on the bench's evaluation queries at 1M decisions
// (22,790 rows against 9,878, the twenty together), and a 1M orbit precedent
// takes 13-24% fewer instructions on queries of seven and ten words.
func (l *localIndex) pool(ctx context.Context, tokens []string, n int) ([]int64, []uint64, error) {
	args := make([]any, len(tokens))
	for j, tok := range tokens {
		args[j] = quote(tok)
	}
	ctx, err := db.Uncancelled(ctx)
	if err != nil {
		return nil, nil, err
	}
	rows, err := l.store.DB.QueryContext(ctx, poolSQL(len(tokens)), args...)
	if err != nil {
		return nil, nil, fmt.Errorf("precedent: search: %w", err)
	}
	defer rows.Close()
	pool := make([]int64, 0, n)
	held := make([]uint64, 0, n)
	for rows.Next() {
		// Scanned into anys: database/sql copies an int64 into an *int64
		// by reflection.
		var sv, jv any
		if err := rows.Scan(&sv, &jv); err != nil {
			return nil, nil, fmt.Errorf("precedent: search: %w", err)
		}
		s, ok := sv.(int64)
		j, okj := jv.(int64)
		if !ok || !okj {
			return nil, nil, fmt.Errorf("precedent: search: rowid %v and word %v are not integers", sv, jv)
		}
		if len(pool) == 0 || pool[len(pool)-1] != s {
			if len(pool) == n {
				break
			}
			pool = append(pool, s)
			held = append(held, 0)
		}
		held[len(held)-1] |= 1 << j
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("precedent: search: %w", err)
	}
	return pool, held, nil
}

// poolSQL is pool's statement for words words, each a parameter: rowid and
// word, newest first. Each arm's order is FTS5's own (a test holds the
// plan free of a sort, which would read every list to its end).
func poolSQL(words int) string {
	var q strings.Builder
	for j := range words {
		if j > 0 {
			q.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&q, "SELECT rowid, %d FROM decisions_fts WHERE decisions_fts MATCH ?", j)
	}
	q.WriteString(" ORDER BY 1 DESC")
	return q.String()
}

// Span counts from the newest decision Totals read (score asks the totals
// first): seqs are dense.
func (l *localIndex) Span(ctx context.Context, from int64) (int64, error) {
	return max(l.newest-from+1, 0), nil
}

func (l *localIndex) Candidates(ctx context.Context, seqs []int64) ([]db.Candidate, error) {
	ctx, err := db.Uncancelled(ctx)
	if err != nil {
		return nil, err
	}
	return l.store.Candidates(ctx, seqs)
}

// QueryTerms are the words a search looks for: Tokens, at most maxTerms.
func QueryTerms(query string) []string {
	tokens := Tokens(query)
	if len(tokens) > maxTerms {
		tokens = tokens[:maxTerms]
	}
	return tokens
}

// maxTerms bounds the words of one search (the first ones: a hook passing
// a long message puts the subject first).
const maxTerms = 16

// score returns the decisions it scored by bm25 (Score: higher is better),
// with what ranking needs of each (Seq, ID, Category, Outcome) and what a
// brief hit shows (see Options.Brief).
//
// FTS5's own bm25() counts, before it scores a row, every row that holds
// each query term: on 1M decisions a common word costs tens of
// milliseconds. So the pool (the Pool newest decisions holding any query
// word, which FTS5 finds newest first without scoring) is scored here:
//
//  1. which pool decisions hold each word, from the index alone (one
//     lookup per word, bounded by the pool's span), gives each word's
//     document count: exact when the pool holds every match, else the
//     word's share of the pool's span of the journal, scaled to the whole;
//  2. the decisions holding the rarest words (the sum of the words' idf)
//     are read in full, as many as ranking can use, and scored by bm25's
//     formula exactly as FTS5 computes it (term counts per column, weights,
//     lengths, the index's totals).
//
// Reading the text of only those, not of the whole pool, is what keeps a
// search in a fresh process cheap.
func score(ctx context.Context, idx Index, tokens []string, opts Options) ([]Hit, error) {
	w := opts.Weights
	weights := [4]float64{w.Input, w.Reason, w.NextAction, w.Context}
	var st ftsStats
	var err error
	st.rows, st.avgdl, err = idx.Totals(ctx)
	if err != nil || st.rows == 0 {
		return nil, err
	}
	pool, held, hits, err := newestHolders(ctx, idx, tokens, opts.Pool)
	if err != nil {
		return nil, err
	}
	if len(pool) == 0 {
		return nil, nil
	}
	oldest := pool[len(pool)-1]
	oldestFull := int64(0) // the pool's oldest decision, when it is full
	if len(pool) == opts.Pool {
		oldestFull = oldest
	}
	if oldestFull > 0 {
		// The pool is the newest part of the matches: scale its counts to
		// the journal from the span of decisions it covers.
		span, err := idx.Span(ctx, oldest)
		if err != nil {
			return nil, err
		}
		if span > 0 {
			for j := range hits {
				hits[j] = min(hits[j]*float64(st.rows)/float64(span), float64(st.rows))
			}
		}
	}
	idfs := make([]float64, len(tokens))
	for j, h := range hits {
		idfs[j] = idf(st.rows, h)
	}
	// The decisions worth reading: by the idf of the words they hold, the
	// newer first among equals.
	worth := make([]rough, len(pool))
	for i, seq := range pool {
		worth[i].seq = seq
		for j := range tokens {
			if held[i]&(1<<j) != 0 {
				worth[i].idf += idfs[j]
			}
		}
	}
	slices.SortFunc(worth, func(a, b rough) int {
		if c := cmp.Compare(b.idf, a.idf); c != 0 {
			return c
		}
		return cmp.Compare(b.seq, a.seq)
	})
	worth = worth[:min(len(worth), readCount(opts.K))]
	pool = pool[:len(worth)]
	for i, w := range worth {
		pool[i] = w.seq
	}
	older, err := olderHolders(ctx, idx, tokens, hits, oldestFull, opts.K)
	if err != nil {
		return nil, err
	}
	texts, err := idx.Candidates(ctx, append(pool, older...))
	if err != nil {
		return nil, fmt.Errorf("precedent: search: %w", err)
	}
	t := newTerms(tokens)
	tf := make([]int, len(tokens))
	freq := make([]float64, len(tokens))
	var buf []byte
	scored := make([]Hit, 0, len(texts))
	for _, d := range texts {
		// How often the decision holds each term (bm25 weighs the count by
		// the column's weight) and its length.
		clear(freq)
		dl := 0
		for c, text := range [4]string{d.Input, d.Reason, d.NextAction, d.Context} {
			clear(tf)
			var n int
			n, buf = t.scan(text, tf, buf)
			dl += n
			for j, k := range tf {
				freq[j] += weights[c] * float64(k)
			}
		}
		norm := bm25K1 * (1 - bm25B + bm25B*float64(dl)/st.avgdl)
		s := 0.0
		for j, f := range freq {
			s += idfs[j] * (f * (bm25K1 + 1)) / (f + norm)
		}
		h := Hit{Score: s, Seq: d.Seq}
		h.ID, h.Category, h.Outcome = d.ID, d.Category, d.Outcome
		h.Iteration, h.Decision.Decision, h.Input, h.Reason = d.Iteration, d.Decision, d.Input, d.Reason
		scored = append(scored, h)
	}
	return scored, nil
}

// rough is a pool decision and the sum of the idf of the query words it
// holds.
type rough struct {
	seq int64
	idf float64
}

// readCount is how many decisions a search reads in full and scores: three
// times what ranking looks at (see rank), which on the evaluation corpus
// holds every one of bm25's ten best for every query.
func readCount(k int) int {
	return 3 * rankCount(k)
}

// rankCount is how many of the best-scored decisions ranking considers.
func rankCount(k int) int {
	return max(k*20, 60)
}

// newestHolders finds the pool (the n newest decisions holding any token,
// newest first), which tokens each of them holds (bit j for tokens[j]), and
// how many of the pool hold each token. What each token holds within the
// pool is exact, from the index's lists alone: an index that finds the pool
// in one pass (a pooler) reads each token's list down to the pool's oldest
// decision; any other is asked for each token's newest holders (floorPool).
func newestHolders(ctx context.Context, idx Index, tokens []string, n int) (pool []int64, held []uint64, hits []float64, err error) {
	if p, ok := idx.(pooler); ok {
		pool, held, err = p.pool(ctx, tokens, n)
	} else {
		pool, held, err = floorPool(ctx, idx, tokens, n)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	hits = make([]float64, len(tokens))
	for _, m := range held {
		for j := range tokens {
			if m&(1<<j) != 0 {
				hits[j]++
			}
		}
	}
	return pool, held, hits, nil
}

// A pooler finds a search's pool in one pass over the tokens' lists
// merged newest first (see localIndex.pool).
type pooler interface {
	pool(ctx context.Context, tokens []string, n int) (pool []int64, held []uint64, err error)
}

// floorPool finds the pool with one lookup per token, its n newest holders.
// The pool is the n newest of their union, so every token's list reaches
// back past the pool's oldest decision (or holds all its holders).
func floorPool(ctx context.Context, idx Index, tokens []string, n int) ([]int64, []uint64, error) {
	var pool []int64
	mask := map[int64]uint64{}
	// No decision older than a word's n-th newest holder can be in the
	// pool (that word alone has n newer), so each lookup reads down to
	// the highest such floor found so far: a common word's list stops
	// there instead of reading n rows.
	floor := int64(0)
	for j, tok := range tokens {
		list, err := idx.Holders(ctx, []string{tok}, floor, 0, n)
		if err != nil {
			return nil, nil, err
		}
		if len(list) == n {
			floor = max(floor, list[n-1])
		}
		for _, s := range list {
			if _, ok := mask[s]; !ok {
				pool = append(pool, s)
			}
			mask[s] |= 1 << j
		}
	}
	slices.SortFunc(pool, func(a, b int64) int { return cmp.Compare(b, a) })
	pool = pool[:min(len(pool), n)]
	held := make([]uint64, len(pool))
	for i, s := range pool {
		held[i] = mask[s]
	}
	return pool, held, nil
}

// olderHolders returns the newest decisions older than a full pool (whose
// oldest is oldest; 0 when the pool holds every match) that hold the
// query's rarest words (all of them when there are few), so that a
// near-exact precedent is never lost to age: they are scored like the pool.
// FTS5 finds the rows holding every word by walking the rarest word's whole
// list of rows, so this is asked only when that word is rare enough for
// the walk to be cheap: when it is not, the decisions holding it are many,
// and the newest of them, in the pool, are the precedents that matter.
func olderHolders(ctx context.Context, idx Index, tokens []string, hits []float64, oldest int64, k int) ([]int64, error) {
	if len(tokens) < 2 || oldest == 0 || slices.Min(hits) > maxAllHits {
		return nil, nil
	}
	return idx.Holders(ctx, rarest(tokens, hits, allTerms), 0, oldest, k*4)
}

// maxAllHits bounds the (estimated) decisions holding a query's rarest
// word for the older-decisions lookup to run: about 0.1 ms per 1,000.
const maxAllHits = 2000

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
func rank(ctx context.Context, store *db.Store, cands []Hit, opts Options) ([]Hit, error) {
	cands = Best(cands, opts)
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
		h := Hit{DecisionView: journal.ViewOf(d), Score: c.Score, Avoid: c.Avoid, Seq: d.Seq}
		if c.Avoid {
			h.JudgedBy = d.OutcomeBy
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// Best ranks scored decisions (Score's) and keeps the opts.K best: only
// the best candidates by raw score can reach the top k after the category
// boost and the AVOID ordering, and Order ranks those.
func Best(cands []Hit, opts Options) []Hit {
	opts.defaults()
	// Positions are sorted, not Hits: a Hit is large, and moving them was
	// 2% of an orbit precedent's instructions at 1M.
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		a, b := &cands[i], &cands[j]
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return cmp.Compare(b.Seq, a.Seq)
	})
	best := make([]Hit, min(len(order), rankCount(opts.K)))
	for i := range best {
		best[i] = cands[order[i]]
	}
	return Order(best, opts)
}

// surface keeps the k best of cands (sorted best first). In Surface mode,
// when none of them is a failed precedent, the best failed one that scores
// at least AvoidShare of the best hit takes the last place (k > 1): the
// loop must see that this was tried and proved wrong.
func surface[C any](cands []C, opts Options, of func(C) (score float64, avoid bool)) []C {
	if len(cands) <= opts.K {
		return cands
	}
	top := cands[:opts.K]
	if opts.Incorrect != Surface || opts.K < 2 {
		return top
	}
	for _, c := range top {
		if _, avoid := of(c); avoid {
			return top
		}
	}
	best, _ := of(cands[0])
	for _, c := range cands[opts.K:] {
		if s, avoid := of(c); avoid && s >= AvoidShare*best {
			top[opts.K-1] = c
			break
		}
	}
	return top
}

// Order ranks scored candidates as Search does, and keeps the best opts.K
// (surface): decisions proved wrong (Outcome INCORRECT, marked Avoid) after
// the others, left out, or ranked like the others, as opts.Incorrect says;
// opts.Skip left out; a same-category boost on Score; then Score, then the
// newer (higher Seq) first. Another index (the hub) scores its candidates
// its own way and orders them with this.
func Order(cands []Hit, opts Options) []Hit {
	opts.defaults()
	out := make([]Hit, 0, len(cands))
	for _, c := range cands {
		c.Avoid = c.Outcome == journal.OutcomeIncorrect
		if opts.Category != "" && c.Category == opts.Category {
			c.Score *= opts.CategoryBoost
		}
		if c.Avoid && opts.Incorrect == Exclude || c.ID == opts.Skip && c.ID != "" {
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Hit) int {
		if opts.Incorrect == RankLast && a.Avoid != b.Avoid {
			if a.Avoid {
				return 1
			}
			return -1
		}
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case a.Seq > b.Seq:
			return -1
		case a.Seq < b.Seq:
			return 1
		}
		return 0
	})
	return surface(out, opts, func(c Hit) (float64, bool) { return c.Score, c.Avoid })
}

// Describe is a one-line summary of a hit for a terminal or a hook prompt.
func (h Hit) Describe() string {
	mark := ""
	if h.Avoid {
		mark = " [AVOID: proved INCORRECT"
		switch {
		case h.Evidence != "":
			mark += ": " + strings.Join(strings.Fields(h.Evidence), " ")
		case h.JudgedBy != "":
			mark += " by " + h.JudgedBy
		}
		mark += "]"
	}
	if h.Avoid && h.Evidence != "" {
		mark = " [AVOID: proved INCORRECT: " + strings.TrimSpace(h.Evidence) + "]"
	}
	return fmt.Sprintf("%s (iter %d, %s): %s -> %s, outcome %s%s", h.ID, h.Iteration, h.Category, strings.TrimSpace(h.Input), h.Decision.Decision, h.Outcome, mark)
}
