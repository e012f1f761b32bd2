package hub

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/orbit-loop/orbit/precedent"
)

// PrecedentHit is a similar past decision found on the hub, with its
// project.
type PrecedentHit struct {
	Project string `json:"project"`
	precedent.Hit
}

// pgRank is how PostgreSQL scores a decision's weighted text against a
// query: ts_rank with the field weights of the local search (what was
// decided 4, the request's description 1.5, the reason 1, the next action
// 0.5, as {D, C, B, A} scaled to 1), divided by 1 + the log of the text's
// length (normalization 1), as bm25 damps long texts. Each query word is
// ranked on its own and weighted by its rarity in the projects searched
// (bm25's idf): a rare word that matches says more than a common one.
// Measured on testdata/precedent against ts_rank_cd, other normalizations
// and pg_trgm: see BENCHMARKS.md.
var pgRank = `ts_rank('{0.125, 0.25, 0.375, 1}', d.search, q, 1)`

// pgIDF weights each word's rank by its idf (off only to measure what it
// brings).
var pgIDF = true

// dfCap bounds the count of decisions holding a word: past it, a word is
// common, and counting further would cost more than it tells.
const dfCap = 5000

// candidateLimit bounds the decisions ranked when every word is common.
const candidateLimit = 20000

// precedentPool is how many of the best matches (by the plain rank of all
// the query's words) are scored word by word with idf.
const precedentPool = 200

type precedentCand struct {
	Project  string  `db:"project_id"`
	ID       string  `db:"id"`
	Seq      int64   `db:"seq"`
	Category string  `db:"category"`
	Outcome  string  `db:"outcome"`
	Score    float64 `db:"score"`
}

// Precedent returns the decisions of the projects in scope most similar to
// query, best first, ranked as `orbit precedent` ranks them: the query's
// words (precedent.QueryTerms: any text is safe) matched against the weighted
// text, then the same ordering (decisions proved wrong after the others, a
// same-category boost, recency).
func (s *Store) Precedent(ctx context.Context, projectID, query string, opts precedent.Options) ([]PrecedentHit, error) {
	if opts.K <= 0 {
		opts.K = 3
	}
	tokens := precedent.QueryTerms(query)
	if len(tokens) == 0 {
		return []PrecedentHit{}, nil
	}
	cond, args := only("d.project_id", projectID)
	var cands []precedentCand
	var err error
	if s.Dialect == Postgres {
		cands, err = s.pgCandidates(ctx, projectID, tokens, opts.K)
	} else {
		q := `SELECT d.project_id, d.id, d.byte_offset AS seq, d.category, coalesce(o.outcome, 'PENDING') AS outcome,
				-bm25(hub_decisions_fts, 4, 1, 0.5, 1.5) AS score
			FROM hub_decisions_fts JOIN hub_decisions d ON d.seq = hub_decisions_fts.rowid
			LEFT JOIN hub_outcomes o ON o.project_id = d.project_id AND o.decision_id = d.id
			WHERE hub_decisions_fts MATCH ? AND` + notVoided("d.project_id", "d.id") + cond + ` ORDER BY score DESC, d.byte_offset DESC LIMIT ?`
		err = s.DB.SelectContext(ctx, &cands, s.q(q), append(append([]any{precedent.MatchAny(tokens)}, args...), orderPool(opts.K))...)
	}
	if err != nil {
		return nil, fmt.Errorf("precedent search: %w", err)
	}
	// precedent.Order knows hits by Seq: number the candidates in score
	// order so that its tie-break (higher Seq first) keeps the database's.
	hits := make([]precedent.Hit, len(cands))
	for i, c := range cands {
		hits[i] = precedent.Hit{Score: c.Score, Seq: int64(len(cands) - i)}
		hits[i].ID, hits[i].Category, hits[i].Outcome = c.ID, c.Category, c.Outcome
	}
	top := precedent.Order(hits, opts)
	out := make([]PrecedentHit, 0, len(top))
	for _, h := range top {
		c := cands[len(cands)-int(h.Seq)]
		d, found, err := s.DecisionByID(ctx, c.Project, c.ID)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		out = append(out, PrecedentHit{Project: c.Project, Hit: precedent.Hit{DecisionView: d.DecisionView, Score: h.Score, Avoid: h.Avoid, Seq: c.Seq}})
	}
	return out, nil
}

// orderPool is how many of the best-scored matches the ordering (outcome,
// category boost, recency) chooses the k best from.
func orderPool(k int) int { return max(60, 20*k) }

// pgCandidates scores the decisions matching any of the tokens on
// PostgreSQL: the precedentPool best by the plain rank of all the words,
// rescored as the sum over the words of idf x the word's own rank.
// Tokens are runs of letters and digits: joined with |, they are words of a
// to_tsquery, never its operators; every text is a parameter.
func (s *Store) pgCandidates(ctx context.Context, projectID string, tokens []string, k int) ([]precedentCand, error) {
	cond, args := only("d.project_id", projectID)
	// How many decisions are searched, and how many hold each word (up to
	// dfCap), in one statement.
	var counts strings.Builder
	countArgs := []any{}
	// The decisions searched are the projects' counters (kept by the push
	// transaction): counting a million rows took most of a search's time.
	pcond, pargs := only("id", projectID)
	counts.WriteString(`SELECT (SELECT coalesce(CAST(sum(decisions) AS BIGINT), 0) FROM hub_projects WHERE 1 = 1` + pcond + `)`)
	countArgs = append(countArgs, pargs...)
	for _, t := range tokens {
		counts.WriteString(`, (SELECT count(*) FROM (SELECT 1 FROM hub_decisions d WHERE d.search @@ to_tsquery('english', ?)` + cond + ` LIMIT ?) c)`)
		countArgs = append(countArgs, t)
		countArgs = append(countArgs, args...)
		countArgs = append(countArgs, dfCap)
	}
	row := s.DB.QueryRowxContext(ctx, s.q(counts.String()), countArgs...)
	n := make([]int64, len(tokens)+1)
	dest := make([]any, len(n))
	for i := range n {
		dest[i] = &n[i]
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	// The candidates are the decisions holding a word that is not common
	// (held by fewer than dfCap): a common word matches too much to be worth
	// ranking every decision that holds it, and adds little to the score.
	// When every word is common, any of them, up to candidateLimit matches.
	var rare []string
	for i, t := range tokens {
		if n[i+1] > 0 && n[i+1] < dfCap {
			rare = append(rare, t)
		}
	}
	if len(rare) == 0 {
		rare = tokens
	}
	all := strings.Join(tokens, " | ")
	var score strings.Builder
	scoreArgs := []any{}
	if !pgIDF {
		// Measured without idf: the plain rank of all the words.
		tokens, n = []string{strings.Join(tokens, " | ")}, []int64{n[0], 1}
	}
	for i, t := range tokens {
		if n[i+1] == 0 {
			continue
		}
		if score.Len() > 0 {
			score.WriteString(" + ")
		}
		term := strings.ReplaceAll(pgRank, "q,", "to_tsquery('english', ?),")
		score.WriteString(`? * ` + term)
		w := 1.0
		if pgIDF {
			w = idf(n[0], n[i+1])
		}
		scoreArgs = append(scoreArgs, w)
		if strings.Contains(term, "?") {
			scoreArgs = append(scoreArgs, t)
		}
	}
	if score.Len() == 0 {
		return nil, nil
	}
	q := `WITH matches AS (
			SELECT d.project_id, d.id, d.byte_offset, d.category, d.input, d.search FROM hub_decisions d
			WHERE d.search @@ to_tsquery('english', ?) AND` + notVoided("d.project_id", "d.id") + cond + ` LIMIT ?),
		pool AS (
			SELECT d.* FROM matches d CROSS JOIN to_tsquery('english', ?) q
			ORDER BY ` + pgRank + ` DESC, d.byte_offset DESC LIMIT ?)
		SELECT d.project_id, d.id, d.byte_offset AS seq, d.category, coalesce(o.outcome, 'PENDING') AS outcome, ` + score.String() + ` AS score
		FROM pool d CROSS JOIN to_tsquery('english', ?) q
		LEFT JOIN hub_outcomes o ON o.project_id = d.project_id AND o.decision_id = d.id
		ORDER BY score DESC, d.byte_offset DESC LIMIT ?`
	qargs := append(append([]any{strings.Join(rare, " | ")}, args...), candidateLimit, all, precedentPool)
	qargs = append(append(qargs, scoreArgs...), all, orderPool(k))
	var cands []precedentCand
	err := s.DB.SelectContext(ctx, &cands, s.q(q), qargs...)
	return cands, err
}

// idf is bm25's inverse document frequency of a word held by df of n
// decisions (the always-positive form).
func idf(n, df int64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}
