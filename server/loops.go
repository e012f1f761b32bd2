package server

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/knowledge"
	"github.com/orbit-loop/orbit/loop"
)

// scanLoops reads every loop of the project, as `orbit loop list` does,
// recording what changed since orbit last saw it. It holds the writer lock:
// the loop event journal is synced into the index.
func (s *Server) scanLoops(ctx context.Context) (*loop.History, loop.Scan, error) {
	h := &loop.History{Root: s.proj.Root, Store: s.ix.Store}
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, err := frameworks.Scan(ctx, h, s.cfg.Now())
	for _, p := range sc.Problems {
		s.logf("loops: %s", p.Error())
	}
	return h, sc, err
}

// handleLoops is GET /api/v1/loops: the unified view, the same array as
// `orbit loop list --json`, filtered by framework= and active=true.
func (s *Server) handleLoops(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	framework, active := q.Get("framework"), q.Get("active")
	if framework != "" && !loop.IsFramework(framework) {
		problem(w, r, http.StatusBadRequest, "bad query parameter", "framework="+framework+": want one of "+strings.Join(loop.Frameworks(), ", "))
		return
	}
	if active != "" && active != "true" && active != "false" {
		problem(w, r, http.StatusBadRequest, "bad query parameter", "active="+active+": want true or false")
		return
	}
	_, sc, err := s.scanLoops(r.Context())
	if err != nil {
		problem(w, r, http.StatusInternalServerError, "cannot read the loops", err.Error())
		return
	}
	views := make([]loop.View, 0, len(sc.Loops))
	for _, v := range sc.Loops {
		if (framework == "" || v.Framework == framework) && (active != "true" || !loop.IsStopped(v.Status)) {
			views = append(views, v)
		}
	}
	writeJSON(w, http.StatusOK, views)
}

// handleLoop is GET /api/v1/loops/{id}: one loop with its history, as
// `orbit loop show --json`.
func (s *Server) handleLoop(w http.ResponseWriter, r *http.Request) {
	h, sc, err := s.scanLoops(r.Context())
	if err != nil {
		problem(w, r, http.StatusInternalServerError, "cannot read the loops", err.Error())
		return
	}
	v, err := sc.Resolve(r.PathValue("id"), "")
	if err != nil {
		s.loopProblem(w, r, err)
		return
	}
	if v.History, err = h.Of(r.Context(), v.Framework, v.ID); err != nil {
		problem(w, r, http.StatusInternalServerError, "cannot read the loop's history", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// LoopControlRequest is the body of POST /api/v1/loops/{id}/{action}.
type LoopControlRequest struct {
	// Status is the stop word of a stop (default "stopped").
	Status string `json:"status"`
	// Reason says why, in words.
	Reason string `json:"reason"`
}

// LoopControlResult is what a stop, pause or resume did.
type LoopControlResult struct {
	Framework string `json:"framework"`
	ID        string `json:"id"`
	From      string `json:"from"`
	Status    string `json:"status"`
	// Wrote says what was written in the loop's own files.
	Wrote []string `json:"wrote"`
	// Next says what continues the loop, when something must (a resumed
	// CCW loop: its skill exited on the pause).
	Next  string     `json:"next,omitempty"`
	Event loop.Event `json:"event"`
}

// handleLoopControl is POST /api/v1/loops/{id}/{action}: stop, pause or
// resume a loop in its own file, exactly as `orbit loop stop|pause|resume`.
func (s *Server) handleLoopControl(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	if action != loop.EventStop && action != loop.EventPause && action != loop.EventResume {
		problem(w, r, http.StatusNotFound, "no such loop action", action+": want stop, pause or resume")
		return
	}
	// An empty body is no options: a stop as stopped, a pause or resume
	// without a reason.
	var req LoopControlRequest
	if !decodeOptions(w, r, &req) {
		return
	}
	if action == loop.EventStop {
		if req.Status == "" {
			req.Status = "stopped"
		}
		if !loop.IsStopReason(req.Status) {
			problem(w, r, http.StatusUnprocessableEntity, "the request cannot be applied as given",
				"status "+req.Status+" is not in the shared stop vocabulary (allowed: "+strings.Join(loop.StopReasons(), ", ")+")")
			return
		}
	} else if req.Status != "" {
		problem(w, r, http.StatusUnprocessableEntity, "the request cannot be applied as given", "status is for stop only")
		return
	}
	_, sc, err := s.scanLoops(r.Context())
	if err != nil {
		problem(w, r, http.StatusInternalServerError, "cannot read the loops", err.Error())
		return
	}
	v, err := sc.Resolve(r.PathValue("id"), action)
	if err != nil {
		s.loopProblem(w, r, err)
		return
	}
	c := &frameworks.Control{Index: s.ix, Now: s.cfg.Now}
	s.mu.Lock()
	e, err := c.Apply(r.Context(), v, action, req.Status, req.Reason)
	s.mu.Unlock()
	if err != nil {
		s.loopProblem(w, r, err)
		return
	}
	s.logf("loops: %s %s: %s -> %s (%s)", v.Framework, v.ID, v.Status, e.Status, action)
	s.changed()
	writeJSON(w, http.StatusOK, LoopControlResult{Framework: v.Framework, ID: v.ID, From: v.Status, Status: e.Status,
		Wrote: append([]string{}, e.Wrote...), Next: e.Next, Event: e})
}

// loopProblem maps the loop package's errors to statuses: an id naming no
// loop is 404, several 409, a control that does not apply 409; a loop's file
// that cannot be read is its finding.
func (s *Server) loopProblem(w http.ResponseWriter, r *http.Request, err error) {
	var nl *loop.NoLoopError
	var ae *loop.AmbiguousError
	var f journal.Problem
	switch {
	case errors.As(err, &nl):
		problem(w, r, http.StatusNotFound, "no such loop", err.Error())
	case errors.As(err, &ae):
		problem(w, r, http.StatusConflict, "the id names several loops", err.Error())
	case errors.Is(err, frameworks.ErrAlreadyStopped), errors.Is(err, frameworks.ErrNoControl), errors.Is(err, frameworks.ErrWrongState):
		problem(w, r, http.StatusConflict, "the loop cannot do that now", err.Error())
	case errors.As(err, &f):
		errorProblem(w, r, s.proj.Root, http.StatusConflict, "the loop's file cannot be read as a loop", err)
	default:
		problem(w, r, http.StatusInternalServerError, "the loop could not be changed", err.Error())
	}
}

// KnowledgeMatchRequest is the body of POST /api/v1/knowledge/match.
type KnowledgeMatchRequest struct {
	// Text is the error text to find known solutions for.
	Text string `json:"text"`
	// K is how many solutions to return (default 5, at most 50).
	K int `json:"k"`
	// Record counts the regex matches as occurrences, as `orbit knowledge
	// match` does without --no-record.
	Record bool `json:"record"`
}

// handleKnowledgeMatch is POST /api/v1/knowledge/match: the known solutions
// for an error text, as `orbit knowledge match --json`. It is a POST because
// error texts are long and multi-line; it requires the token because it may
// record (record: true).
func (s *Server) handleKnowledgeMatch(w http.ResponseWriter, r *http.Request) {
	var req KnowledgeMatchRequest
	if !decode(w, r, &req) {
		return
	}
	switch {
	case strings.TrimSpace(req.Text) == "":
		problem(w, r, http.StatusUnprocessableEntity, "the request cannot be applied as given", "text is required: the error text to match")
		return
	case req.K < 0 || req.K > 50:
		problem(w, r, http.StatusUnprocessableEntity, "the request cannot be applied as given", "k must be between 1 and 50 (0: the default, 5)")
		return
	}
	k := knowledge.New(s.ix.Store, s.proj)
	k.Now = s.cfg.Now
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := k.Sync(r.Context()); err != nil {
		problem(w, r, http.StatusInternalServerError, "cannot read the knowledge files", err.Error())
		return
	}
	ms, err := k.Match(r.Context(), req.Text, knowledge.MatchOptions{K: req.K, Record: req.Record})
	if err != nil {
		problem(w, r, http.StatusInternalServerError, "cannot match", err.Error())
		return
	}
	if ms == nil {
		ms = []knowledge.Match{}
	}
	writeJSON(w, http.StatusOK, ms)
}
