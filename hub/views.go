package hub

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/trust"
)

// Scope resolves which projects a read covers, from the request's project
// parameter and the token: a project token reads its own project (the
// default); a fleet token (admin, or a read token for "*") reads any one,
// or every one with "*" where a view allows it.
func Scope(acc Access, param string, allowAll bool) (string, error) {
	switch {
	case param == "" && acc.Project != AllProjects:
		param = acc.Project
	case param == "" && allowAll:
		param = AllProjects
	case param == "":
		return "", &BadBatchError{"project=ID is required (GET /api/v1/projects lists them)"}
	}
	if param == AllProjects {
		if !allowAll {
			return "", &BadBatchError{"project=* is not supported here: name one project"}
		}
	} else if err := project.CheckID(param); err != nil {
		return "", &BadBatchError{err.Error()}
	}
	if !acc.CanRead(param) {
		return "", ErrForbidden
	}
	return param, nil
}

// only is the SQL condition keeping one project's rows (col names the
// project column), or every project's for AllProjects: every query of a
// view goes through it, so no read reaches past its scope.
func only(col, projectID string) (string, []any) {
	if projectID == AllProjects {
		return "", nil
	}
	return " AND " + col + " = ?", []any{projectID}
}

// ProjectSummary is one project in the project list.
type ProjectSummary struct {
	ID            string `json:"id" db:"id"`
	Name          string `json:"name" db:"name"`
	Decisions     int64  `json:"decisions" db:"decisions"`
	OutcomeEvents int64  `json:"outcome_events" db:"events"`
	Rejected      int64  `json:"rejected" db:"rejected"`
	LoopEvents    int64  `json:"loop_events" db:"loop_events"`
	KnowledgeHits int64  `json:"knowledge_hits" db:"knowledge_hits"`
	MaxIteration  int64  `json:"current_iteration" db:"max_iteration"`
	LastPushNS    int64  `json:"-" db:"last_push_ns"`
	Chunks        int64  `json:"-" db:"chunks"`
	LastPush      string `json:"last_push"`
	// Trust is the project's headline: totals, last 20 and last 10, level
	// and alert, by seed 000's rules.
	Trust trust.Headline `json:"trust"`
	Loops []LoopSummary  `json:"loops"`
}

// LoopSummary is a loop as its latest event says.
type LoopSummary struct {
	Project       string   `json:"project" db:"project_id"`
	Framework     string   `json:"framework" db:"framework"`
	ID            string   `json:"id" db:"loop_id"`
	Title         string   `json:"title" db:"title"`
	Status        string   `json:"status" db:"status"`
	NativeStatus  string   `json:"native_status" db:"native_status"`
	Iteration     *int64   `json:"iteration" db:"iteration"`
	MaxIterations *int64   `json:"max_iterations" db:"max_iterations"`
	UpdatedAt     string   `json:"updated_at" db:"updated_at"`
	BudgetUsed    *float64 `json:"budget_used" db:"budget_used"`
	BudgetLimit   *float64 `json:"budget_limit" db:"budget_limit"`
	LastEvent     string   `json:"last_event" db:"last_event"`
	LastEventTS   string   `json:"last_event_ts" db:"last_ts"`
	Events        int64    `json:"events" db:"events"`
}

// Projects lists the projects in scope with their counts, trust headline
// and loops. A project's headline is computed once per push: it is cached
// by the project's chunk counter, which every push moves in its
// transaction (every outcome and void arrives as a chunk), so the list is
// a read of the projects and their loops, and of the projects pushed to
// since the last list.
func (s *Store) Projects(ctx context.Context, projectID string) ([]ProjectSummary, error) {
	cond, args := only("id", projectID)
	var ps []ProjectSummary
	if err := s.DB.SelectContext(ctx, &ps, s.q(`SELECT id, name, decisions, events, rejected, loop_events, knowledge_hits, max_iteration, last_push_ns, chunks
		FROM hub_projects WHERE 1 = 1`+cond+` ORDER BY id`), args...); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	loops, err := s.Loops(ctx, projectID)
	if err != nil {
		return nil, err
	}
	byProject := map[string][]LoopSummary{}
	for _, l := range loops {
		byProject[l.Project] = append(byProject[l.Project], l)
	}
	for i := range ps {
		p := &ps[i]
		p.LastPush = time.Unix(0, p.LastPushNS).UTC().Format(time.RFC3339)
		p.Loops = byProject[p.ID]
		if p.Loops == nil {
			p.Loops = []LoopSummary{}
		}
		var ok bool
		if p.Trust, ok = s.headlines.get(p.ID, p.Chunks); ok {
			continue
		}
		// Read after the counter: a push between the two only makes the
		// headline newer than its counter, and the next list reads it again.
		if p.Trust, err = s.headline(ctx, p.ID); err != nil {
			return nil, err
		}
		s.headlines.put(p.ID, p.Chunks, p.Trust)
	}
	if ps == nil {
		ps = []ProjectSummary{}
	}
	return ps, nil
}

// headline computes a project's trust headline, as `orbit trust` does.
func (s *Store) headline(ctx context.Context, projectID string) (trust.Headline, error) {
	totals, err := s.scoredTotals(ctx, projectID)
	if err != nil {
		return trust.Headline{}, err
	}
	latest, err := s.latestScored(ctx, projectID, trust.MinScored)
	if err != nil {
		return trust.Headline{}, err
	}
	t := totals[projectID]
	return trust.Current(ctx, headlineSource{t[0], t[1], latest})
}

// versionCache holds answers computed from the hub's tables with the push
// counter they were computed at (the chunks of the projects read, which
// every push moves in its transaction): an answer whose counter has not
// moved is still the store's. A hub process holds at most maxCached
// answers, and starts over when full.
type versionCache[V any] struct {
	mu sync.Mutex
	m  map[string]versioned[V]
}

type versioned[V any] struct {
	version int64
	v       V
}

const maxCached = 1024

// get returns the answer cached for key at version.
func (c *versionCache[V]) get(key string, version int64) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	return e.v, ok && e.version == version
}

func (c *versionCache[V]) put(key string, version int64, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = map[string]versioned[V]{}
	}
	c.m[key] = versioned[V]{version, v}
}

// headlineSource hands trust.Current figures already read.
type headlineSource struct {
	correct, incorrect int
	latest             []bool
}

func (h headlineSource) OutcomeTotals(context.Context) (int, int, error) {
	return h.correct, h.incorrect, nil
}

func (h headlineSource) LatestScored(_ context.Context, n int) ([]bool, error) {
	return h.latest[:min(n, len(h.latest))], nil
}

// scoredTotals counts each project's scored decisions: correct, incorrect.
func (s *Store) scoredTotals(ctx context.Context, projectID string) (map[string][2]int, error) {
	cond, args := only("project_id", projectID)
	var rows []struct {
		Project   string `db:"project_id"`
		Correct   int    `db:"correct"`
		Incorrect int    `db:"incorrect"`
	}
	err := s.DB.SelectContext(ctx, &rows, s.q(`SELECT project_id,
			CAST(sum(CASE WHEN outcome = 'CORRECT' THEN 1 ELSE 0 END) AS BIGINT) AS correct,
			CAST(sum(CASE WHEN outcome = 'INCORRECT' THEN 1 ELSE 0 END) AS BIGINT) AS incorrect
		FROM hub_outcomes WHERE outcome IN ('CORRECT', 'INCORRECT') AND decision_offset IS NOT NULL`+cond+` GROUP BY project_id`), args...)
	if err != nil {
		return nil, fmt.Errorf("count scored decisions: %w", err)
	}
	out := map[string][2]int{}
	for _, r := range rows {
		out[r.Project] = [2]int{r.Correct, r.Incorrect}
	}
	return out, nil
}

// latestScored returns the current outcomes (true: CORRECT) of a project's
// latest n scored decisions, newest first.
func (s *Store) latestScored(ctx context.Context, projectID string, n int) ([]bool, error) {
	var outs []string
	err := s.DB.SelectContext(ctx, &outs, s.q(`SELECT outcome FROM hub_outcomes
		WHERE project_id = ? AND outcome IN ('CORRECT', 'INCORRECT') AND decision_offset IS NOT NULL
		ORDER BY decision_offset DESC LIMIT ?`), projectID, n)
	if err != nil {
		return nil, fmt.Errorf("read latest outcomes of %s: %w", projectID, err)
	}
	res := make([]bool, len(outs))
	for i, o := range outs {
		res[i] = o == "CORRECT"
	}
	return res, nil
}

// Loops lists the loops of the projects in scope.
func (s *Store) Loops(ctx context.Context, projectID string) ([]LoopSummary, error) {
	cond, args := only("project_id", projectID)
	var out []LoopSummary
	if err := s.DB.SelectContext(ctx, &out, s.q(`SELECT project_id, framework, loop_id, title, status, native_status, iteration, max_iterations,
		updated_at, budget_used, budget_limit, last_event, last_ts, events FROM hub_loops WHERE 1 = 1`+cond+` ORDER BY project_id, framework, loop_id`), args...); err != nil {
		return nil, fmt.Errorf("list loops: %w", err)
	}
	if out == nil {
		out = []LoopSummary{}
	}
	return out, nil
}

// TrustOptions narrow a trust report.
type TrustOptions struct {
	Category string
	// Bins is the number of calibration bins (default 10); Iterations how
	// many of the latest iterations the trend shows (default 60).
	Bins, Iterations int
}

// Trust is the trust report of the projects in scope, computed by the same
// code as `orbit trust` from the same figures: for one project it equals
// the project's local report. Across projects, the breakdowns and the
// calibration cover every project; the last-20 window and the level are
// per project (see Projects) and are computed here over each project's
// totals only.
func (s *Store) Trust(ctx context.Context, projectID string, opts TrustOptions) (trust.Report, error) {
	if opts.Bins <= 0 {
		opts.Bins = 10
	}
	if opts.Iterations <= 0 {
		opts.Iterations = 60
	}
	// A report is computed once per push to the projects it covers (it
	// reads every scored outcome of them): cached by their chunk counters,
	// read before the report so that a push between the two only makes the
	// report newer than its counter.
	version, err := s.version(ctx, projectID)
	if err != nil {
		return trust.Report{}, fmt.Errorf("trust: %w", err)
	}
	key := fmt.Sprintf("%s\x00%s\x00%d\x00%d\x00%d", projectID, opts.Category, opts.Bins, opts.Iterations, version.Projects)
	if r, ok := s.reports.get(key, version.Chunks); ok {
		return r, nil
	}
	r, err := s.trust(ctx, projectID, opts)
	if err == nil {
		s.reports.put(key, version.Chunks, r)
	}
	return r, err
}

// trust computes a trust report, as Trust describes.
func (s *Store) trust(ctx context.Context, projectID string, opts TrustOptions) (trust.Report, error) {
	cond, args := only("project_id", projectID)
	if opts.Category != "" {
		cond += " AND category = ?"
		args = append(args, opts.Category)
	}
	scored := ` FROM hub_outcomes WHERE outcome IN ('CORRECT', 'INCORRECT') AND decision_offset IS NOT NULL` + cond
	sumIf := func(v string) string {
		return `CAST(sum(CASE WHEN outcome = 'CORRECT' THEN ` + v + ` ELSE 0 END) AS BIGINT)`
	}
	var a trust.Aggregates
	if err := s.DB.SelectContext(ctx, &a.Cells, s.q(`SELECT category, tier, depth, requestor, `+sumIf("1")+` AS correct,
		CAST(sum(CASE WHEN outcome = 'INCORRECT' THEN 1 ELSE 0 END) AS BIGINT) AS incorrect`+scored+` GROUP BY category, tier, depth, requestor`), args...); err != nil {
		return trust.Report{}, fmt.Errorf("trust: %w", err)
	}
	if err := s.DB.SelectContext(ctx, &a.Iterations, s.q(`SELECT iteration, `+sumIf("1")+` AS correct,
		CAST(sum(CASE WHEN outcome = 'INCORRECT' THEN 1 ELSE 0 END) AS BIGINT) AS incorrect`+scored+` GROUP BY iteration ORDER BY iteration DESC LIMIT ?`),
		append(args, opts.Iterations)...); err != nil {
		return trust.Report{}, fmt.Errorf("trust: %w", err)
	}
	if err := s.DB.SelectContext(ctx, &a.Buckets, s.q(`SELECT conf_bucket AS bucket, count(*) AS n, `+sumIf("1")+` AS correct,
		CAST(sum(conf_u) AS BIGINT) AS conf_u, CAST(sum(conf_u * conf_u) AS BIGINT) AS conf2_u2, `+sumIf("conf_u")+` AS conf_correct_u`+
		scored+` AND conf_bucket IS NOT NULL GROUP BY conf_bucket`), args...); err != nil {
		return trust.Report{}, fmt.Errorf("trust: %w", err)
	}
	// Voided decisions are not counted: they were recorded by mistake.
	dq, dargs := `SELECT coalesce(CAST(sum(decisions) AS BIGINT), 0) FROM hub_projects WHERE 1 = 1`, []any(nil)
	if opts.Category != "" {
		dq, dargs = `SELECT count(*) FROM hub_decisions d WHERE category = ? AND`+notVoided("d.project_id", "d.id"), []any{opts.Category}
		c, a := only("d.project_id", projectID)
		dq, dargs = dq+c, append(dargs, a...)
	} else {
		c, a := only("id", projectID)
		vc, va := only("v.project_id", projectID)
		dq = `SELECT (` + dq + c + `) - (SELECT count(*) FROM hub_decision_voids v JOIN hub_decisions d ON d.project_id = v.project_id AND d.id = v.decision_id
			WHERE v.void = 1` + vc + `)`
		dargs = append(a, va...)
	}
	if err := s.DB.GetContext(ctx, &a.Decisions, s.q(dq), dargs...); err != nil {
		return trust.Report{}, fmt.Errorf("trust: %w", err)
	}
	if projectID != AllProjects && opts.Category == "" {
		latest, err := s.latestScored(ctx, projectID, trust.MinScored)
		if err != nil {
			return trust.Report{}, err
		}
		a.LatestNewestFirst = latest
	} else if opts.Category != "" {
		latest, err := s.latestScoredWhere(ctx, projectID, opts.Category)
		if err != nil {
			return trust.Report{}, err
		}
		a.LatestNewestFirst = latest
	}
	r := trust.Build(a, opts.Bins, opts.Iterations)
	if opts.Category != "" {
		r.Filter = "category " + opts.Category
	}
	return r, nil
}

// latestScoredWhere is latestScored for one category (of one project, or
// of every project in journal order by project).
func (s *Store) latestScoredWhere(ctx context.Context, projectID, category string) ([]bool, error) {
	cond, args := only("project_id", projectID)
	var outs []string
	err := s.DB.SelectContext(ctx, &outs, s.q(`SELECT outcome FROM hub_outcomes
		WHERE outcome IN ('CORRECT', 'INCORRECT') AND decision_offset IS NOT NULL AND category = ?`+cond+`
		ORDER BY project_id DESC, decision_offset DESC LIMIT ?`), append(append([]any{category}, args...), trust.MinScored)...)
	if err != nil {
		return nil, fmt.Errorf("read latest outcomes: %w", err)
	}
	res := make([]bool, len(outs))
	for i, o := range outs {
		res[i] = o == "CORRECT"
	}
	return res, nil
}

// Decision is a decision on the hub: the local form, and its project.
type Decision struct {
	Project string `json:"project"`
	journal.DecisionView
}

type decisionRow struct {
	Project string `db:"project_id"`
	db.DecisionRow
}

const decisionSelect = `SELECT d.project_id, d.id, d.line, d.byte_offset AS seq, d.byte_offset, d.iteration, d.ts, d.ts_ns, d.tier, d.depth,
	d.category, d.input, d.decision, d.reason, d.next_action, d.verification, d.retro_prev_id, d.retro_outcome, d.confidence,
	d.requestor, d.context, d.request_id, coalesce(o.outcome, 'PENDING') AS outcome,
	coalesce(o.ts, '') AS outcome_ts, coalesce(o.evidence, '') AS outcome_evidence,
	(coalesce(v.void, 0) = 1) AS voided, CASE WHEN v.void = 1 THEN v.ts ELSE '' END AS void_ts, CASE WHEN v.void = 1 THEN v.evidence ELSE '' END AS void_reason
	FROM hub_decisions d LEFT JOIN hub_outcomes o ON o.project_id = d.project_id AND o.decision_id = d.id
	LEFT JOIN hub_decision_voids v ON v.project_id = d.project_id AND v.decision_id = d.id`

// DecisionFilter narrows a listing of decisions (as `orbit log`).
type DecisionFilter struct {
	Category, Outcome string
	Iteration         *int64
	// Before is a paging cursor from a previous page ("" for the first).
	Before string
	Limit  int
}

// DecisionPage is a page of decisions, newest first; Next is the cursor of
// the following page ("" at the end).
type DecisionPage struct {
	Items []Decision `json:"items"`
	Next  string     `json:"next"`
}

// Decisions lists the decisions in scope, newest first: in journal order
// for one project, by time across projects.
func (s *Store) Decisions(ctx context.Context, projectID string, f DecisionFilter) (DecisionPage, error) {
	where, args := only("d.project_id", projectID)
	if f.Category != "" {
		where += " AND d.category = ?"
		args = append(args, f.Category)
	}
	if f.Outcome != "" {
		where += " AND coalesce(o.outcome, 'PENDING') = ?"
		args = append(args, f.Outcome)
	}
	if f.Iteration != nil {
		where += " AND d.iteration = ?"
		args = append(args, *f.Iteration)
	}
	all := projectID == AllProjects
	order := ` ORDER BY d.byte_offset DESC`
	if all {
		order = ` ORDER BY coalesce(d.ts_ns, 0) DESC, d.project_id DESC, d.byte_offset DESC`
	}
	if f.Before != "" {
		c, err := parseCursor(f.Before, all)
		if err != nil {
			return DecisionPage{}, &BadBatchError{err.Error()}
		}
		if all {
			where += " AND (coalesce(d.ts_ns, 0), d.project_id, d.byte_offset) < (?, ?, ?)"
			args = append(args, c.ts, c.project, c.offset)
		} else {
			where += " AND d.byte_offset < ?"
			args = append(args, c.offset)
		}
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	var rows []decisionRow
	if err := s.DB.SelectContext(ctx, &rows, s.q(decisionSelect+` WHERE 1 = 1`+where+order+` LIMIT ?`), append(args, limit+1)...); err != nil {
		return DecisionPage{}, fmt.Errorf("list decisions: %w", err)
	}
	page := DecisionPage{Items: []Decision{}}
	for i := range rows {
		if i == limit {
			page.Next = cursorOf(rows[i-1], all)
			break
		}
		page.Items = append(page.Items, Decision{Project: rows[i].Project, DecisionView: journal.ViewOf(&rows[i].DecisionRow)})
	}
	return page, nil
}

type cursor struct {
	ts      int64
	project string
	offset  int64
}

func cursorOf(r decisionRow, all bool) string {
	if !all {
		return fmt.Sprint(r.ByteOffset)
	}
	return fmt.Sprintf("%d.%s.%d", r.TSNS.Int64, r.Project, r.ByteOffset)
}

func parseCursor(s string, all bool) (cursor, error) {
	var c cursor
	bad := fmt.Errorf("before=%q: want a cursor from a previous page", s)
	if !all {
		if _, err := fmt.Sscan(s, &c.offset); err != nil || c.offset < 0 {
			return c, bad
		}
		return c, nil
	}
	var a, b int
	for i := range s {
		if s[i] == '.' {
			if a == 0 {
				a = i
			}
			b = i
		}
	}
	if a == 0 || a == b {
		return c, bad
	}
	if _, err := fmt.Sscan(s[:a], &c.ts); err != nil {
		return c, bad
	}
	if _, err := fmt.Sscan(s[b+1:], &c.offset); err != nil {
		return c, bad
	}
	c.project = s[a+1 : b]
	return c, nil
}

// DecisionByID returns one decision of a project.
func (s *Store) DecisionByID(ctx context.Context, projectID, id string) (Decision, bool, error) {
	var r decisionRow
	err := s.DB.GetContext(ctx, &r, s.q(decisionSelect+` WHERE d.project_id = ? AND d.id = ?`), projectID, id)
	if isNoRows(err) {
		return Decision{}, false, nil
	}
	if err != nil {
		return Decision{}, false, fmt.Errorf("read decision %s of %s: %w", id, projectID, err)
	}
	return Decision{Project: r.Project, DecisionView: journal.ViewOf(&r.DecisionRow)}, true, nil
}

// StaleDecision is a decision still without an outcome, with its project.
type StaleDecision struct {
	Project       string `json:"project"`
	ID            string `json:"id"`
	Iteration     int64  `json:"iteration"`
	AgeIterations int64  `json:"age_iterations"`
	Category      string `json:"category"`
	Input         string `json:"input"`
	TS            string `json:"ts"`
	AgeSeconds    *int64 `json:"age_seconds,omitempty"`
}

// StaleReport lists stale decisions across the projects in scope. A
// project's current iteration is the highest in its journal (the state
// file stays on its machine).
type StaleReport struct {
	Total     int64           `json:"total"`
	AtLeast   bool            `json:"total_at_least"`
	Decisions []StaleDecision `json:"decisions"`
}

// staleCap bounds the count of stale decisions (a count is a scan).
const staleCap = 10000

// Stale lists decisions still PENDING more than iterations iterations
// before their project's current one, oldest first, per project.
func (s *Store) Stale(ctx context.Context, projectID string, iterations int64, limit int, now time.Time) (StaleReport, error) {
	if limit <= 0 {
		limit = 50
	}
	// The stale decisions change only with a push to the projects read (a
	// decision, an outcome, a void or a new iteration): cached by their
	// chunk counters, read first (see Trust); only the ages are of now.
	version, err := s.version(ctx, projectID)
	if err != nil {
		return StaleReport{}, fmt.Errorf("stale decisions: %w", err)
	}
	key := fmt.Sprintf("%s\x00%d\x00%d\x00%d", projectID, iterations, limit, version.Projects)
	st, ok := s.stale.get(key, version.Chunks)
	if !ok {
		if st, err = s.staleRows(ctx, projectID, iterations, limit); err != nil {
			return StaleReport{}, err
		}
		s.stale.put(key, version.Chunks, st)
	}
	rep := StaleReport{Total: st.total, AtLeast: st.total >= staleCap, Decisions: []StaleDecision{}}
	for _, r := range st.rows {
		sd := StaleDecision{Project: r.Project, ID: r.ID, Iteration: r.Iteration, AgeIterations: r.Current - r.Iteration, Category: r.Category, Input: r.Input, TS: r.TS}
		if r.TSNS.Valid {
			age := int64(now.Sub(time.Unix(0, r.TSNS.Int64)).Seconds())
			sd.AgeSeconds = &age
		}
		rep.Decisions = append(rep.Decisions, sd)
	}
	sort.SliceStable(rep.Decisions, func(i, j int) bool { return rep.Decisions[i].AgeIterations > rep.Decisions[j].AgeIterations })
	return rep, nil
}

// staleRow is a stale decision as read.
type staleRow struct {
	Project   string        `db:"project_id"`
	ID        string        `db:"id"`
	Iteration int64         `db:"iteration"`
	Current   int64         `db:"max_iteration"`
	Category  string        `db:"category"`
	Input     string        `db:"input"`
	TS        string        `db:"ts"`
	TSNS      sql.NullInt64 `db:"ts_ns"`
}

// staleSet is what Stale reads: how many are stale (up to staleCap) and
// the first limit of them.
type staleSet struct {
	total int64
	rows  []staleRow
}

// version is the push counter of the projects in scope (their chunks, and
// how many they are), which every push moves in its transaction.
func (s *Store) version(ctx context.Context, projectID string) (scopeVersion, error) {
	cond, args := only("id", projectID)
	var v scopeVersion
	err := s.DB.GetContext(ctx, &v, s.q(`SELECT CAST(coalesce(sum(chunks), 0) AS BIGINT) AS chunks, count(*) AS projects FROM hub_projects WHERE 1 = 1`+cond), args...)
	return v, err
}

type scopeVersion struct {
	Chunks   int64 `db:"chunks"`
	Projects int64 `db:"projects"`
}

func (s *Store) staleRows(ctx context.Context, projectID string, iterations int64, limit int) (staleSet, error) {
	cond, args := only("d.project_id", projectID)
	where := ` FROM hub_decisions d JOIN hub_projects p ON p.id = d.project_id
		LEFT JOIN hub_outcomes o ON o.project_id = d.project_id AND o.decision_id = d.id
		WHERE coalesce(o.outcome, 'PENDING') = 'PENDING' AND d.iteration < p.max_iteration - ? AND` + notVoided("d.project_id", "d.id") + cond
	args = append([]any{iterations}, args...)
	var st staleSet
	if err := s.DB.GetContext(ctx, &st.total, s.q(`SELECT count(*) FROM (SELECT 1`+where+` LIMIT ?) c`), append(args, staleCap)...); err != nil {
		return st, fmt.Errorf("count stale decisions: %w", err)
	}
	if err := s.DB.SelectContext(ctx, &st.rows, s.q(`SELECT d.project_id, d.id, d.iteration, p.max_iteration, d.category, d.input, d.ts, d.ts_ns`+where+
		` ORDER BY d.project_id, d.iteration, d.byte_offset LIMIT ?`), append(args, limit)...); err != nil {
		return st, fmt.Errorf("read stale decisions: %w", err)
	}
	return st, nil
}
