package trust

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
)

// Filter narrows a report.
type Filter struct {
	// SinceNS keeps decisions whose ts is at or after it (0: all).
	SinceNS int64
	// Category keeps one category ("" all).
	Category string
	// Window keeps the last Window scored decisions (0: all).
	Window int
}

// Check refuses a filter that cannot mean anything: a category that does
// not exist, a negative window.
func (f Filter) Check() error {
	if f.Category != "" && !slices.Contains(journal.Categories, f.Category) {
		return fmt.Errorf("--category %q is not allowed (allowed: %s)", f.Category, strings.Join(journal.Categories, ", "))
	}
	if f.Window < 0 {
		return fmt.Errorf("--window %d: must be 0 (all) or more", f.Window)
	}
	return nil
}

// IsZero reports whether the filter keeps everything.
func (f Filter) IsZero() bool { return f == Filter{} }

// Options tune a report.
type Options struct {
	Filter Filter
	// Bins is the number of calibration bins (default 10).
	Bins int
	// Iterations is how many of the latest iterations the trend shows
	// (default 60; 0 keeps the default, -1 all).
	Iterations int
}

// Load computes the report. Without a filter it reads only the index's
// derived tables (a few hundred rows whatever the journal's size); a filter
// reads the scored decisions it keeps.
func Load(ctx context.Context, store *db.Store, opts Options) (Report, error) {
	if opts.Bins <= 0 {
		opts.Bins = 10
	}
	iters := opts.Iterations
	switch {
	case iters == 0:
		iters = 60
	case iters < 0:
		iters = 0
	}
	var a Aggregates
	var err error
	if opts.Filter.IsZero() {
		a, err = loadAggregates(ctx, store, iters)
	} else {
		a, err = loadFiltered(ctx, store, opts.Filter)
	}
	if err != nil {
		return Report{}, err
	}
	r := Build(a, opts.Bins, iters)
	r.Filter = opts.Filter.describe()
	return r, nil
}

func (f Filter) describe() string {
	var parts []string
	if f.Category != "" {
		parts = append(parts, "category "+f.Category)
	}
	if f.SinceNS != 0 {
		parts = append(parts, "since "+sinceText(f.SinceNS))
	}
	if f.Window > 0 {
		parts = append(parts, fmt.Sprintf("last %d scored", f.Window))
	}
	return strings.Join(parts, ", ")
}

// sinceText is the time a filter starts at, in UTC: the date alone when
// it is midnight (--since 7d, --since 2026-03-21), else to the second.
func sinceText(ns int64) string {
	t := time.Unix(0, ns).UTC()
	if t.Equal(t.Truncate(24 * time.Hour)) {
		return t.Format(time.DateOnly)
	}
	return t.Format("2006-01-02 15:04:05 UTC")
}

// loadAggregates reads the derived tables; iterations bounds the trend to
// the latest ones (0: all), so that its cost does not grow with history.
func loadAggregates(ctx context.Context, store *db.Store, iterations int) (Aggregates, error) {
	var a Aggregates
	q := store.DB
	// Voided decisions are not counted: they were recorded by mistake.
	if err := q.GetContext(ctx, &a.Decisions, `SELECT (SELECT coalesce(sum(records), 0) FROM journal_files WHERE kind = 'decisions')
		- (SELECT count(*) FROM decision_voids v JOIN decisions d ON d.id = v.decision_id WHERE v.void)`); err != nil {
		return a, fmt.Errorf("trust: %w", err)
	}
	if err := q.SelectContext(ctx, &a.Cells, `SELECT category, tier, depth, requestor, correct, incorrect FROM trust_cells WHERE correct + incorrect > 0`); err != nil {
		return a, fmt.Errorf("trust: %w", err)
	}
	itq := `SELECT iteration, correct, incorrect FROM trust_iterations WHERE correct + incorrect > 0`
	var itArgs []any
	if iterations > 0 {
		itq += ` ORDER BY iteration DESC LIMIT ?`
		itArgs = append(itArgs, iterations)
	}
	if err := q.SelectContext(ctx, &a.Iterations, itq, itArgs...); err != nil {
		return a, fmt.Errorf("trust: %w", err)
	}
	if err := q.SelectContext(ctx, &a.Buckets, `SELECT bucket, n, correct, conf_u, conf2_u2, conf_correct_u FROM trust_calibration WHERE n > 0`); err != nil {
		return a, fmt.Errorf("trust: %w", err)
	}
	latest, err := store.LatestScored(ctx, Last20Size)
	if err != nil {
		return a, err
	}
	a.LatestNewestFirst = latest
	bc, bi, err := store.Baseline(ctx)
	if err != nil {
		return a, err
	}
	a.Baseline = NewWindow(bc, bi)
	return a, nil
}

func loadFiltered(ctx context.Context, store *db.Store, f Filter) (Aggregates, error) {
	where := ` WHERE NOT EXISTS (SELECT 1 FROM decision_voids v WHERE v.decision_id = d.id AND v.void)`
	var args []any
	if f.Category != "" {
		cond, arg := db.CategoryFilter("d")
		where += ` AND ` + cond
		args = append(args, arg(f.Category))
	}
	if f.SinceNS != 0 {
		where += ` AND d.ts_ns >= ?`
		args = append(args, f.SinceNS)
	}
	var decisions int
	if err := store.DB.GetContext(ctx, &decisions, `SELECT count(*) FROM decisions d`+where, args...); err != nil {
		return Aggregates{}, fmt.Errorf("trust: %w", err)
	}
	q := `SELECT d.seq, d.iteration, d.category, d.tier, d.depth, d.requestor, d.confidence, o.outcome = 'CORRECT' AS correct
		FROM decision_outcomes o JOIN decisions d ON d.seq = o.decision_seq` + where + ` AND o.outcome IN ('CORRECT', 'INCORRECT')`
	if f.Window > 0 {
		q = `SELECT * FROM (` + q + ` ORDER BY d.seq DESC LIMIT ?) ORDER BY seq`
		args = append(args, f.Window)
	} else {
		q += ` ORDER BY d.seq`
	}
	var rows []Scored
	if err := store.DB.SelectContext(ctx, &rows, q, args...); err != nil {
		return Aggregates{}, fmt.Errorf("trust: %w", err)
	}
	if f.Window > 0 {
		decisions = len(rows)
	}
	return Aggregate(decisions, rows), nil
}
