package ceo

import (
	"context"
	"errors"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/policy"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/queue"
	"github.com/orbit-loop/orbit/trust"
)

// ReadLoopInfo reads the state file's fields that reports show.
func ReadLoopInfo(p project.Project) (LoopInfo, error) {
	o, _, err := ReadLoopState(p.Root, project.StateFile)
	return o, err
}

// Progress is what seed 000's progress file and session summary show.
type Progress struct {
	Loop      LoopInfo        `json:"loop"`
	Iteration int64           `json:"iteration"`
	Trust     trust.Headline  `json:"trust"`
	Queue     []queue.Request `json:"-"`
	Pending   int             `json:"pending"`
	Invalid   []queue.Invalid `json:"invalid"`
	// QueueErr is why the queue file cannot be read ("" when it can): the
	// progress file says so rather than fail.
	QueueErr  string            `json:"queue_error,omitempty"`
	NextDepth string            `json:"next_depth"`
	Latest    []db.Event        `json:"-"`
	ThisIter  db.SessionStats   `json:"this_iteration"`
	Focus     *db.DecisionRow   `json:"-"`
	Session   db.SessionStats   `json:"session"`
	Stale     int64             `json:"stale"`
	Problems  []journal.Problem `json:"-"`
	Now       time.Time         `json:"now"`
}

// Pending is the pending queue as the REASON phase sees it.
type Pending struct {
	Loop     LoopInfo        `json:"loop"`
	Trust    trust.Headline  `json:"-"`
	Requests []queue.Request `json:"-"`
	// Invalid are the queue's items that cannot be decided as they are.
	Invalid []queue.Invalid `json:"-"`
	// NextDepth is the depth of the deepest request ("" for an empty queue).
	NextDepth string `json:"next_depth"`
}

// QueueItem is a pending request as the queue's view lists it.
type QueueItem struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Category string `json:"category"`
	Impact   string `json:"impact"`
	Depth    string `json:"depth"`
}

// QueueView is the pending queue as GET /api/v1/queue and the MCP queue
// tool show it: the loop, each request with its depth, and the next depth
// target.
type QueueView struct {
	Loop      LoopInfo    `json:"loop"`
	Pending   []QueueItem `json:"pending"`
	NextDepth string      `json:"next_depth"`
	// Invalid are the items that cannot be decided as they are, each
	// named with its field and the allowed values.
	Invalid []queue.Invalid `json:"invalid"`
}

// View is the queue's view of p.
func (p Pending) View() QueueView {
	v := QueueView{Loop: p.Loop, Pending: []QueueItem{}, NextDepth: p.NextDepth, Invalid: append([]queue.Invalid{}, p.Invalid...)}
	for _, q := range p.Requests {
		v.Pending = append(v.Pending, QueueItem{ID: q.ID, Title: q.Title, Category: q.Category, Impact: q.Impact, Depth: DepthOf(q)})
	}
	return v
}

// ReadPending reads the state file, the queue and the trust level: what
// the queue's view needs and no more (no scan of the journal).
func ReadPending(ctx context.Context, ix *journal.Index) (Pending, error) {
	var p Pending
	var err error
	if p.Loop, err = ReadLoopInfo(ix.Project); err != nil {
		return p, err
	}
	if p.Trust, err = trust.Current(ctx, ix.Store); err != nil {
		return p, err
	}
	q, err := queue.Read(ix.Project.Root, project.PendingFile)
	if err != nil {
		// The loop and the trust are read: a caller may go on without
		// the queue.
		return p, err
	}
	p.Requests, p.Invalid = q.Requests, q.Invalid
	if f := deepest(q.Requests, p.Trust.Level); f != nil {
		p.NextDepth = f.Depth
	}
	return p, nil
}

// GatherProgress reads everything the progress file needs from the index,
// the queue and the state file.
func GatherProgress(ctx context.Context, ix *journal.Index, now time.Time) (Progress, error) {
	var p Progress
	p.Now = now
	pend, err := ReadPending(ctx, ix)
	var qe *queue.Error
	switch {
	case errors.As(err, &qe):
		p.QueueErr = err.Error()
	case err != nil:
		return p, err
	}
	p.Loop, p.Trust, p.Queue, p.Pending, p.NextDepth = pend.Loop, pend.Trust, pend.Requests, len(pend.Requests), pend.NextDepth
	p.Invalid = pend.Invalid
	p.Iteration = p.Loop.Iteration
	if p.Iteration == 0 {
		if p.Iteration, err = ix.Store.MaxIteration(ctx); err != nil {
			return p, err
		}
	}
	if p.Latest, err = ix.Store.LatestEvents(ctx, 5); err != nil {
		return p, err
	}
	it := p.Iteration
	if p.ThisIter, err = ix.Store.Stats(ctx, db.StatsFilter{Iteration: &it}); err != nil {
		return p, err
	}
	// The session is this loop's iterations (numbering goes on across
	// loops, so no summary mixes two); a loop orbit did not start is
	// counted from its start time to now.
	sf := db.StatsFilter{FromIteration: p.Loop.FirstIteration}
	if sf.FromIteration == 0 && !p.Loop.Started.IsZero() {
		sf.SinceNS, sf.UntilNS = p.Loop.Started.UnixNano(), now.UnixNano()
	}
	if p.Session, err = ix.Store.Stats(ctx, sf); err != nil {
		return p, err
	}
	focus, err := ix.Store.LatestDecisions(ctx, db.DecisionFilter{Iteration: &it, Limit: 50})
	if err != nil {
		return p, err
	}
	p.Focus = deepFocus(focus)
	stale, err := StaleDecisions(ctx, ix, StaleOptions{Iterations: DefaultStaleIterations, Limit: 1, Cap: 1000}, now)
	if err != nil {
		return p, err
	}
	p.Stale = stale.Total
	return p, nil
}

// deepFocus is seed 000's "deep focus" of an iteration: its deepest
// decision (heavy, then medium, then light; the latest of equals), nil when
// every decision was trivial. ds are newest first.
func deepFocus(ds []db.DecisionRow) *db.DecisionRow {
	var f *db.DecisionRow
	for i := range ds {
		r := policy.DepthRank(ds[i].Depth)
		if ds[i].Depth != "trivial" && (f == nil || r > policy.DepthRank(f.Depth)) {
			f = &ds[i]
		}
	}
	return f
}

// DepthOf is a request's depth: its own, else classified.
func DepthOf(r queue.Request) string {
	if r.Depth != "" {
		return r.Depth
	}
	return policy.Classify(r.Category, r.Impact, r.Reversible)
}

// deepest returns the deepest request (the first of equals: queue order),
// with its tier at level, or nil for an empty queue.
func deepest(rs []queue.Request, level trust.Level) *Focus {
	var f *Focus
	for _, r := range rs {
		depth := DepthOf(r)
		if f == nil || policy.DepthRank(depth) > policy.DepthRank(f.Depth) {
			tier, _ := policy.Tier(level, r.Impact, r.Reversible)
			f = &Focus{Request: r, Depth: depth, Tier: tier}
		}
	}
	return f
}
