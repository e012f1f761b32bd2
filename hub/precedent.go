package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/precedent"
)

// PrecedentHit is a similar past decision found on the hub, with its
// project.
type PrecedentHit struct {
	Project string `json:"project"`
	precedent.Hit
}

// Precedent returns the decisions of the projects in scope most similar to
// query, best first, found and ranked as `orbit precedent` finds and ranks
// a project's own (precedent.Score, precedent.Best): a bounded pool of the
// newest decisions holding each query word (precedent.QueryTerms: any text
// is safe), scored by bm25 in Go with the same field weights, then the same
// ordering (decisions proved wrong after the others, a same-category boost,
// recency). The hub's full-text index (GIN over a tsvector on PostgreSQL,
// FTS5 on SQLite) only finds the decisions holding a word, newest first;
// it never scores every match.
func (s *Store) Precedent(ctx context.Context, projectID, query string, opts precedent.Options) ([]PrecedentHit, error) {
	if opts.K <= 0 {
		opts.K = 3
	}
	tokens := precedent.QueryTerms(query)
	if len(tokens) == 0 {
		return []PrecedentHit{}, nil
	}
	idx := &hubIndex{s: s, project: projectID, projects: map[int64]string{}}
	scored, err := precedent.Score(ctx, idx, tokens, opts)
	if err != nil {
		return nil, fmt.Errorf("precedent search: %w", err)
	}
	top := precedent.Best(scored, opts)
	out := make([]PrecedentHit, 0, len(top))
	for _, h := range top {
		project := idx.projects[h.Seq]
		d, found, err := s.DecisionByID(ctx, project, h.ID)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		out = append(out, PrecedentHit{Project: project, Hit: precedent.Hit{DecisionView: d.DecisionView, Score: h.Score, Avoid: h.Avoid, Seq: h.Seq}})
	}
	return out, nil
}

// hubIndex is the hub's full-text index of the decisions of one project or
// of every one (AllProjects), as precedent.Score reads it. A decision's seq
// orders them across projects (SQLite's rowid, PostgreSQL's identity).
type hubIndex struct {
	s       *Store
	project string
	// projects is the project of each decision Candidates read.
	projects map[int64]string
}

// Totals are the projects' counters, kept by the push transaction: the
// decisions indexed and their length in tokens.
func (h *hubIndex) Totals(ctx context.Context) (int64, float64, error) {
	cond, args := only("id", h.project)
	var t struct {
		Rows    int64 `db:"rows"`
		Tokens  int64 `db:"tokens"`
		Tokened int64 `db:"tokened"`
	}
	if err := h.s.DB.GetContext(ctx, &t, h.s.q(`SELECT CAST(coalesce(sum(decisions), 0) AS BIGINT) AS rows,
			CAST(coalesce(sum(tokens), 0) AS BIGINT) AS tokens, CAST(coalesce(sum(tokened), 0) AS BIGINT) AS tokened
		FROM hub_projects WHERE 1 = 1`+cond), args...); err != nil {
		return 0, 0, err
	}
	if t.Rows == 0 {
		return 0, 0, nil
	}
	if t.Tokened > 0 {
		return t.Rows, float64(t.Tokens) / float64(t.Tokened), nil
	}
	// Every decision in scope was pushed before the hub counted tokens
	// (migration 5): the average of the newest ones.
	avg, err := h.sampleLength(ctx)
	return t.Rows, avg, err
}

// lengthSample is how many of the newest decisions give the average length
// when the counters have none.
const lengthSample = 1000

func (h *hubIndex) sampleLength(ctx context.Context) (float64, error) {
	cond, args := only("project_id", h.project)
	var texts []struct {
		Input      string `db:"input"`
		Reason     string `db:"reason"`
		NextAction string `db:"next_action"`
		Context    string `db:"context"`
	}
	if err := h.s.DB.SelectContext(ctx, &texts, h.s.q(`SELECT input, reason, next_action, context FROM hub_decisions
		WHERE 1 = 1`+cond+` ORDER BY seq DESC LIMIT ?`), append(args, lengthSample)...); err != nil {
		return 0, err
	}
	if len(texts) == 0 {
		return 1, nil
	}
	n := 0
	for _, t := range texts {
		n += precedent.Length(t.Input) + precedent.Length(t.Reason) + precedent.Length(t.NextAction) + precedent.Length(t.Context)
	}
	return max(float64(n)/float64(len(texts)), 1), nil
}

// Holders finds the newest decisions holding every word: on PostgreSQL the
// GIN index of the weighted tsvector (each word a plainto_tsquery, so any
// text is a word, never an operator), on SQLite the FTS5 index (each word
// quoted), newest first by seq.
//
// The lower bound (from) cuts the newest n, not the query: the result is
// the same, and with the bound in the query TestEvalPrecedentOnHub's
// searches on the two hubs took 234 s instead of 8.
func (h *hubIndex) Holders(ctx context.Context, words []string, from, before int64, n int) ([]int64, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	var q string
	var args []any
	if h.s.Dialect == Postgres {
		cond, pargs := only("project_id", h.project)
		// The simple protocol sends the word in the statement's text, so
		// the planner chooses for this word (GIN for a rare one, the newest
		// first along seq for a common one): a prepared statement's
		// generic plan would choose once for every word.
		q = `SELECT seq FROM hub_decisions WHERE search @@ plainto_tsquery('english', ?) AND seq < ?` + cond + ` ORDER BY seq DESC LIMIT ?`
		args = append(append([]any{pgx.QueryExecModeSimpleProtocol, strings.Join(words, " "), before}, pargs...), n)
	} else if h.project == AllProjects {
		q = `SELECT rowid FROM hub_decisions_fts WHERE hub_decisions_fts MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?`
		args = []any{precedent.MatchAll(words), before, n}
	} else {
		q = `SELECT f.rowid FROM hub_decisions_fts f JOIN hub_decisions d ON d.seq = f.rowid
			WHERE hub_decisions_fts MATCH ? AND f.rowid < ? AND d.project_id = ? ORDER BY f.rowid DESC LIMIT ?`
		args = []any{precedent.MatchAll(words), before, h.project, n}
	}
	var seqs []int64
	if err := h.s.DB.SelectContext(ctx, &seqs, h.s.q(q), args...); err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(seqs, func(s int64) bool { return s < from }); i >= 0 {
		seqs = seqs[:i]
	}
	return seqs, nil
}

// Span counts the decisions in scope from seq from on: across projects the
// distance to the newest (seqs are dense but for a rolled-back push's), in
// one project a count along its (project_id, seq) index.
func (h *hubIndex) Span(ctx context.Context, from int64) (int64, error) {
	var n int64
	var err error
	if h.project == AllProjects {
		err = h.s.DB.GetContext(ctx, &n, h.s.q(`SELECT coalesce(max(seq), 0) - ? + 1 FROM hub_decisions`), from)
	} else {
		err = h.s.DB.GetContext(ctx, &n, h.s.q(`SELECT count(*) FROM hub_decisions WHERE project_id = ? AND seq >= ?`), h.project, from)
	}
	return max(n, 0), err
}

// Candidates reads the decisions at seqs (not voided), with their current
// outcome, and remembers each one's project.
func (h *hubIndex) Candidates(ctx context.Context, seqs []int64) ([]db.Candidate, error) {
	if len(seqs) == 0 {
		return nil, nil
	}
	arr, err := json.Marshal(seqs)
	if err != nil {
		return nil, err
	}
	in := `SELECT value FROM json_each(?)`
	if h.s.Dialect == Postgres {
		in = `SELECT CAST(jsonb_array_elements_text(CAST(? AS jsonb)) AS BIGINT)`
	}
	var rows []struct {
		Project string `db:"project_id"`
		db.Candidate
	}
	if err := h.s.DB.SelectContext(ctx, &rows, h.s.q(`SELECT d.project_id, d.seq, d.id, d.category, coalesce(o.outcome, 'PENDING') AS outcome,
			d.input, d.reason, d.next_action, d.context
		FROM hub_decisions d LEFT JOIN hub_outcomes o ON o.project_id = d.project_id AND o.decision_id = d.id
		WHERE d.seq IN (`+in+`) AND`+notVoided("d.project_id", "d.id")), string(arr)); err != nil {
		return nil, err
	}
	out := make([]db.Candidate, len(rows))
	for i, r := range rows {
		out[i] = r.Candidate
		h.projects[r.Seq] = r.Project
	}
	return out, nil
}
