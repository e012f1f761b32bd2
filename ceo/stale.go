package ceo

import (
	"context"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
)

// DefaultStaleIterations is seed 000's TURN rule: a decision still PENDING
// more than 2 iterations after it was made is stale.
const DefaultStaleIterations = 2

// DefaultStaleLimit is how many stale decisions a listing shows unless
// told otherwise.
const DefaultStaleLimit = 50

// StaleOptions say what stale means.
type StaleOptions struct {
	// Iterations: stale when made more than this many iterations before
	// the current one.
	Iterations int64
	// OlderThan, when set, replaces Iterations: stale when its ts is older.
	OlderThan time.Duration
	// Limit bounds the list (0: all); Total still counts every one, up to
	// Cap (0: 10,000; the count is a scan on a large journal).
	Limit int
	Cap   int64
}

// Check refuses options that mean nothing: a negative count.
func (o StaleOptions) Check() error {
	switch {
	case o.Iterations < 0:
		return inputErrorf("--iterations %d: must be 0 or more", o.Iterations)
	case o.OlderThan < 0:
		return inputErrorf("--older-than %s: must be positive", o.OlderThan)
	case o.Limit < 0:
		return inputErrorf("--limit %d: must be 0 (all) or more", o.Limit)
	}
	return nil
}

// StaleDecision is a decision still without an outcome.
type StaleDecision struct {
	ID            string `json:"id"`
	Iteration     int64  `json:"iteration"`
	AgeIterations int64  `json:"age_iterations"`
	Category      string `json:"category"`
	Input         string `json:"input"`
	TS            string `json:"ts"`
	// AgeSeconds is the time since ts (absent when ts is not a time).
	AgeSeconds *int64 `json:"age_seconds,omitempty"`
}

// StaleReport lists stale decisions.
type StaleReport struct {
	Current int64 `json:"current_iteration"`
	Total   int64 `json:"total"`
	// AtLeast: Total reached the cap; there may be more.
	AtLeast   bool            `json:"total_at_least"`
	Decisions []StaleDecision `json:"decisions"`
}

// StaleDecisions lists decisions still without an outcome past the limit.
// The current iteration is the state file's, else the journal's highest.
func StaleDecisions(ctx context.Context, ix *journal.Index, opts StaleOptions, now time.Time) (StaleReport, error) {
	rep := StaleReport{Decisions: []StaleDecision{}}
	li, err := ReadLoopInfo(ix.Project)
	if err != nil {
		return rep, err
	}
	rep.Current = li.Iteration
	if rep.Current == 0 {
		if rep.Current, err = ix.Store.MaxIteration(ctx); err != nil {
			return rep, err
		}
	}
	// Decisions imported from conductor tracks keep their own track: the
	// ORBIT loop's iterations do not age them.
	f := db.StaleFilter{Limit: opts.Limit, Cap: opts.Cap, NotRequestor: journal.RequestorConductor}
	if opts.OlderThan > 0 {
		f.BeforeNS = now.Add(-opts.OlderThan).UnixNano()
	} else {
		f.BeforeIteration = max(rep.Current-opts.Iterations, 0)
		if f.BeforeIteration == 0 {
			return rep, nil
		}
	}
	rows, total, err := ix.Store.Unverified(ctx, f)
	if err != nil {
		return rep, err
	}
	rep.Total, rep.AtLeast = total, total >= f.CountCap()
	for _, d := range rows {
		s := StaleDecision{ID: d.ID, Iteration: d.Iteration, AgeIterations: rep.Current - d.Iteration, Category: d.Category, Input: d.Input, TS: d.TS}
		if d.TSNS.Valid {
			age := int64(now.Sub(time.Unix(0, d.TSNS.Int64)).Seconds())
			s.AgeSeconds = &age
		}
		rep.Decisions = append(rep.Decisions, s)
	}
	return rep, nil
}
