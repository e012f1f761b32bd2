package ceo

import (
	"context"
	"fmt"
	"slices"

	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/policy"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/queue"
	"github.com/orbit-loop/orbit/trust"
)

// FromRequest turns a pending request into an input; the agent's verdict
// (decision, reason, …) comes from elsewhere.
func FromRequest(r queue.Request) Input {
	rev := r.Reversible
	return Input{
		Title: r.Title, Category: r.Category, Impact: r.Impact, Reversible: &rev, Depth: r.Depth,
		Requestor: r.Requestor, Context: joinNonEmpty(r.Description, r.Context), RequestID: r.ID,
	}
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

// Focus is the queue item left for the agent to decide this iteration.
type Focus struct {
	Request queue.Request `json:"request"`
	Depth   string        `json:"depth"`
	Tier    string        `json:"tier"`
}

// QueueResult is what processing the queue did.
type QueueResult struct {
	// Decided are the trivial items decided in one batch.
	Decided []Result `json:"decided"`
	// AlreadyDecided are request ids found in the journal (decided before,
	// e.g. by a run that stopped before rewriting the queue); they are
	// taken out of the queue.
	AlreadyDecided []string `json:"already_decided"`
	// Focus is the single deepest remaining item, nil when none remains.
	Focus *Focus `json:"focus"`
	// Remaining is how many valid items stay queued (the focus among
	// them).
	Remaining int `json:"remaining"`
	// Invalid are the items that cannot be decided as they are: left in
	// the queue untouched, each named (file, item, id, field, allowed
	// values) so that whoever wrote it can fix it.
	Invalid []queue.Invalid `json:"invalid"`
	Level   trust.Level     `json:"trust_level"`
	// NextDepth is the depth of the focus ("" when the queue is empty).
	NextDepth string `json:"next_depth"`
	// Sync is what syncing the journal found on the way.
	Sync journal.SyncReport `json:"-"`
	// Warnings: see Result.Warnings.
	Warnings []string `json:"warnings,omitempty"`
}

// ProcessQueue runs seed 000's REASON phase over the pending queue: every
// trivial item whose tier decides it (auto_approve, escalate) is decided in
// one batch, the single deepest remaining item is returned as the deep
// focus, and the rest stay queued. The queue file is rewritten atomically
// without the decided items, after they are in the journal. One item that
// is not a valid request blocks nothing: every valid item is processed,
// the bad one stays in the file untouched and is named in Invalid. A file
// that is not a JSON array is an error naming where, and nothing is
// written.
func ProcessQueue(ctx context.Context, ix *journal.Index, opts Options) (QueueResult, error) {
	var res QueueResult
	q, err := queue.Read(ix.Project.Root, project.PendingFile)
	if err != nil {
		return res, err
	}
	// decided are the queue items taken out (by position in q).
	decided := map[int]bool{}
	build := func(ctx context.Context, ids *journal.IDs) ([]journal.Decision, error) {
		h, err := trust.Current(ctx, ix.Store)
		if err != nil {
			return nil, err
		}
		res.Level = h.Level
		iteration, err := defaultIteration(ctx, ix)
		if err != nil {
			return nil, err
		}
		var out []journal.Decision
		for i, r := range q.Requests {
			if r.ID != "" {
				if _, found, err := ix.Store.DecisionByRequest(ctx, r.ID); err != nil {
					return nil, err
				} else if found {
					res.AlreadyDecided = append(res.AlreadyDecided, r.ID)
					decided[i] = true
					continue
				}
			}
			in := FromRequest(r)
			depth := DepthOf(r)
			tier, err := policy.Tier(h.Level, r.Impact, r.Reversible)
			if err != nil {
				return nil, err
			}
			if _, _, auto := policy.DefaultDecision(tier, r.Impact, r.Reversible, h.Level); depth != "trivial" || !auto {
				continue
			}
			id, err := ids.Next(ctx, iteration)
			if err != nil {
				return nil, err
			}
			d, err := in.make(id, iteration, h.Level, opts.now(), opts.DryRun)
			if err != nil {
				return nil, err
			}
			if err := journal.CheckRecord(&d); err != nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("request %q stays queued: %v", r.ID, err))
				continue
			}
			out = append(out, d)
			made := Result{DecisionView: journal.NewView(d), Impact: r.Impact, Reversible: r.Reversible, Level: h.Level, Written: !opts.DryRun}
			if opts.DryRun {
				made.NextID, made.ID = d.ID, ""
			}
			res.Decided = append(res.Decided, made)
			decided[i] = true
		}
		return out, nil
	}
	if opts.DryRun {
		if res.Sync, err = ix.Sync(ctx, journal.SyncOptions{}); err != nil {
			return res, err
		}
		if _, err := build(ctx, ix.PreviewIDs()); err != nil {
			return res, err
		}
	} else if err = AdoptBaseline(ctx, ix, opts.now()); err != nil {
		return res, err
	} else if res.Sync, err = ix.Record(ctx, build); err != nil {
		return res, err
	} else if err = indexedViews(ctx, ix, res.Decided); err != nil {
		return res, err
	}
	var taken []queue.Request
	for i := range q.Requests {
		if decided[i] {
			taken = append(taken, q.Requests[i])
		}
	}
	if !opts.DryRun && len(taken) > 0 {
		// Read the queue again just before the rewrite: a hook may have
		// added items while the decisions were being recorded.
		if q, err = removeFromQueue(ctx, ix, taken); err != nil {
			return res, err
		}
	} else {
		q = q.Without(func(r queue.Request) bool {
			return slices.ContainsFunc(taken, func(t queue.Request) bool { return queue.Same(r, t) })
		})
	}
	res.Remaining, res.Invalid = len(q.Requests), q.Invalid
	if res.Invalid == nil {
		res.Invalid = []queue.Invalid{}
	}
	if res.Focus = deepest(q.Requests, res.Level); res.Focus != nil {
		res.NextDepth = res.Focus.Depth
	}
	if opts.DryRun || len(taken) == 0 {
		return res, nil
	}
	if w := stateWarning(SyncState(ctx, ix, opts.now())); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	return res, nil
}

// removeFromQueue takes items out of the queue file under orbit's queue
// lock: read, drop, atomic rewrite. It returns what remains.
func removeFromQueue(ctx context.Context, ix *journal.Index, items []queue.Request) (*queue.Queue, error) {
	path := ix.Project.Path(project.PendingFile)
	unlock, err := flock.Path(ctx, ix.Project.Root, path+".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	q, err := queue.Read(ix.Project.Root, path)
	if err != nil {
		return nil, err
	}
	rest := q.Without(func(r queue.Request) bool {
		return slices.ContainsFunc(items, func(t queue.Request) bool { return queue.Same(r, t) })
	})
	if len(rest.Requests) == len(q.Requests) {
		return rest, nil
	}
	return rest, rest.Write()
}

// DecideRequest decides one queued request (the deep focus, typically) with
// the agent's verdict, then takes it out of the queue. What the request
// says (title, category, impact, reversibility, requestor, context) comes
// from the queue: a verdict that gives it too is refused.
func DecideRequest(ctx context.Context, ix *journal.Index, requestID string, verdict Input, opts Options) (Result, error) {
	q, err := queue.Read(ix.Project.Root, project.PendingFile)
	if err != nil {
		return Result{}, err
	}
	r, ok := q.Find(requestID)
	if bad, invalid := q.FindInvalid(requestID); !ok && invalid {
		return Result{}, inputErrorf("--request %s cannot be decided as it is queued: %v; fix the item, or decide it without --request", requestID, bad)
	}
	if !ok {
		return Result{}, inputErrorf("--request %s: no such item in %s", requestID, project.PendingFile)
	}
	for _, f := range []struct{ flag, v string }{
		{"--title", verdict.Title}, {"--category", verdict.Category}, {"--impact", verdict.Impact},
		{"--requestor", verdict.Requestor}, {"--context", verdict.Context},
	} {
		if f.v != "" {
			return Result{}, inputErrorf("%s comes from the queued request with --request", f.flag)
		}
	}
	if verdict.Reversible != nil {
		return Result{}, inputErrorf("--reversible comes from the queued request with --request")
	}
	in := FromRequest(r)
	in.Decision, in.Reason, in.NextAction = verdict.Decision, verdict.Reason, verdict.NextAction
	in.Confidence, in.Iteration, in.Retro = verdict.Confidence, verdict.Iteration, verdict.Retro
	if verdict.Depth != "" {
		in.Depth = verdict.Depth
	}
	res, err := Decide(ctx, ix, in, opts)
	if err != nil || opts.DryRun {
		return res, err
	}
	_, err = removeFromQueue(ctx, ix, []queue.Request{r})
	return res, err
}
