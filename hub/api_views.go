package hub

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/precedent"
	"github.com/orbit-loop/orbit/report"
	"github.com/orbit-loop/orbit/server"
	"github.com/orbit-loop/orbit/trust"
)

// The read endpoints: the project server's, each taking ?project=ID (or *
// where a view across projects makes sense), and the project list.
var viewRoutes = []route{
	{"GET", "/api/v1/projects", (*Server).handleProjects},
	{"GET", "/api/v1/decisions", (*Server).handleDecisions},
	{"GET", "/api/v1/decisions/{id}", (*Server).handleDecision},
	{"GET", "/api/v1/trust", (*Server).handleTrust},
	{"GET", "/api/v1/trust/chart.svg", (*Server).handleTrustChart},
	{"GET", "/api/v1/stale", (*Server).handleStale},
	{"GET", "/api/v1/loops", (*Server).handleLoops},
	{"GET", "/api/v1/precedent", (*Server).handlePrecedent},
}

func queryInt(r *http.Request, name string, def, lo, hi int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, &BadBatchError{fmt.Sprintf("%s=%q: want a number from %d to %d", name, v, lo, hi)}
	}
	return n, nil
}

func oneOfParam(r *http.Request, name string, allowed []string) (string, error) {
	v := r.URL.Query().Get(name)
	if v != "" && !slices.Contains(allowed, v) {
		return "", &BadBatchError{fmt.Sprintf("%s=%q is not allowed (allowed: %s)", name, v, strings.Join(allowed, ", "))}
	}
	return v, nil
}

// scope resolves the request's project parameter, answering the error.
func (s *Server) scope(w http.ResponseWriter, r *http.Request, a Access, allowAll bool) (string, bool) {
	p, err := Scope(a, r.URL.Query().Get("project"), allowAll)
	if err != nil {
		s.fail(w, r, err)
		return "", false
	}
	return p, true
}

func (s *Server) handleProjects(w http.ResponseWriter, r *http.Request, a Access) {
	p, ok := s.scope(w, r, a, true)
	if !ok {
		return
	}
	ps, err := s.store.Projects(r.Context(), p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	server.WriteJSON(w, http.StatusOK, ps)
}

func (s *Server) handleDecisions(w http.ResponseWriter, r *http.Request, a Access) {
	p, ok := s.scope(w, r, a, true)
	if !ok {
		return
	}
	f := DecisionFilter{Before: r.URL.Query().Get("before")}
	var err error
	f.Limit, err = queryInt(r, "limit", 50, 1, 1000)
	if err == nil {
		f.Category, err = oneOfParam(r, "category", journal.Categories)
	}
	if err == nil {
		f.Outcome, err = oneOfParam(r, "outcome", journal.Outcomes)
	}
	if v := r.URL.Query().Get("iteration"); err == nil && v != "" {
		it, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil {
			err = &BadBatchError{fmt.Sprintf("iteration=%q: want a number", v)}
		}
		f.Iteration = &it
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page, err := s.store.Decisions(r.Context(), p, f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// One form with orbit serve: the list, the next page in the Link
	// header.
	if page.Next != "" {
		server.NextLink(w, r, page.Next)
	}
	server.WriteJSON(w, http.StatusOK, page.Items)
}

func (s *Server) handleDecision(w http.ResponseWriter, r *http.Request, a Access) {
	p, ok := s.scope(w, r, a, false)
	if !ok {
		return
	}
	d, found, err := s.store.DecisionByID(r.Context(), p, r.PathValue("id"))
	switch {
	case err != nil:
		s.fail(w, r, err)
	case !found:
		server.WriteProblem(w, r, http.StatusNotFound, "no such decision", fmt.Sprintf("no decision %q in project %s", r.PathValue("id"), p))
	default:
		server.WriteJSON(w, http.StatusOK, d)
	}
}

// trustReport is the trust report a request asks for, or false once it
// has answered an error.
func (s *Server) trustReport(w http.ResponseWriter, r *http.Request, a Access) (trust.Report, bool) {
	p, ok := s.scope(w, r, a, true)
	if !ok {
		return trust.Report{}, false
	}
	var o TrustOptions
	var err error
	o.Category, err = oneOfParam(r, "category", journal.Categories)
	if err == nil {
		o.Bins, err = queryInt(r, "bins", 10, 1, 100)
	}
	var rep trust.Report
	if err == nil {
		rep, err = s.store.Trust(r.Context(), p, o)
	}
	if err != nil {
		s.fail(w, r, err)
		return rep, false
	}
	return rep, true
}

func (s *Server) handleTrust(w http.ResponseWriter, r *http.Request, a Access) {
	if rep, ok := s.trustReport(w, r, a); ok {
		server.WriteJSON(w, http.StatusOK, rep)
	}
}

func (s *Server) handleTrustChart(w http.ResponseWriter, r *http.Request, a Access) {
	rep, ok := s.trustReport(w, r, a)
	if !ok {
		return
	}
	var b bytes.Buffer
	if err := report.TrustChart(&b, "trust.svg", rep); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

func (s *Server) handleStale(w http.ResponseWriter, r *http.Request, a Access) {
	p, ok := s.scope(w, r, a, true)
	if !ok {
		return
	}
	iters, err := queryInt(r, "iterations", ceo.DefaultStaleIterations, 0, 1<<30)
	var limit int
	if err == nil {
		limit, err = queryInt(r, "limit", 50, 0, 10000)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rep, err := s.store.Stale(r.Context(), p, int64(iters), limit, s.cfg.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	server.WriteJSON(w, http.StatusOK, rep)
}

func (s *Server) handleLoops(w http.ResponseWriter, r *http.Request, a Access) {
	p, ok := s.scope(w, r, a, true)
	if !ok {
		return
	}
	ls, err := s.store.Loops(r.Context(), p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	server.WriteJSON(w, http.StatusOK, ls)
}

// Values of the precedent endpoint's incorrect parameter.
var incorrectParams = map[string]precedent.Incorrect{"surface": precedent.Surface, "rank_last": precedent.RankLast, "include": precedent.Include, "exclude": precedent.Exclude}

func (s *Server) handlePrecedent(w http.ResponseWriter, r *http.Request, a Access) {
	p, ok := s.scope(w, r, a, true)
	if !ok {
		return
	}
	q := r.URL.Query().Get("q")
	k, err := queryInt(r, "k", 3, 1, 100)
	opts := precedent.Options{K: k}
	if err == nil {
		opts.Category, err = oneOfParam(r, "category", journal.Categories)
	}
	if err == nil {
		var inc string
		inc, err = oneOfParam(r, "incorrect", []string{"surface", "rank_last", "include", "exclude"})
		opts.Incorrect = incorrectParams[inc]
	}
	if err == nil && strings.TrimSpace(q) == "" {
		err = &BadBatchError{"q is required: the text to find similar decisions for"}
	}
	if err == nil && len(q) > maxQueryBytes {
		err = &BadBatchError{fmt.Sprintf("q is %d bytes; at most %d", len(q), maxQueryBytes)}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hits, err := s.store.Precedent(r.Context(), p, q, opts)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	server.WriteJSON(w, http.StatusOK, hits)
}

// maxQueryBytes bounds a precedent query.
const maxQueryBytes = 64 << 10
