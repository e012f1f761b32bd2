package server

import (
	"context"
	"time"

	"github.com/orbit-loop/orbit/ceo"
)

// decideReq is one POST /decisions waiting for its group commit.
type decideReq struct {
	in   ceo.Input
	done chan decideResp
}

type decideResp struct {
	res ceo.Result
	err error
}

// maxBatch bounds one group commit; batchWait is how long the committer
// waits for company once a request arrives (requests already queued join
// without waiting).
const (
	maxBatch  = 256
	batchWait = 2 * time.Millisecond
)

// committer records the decisions queued by handlers: every request that
// arrives while a commit is running, or within batchWait of the first,
// goes into the next one (one journal append, one fsync, one sync). Each is
// answered only once its line is durable and indexed.
func (s *Server) committer(ctx context.Context) {
	for {
		var first *decideReq
		select {
		case <-ctx.Done():
			s.drainCommits(ctx)
			return
		case first = <-s.commits:
		}
		batch := []*decideReq{first}
		timer := time.NewTimer(batchWait)
	collect:
		for len(batch) < maxBatch {
			select {
			case r := <-s.commits:
				batch = append(batch, r)
			case <-timer.C:
				break collect
			}
		}
		timer.Stop()
		s.commit(context.WithoutCancel(ctx), batch)
	}
}

// drainCommits answers what is still queued at shutdown.
func (s *Server) drainCommits(ctx context.Context) {
	for {
		select {
		case r := <-s.commits:
			s.commit(context.WithoutCancel(ctx), []*decideReq{r})
		default:
			return
		}
	}
}

func (s *Server) commit(ctx context.Context, batch []*decideReq) {
	ins := make([]ceo.Input, len(batch))
	for i, r := range batch {
		ins[i] = r.in
	}
	s.mu.Lock()
	res, errs, err := ceo.DecideBatch(ctx, s.ix, ins, ceo.Options{Now: s.cfg.Now})
	s.mu.Unlock()
	written := 0
	for i, r := range batch {
		e := errs[i]
		if err != nil {
			e = err
		}
		if e == nil {
			written++
		}
		r.done <- decideResp{res: res[i], err: e}
	}
	s.metrics.commits.Observe(float64(len(batch)))
	if written > 0 {
		s.changed()
	}
}

// decide queues one decision and waits for its commit.
func (s *Server) decide(ctx context.Context, in ceo.Input) (ceo.Result, error) {
	r := &decideReq{in: in, done: make(chan decideResp, 1)}
	select {
	case s.commits <- r:
	case <-ctx.Done():
		return ceo.Result{}, ctx.Err()
	}
	// Once queued, the decision will be committed: wait for it even if the
	// client goes away, so the answer we log is the truth.
	resp := <-r.done
	return resp.res, resp.err
}
