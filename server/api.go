package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/precedent"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/report"
	"github.com/orbit-loop/orbit/trust"
)

// route is one endpoint. The same table registers the handlers and is
// checked against openapi.json by a test.
type route struct {
	method, path string
	write        bool // requires the bearer token, always
	handler      func(*Server, http.ResponseWriter, *http.Request)
}

var routes = []route{
	{"GET", "/api/v1/decisions", false, (*Server).handleDecisions},
	{"GET", "/api/v1/decisions/{id}", false, (*Server).handleDecision},
	{"POST", "/api/v1/decisions", true, (*Server).handleDecide},
	{"POST", "/api/v1/retro", true, (*Server).handleRetro},
	{"POST", "/api/v1/void", true, (*Server).handleVoid},
	{"GET", "/api/v1/precedent", false, (*Server).handlePrecedent},
	{"GET", "/api/v1/trust", false, (*Server).handleTrust},
	{"GET", "/api/v1/trust/chart.svg", false, (*Server).handleTrustChart},
	{"GET", "/api/v1/stale", false, (*Server).handleStale},
	{"GET", "/api/v1/queue", false, (*Server).handleQueue},
	{"GET", "/api/v1/loops", false, (*Server).handleLoops},
	{"GET", "/api/v1/loops/{id}", false, (*Server).handleLoop},
	{"POST", "/api/v1/loops/{id}/{action}", true, (*Server).handleLoopControl},
	{"POST", "/api/v1/knowledge/match", true, (*Server).handleKnowledgeMatch},
	{"GET", "/api/v1/events", false, (*Server).handleEvents},
	{"GET", "/api/v1/openapi.json", false, (*Server).handleOpenAPI},
	{"POST", "/api/v1/session", true, (*Server).handleSession},
}

// Handler is the server's whole HTTP surface.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	// paths matches a request's path against the routes whatever its
	// method, so that a wrong method is a 405 problem naming the methods
	// allowed, not the mux's plain-text one.
	paths, allow := http.NewServeMux(), map[string][]string{}
	for _, rt := range routes {
		h := rt.handler
		mux.Handle(rt.method+" "+rt.path, s.instrument(rt.path, s.guard(rt, func(w http.ResponseWriter, r *http.Request) { h(s, w, r) })))
		if allow[rt.path] == nil {
			paths.Handle(rt.path, http.NotFoundHandler())
		}
		allow[rt.path] = append(allow[rt.path], rt.method)
	}
	mux.Handle("GET /metrics", s.guard(route{path: "/metrics"}, s.metrics.handler().ServeHTTP))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	mux.Handle("GET /readyz", s.guard(route{path: "/readyz"}, s.handleReady))
	web := s.instrument("/", dashboard())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			problem(w, r, http.StatusMethodNotAllowed, "method not allowed", r.Method+" "+r.URL.Path+": only GET")
			return
		}
		web.ServeHTTP(w, r)
	})
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := paths.Handler(r); pattern != "" {
			methods := strings.Join(allow[pattern], ", ")
			w.Header().Set("Allow", methods)
			problem(w, r, http.StatusMethodNotAllowed, "method not allowed", r.Method+" "+r.URL.Path+": allowed "+methods)
			return
		}
		problem(w, r, http.StatusNotFound, "no such endpoint", r.Method+" "+r.URL.Path+" (GET /api/v1/openapi.json lists them)")
	})
	return s.secure(mux)
}

// guard enforces the credentials and the body size limit: writes need
// the bearer token, always; off loopback reads need it too, or the
// dashboard's session cookie (guard.go). A cookie never allows a write: a
// browser sends it for whatever page it is on, a header only code that
// knows the token sends.
func (s *Server) guard(rt route, next http.HandlerFunc) http.HandlerFunc {
	need := readScope
	if rt.write {
		need = writeScope
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if (rt.write || !s.loopback.Load()) && s.access(r) < need {
			w.Header().Set("WWW-Authenticate", `Bearer realm="orbit"`)
			problem(w, r, http.StatusUnauthorized, "missing or wrong bearer token", "send Authorization: Bearer <token> (printed by orbit serve)")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		next(w, r)
	}
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if held := s.mu.held(); held > s.cfg.StuckAfter {
		problem(w, r, http.StatusServiceUnavailable, "not ready: the writer is stuck",
			fmt.Sprintf("one write has held the index for %s (a file or lock it waits for?)", held.Round(time.Second)))
		return
	}
	if msg := s.syncErr.Load().(string); msg != "" {
		problem(w, r, http.StatusServiceUnavailable, "not ready: the last sync failed", msg)
		return
	}
	if err := s.reads.DB.PingContext(r.Context()); err != nil {
		problem(w, r, http.StatusServiceUnavailable, "not ready: the index does not answer", err.Error())
		return
	}
	io.WriteString(w, "ready\n")
}

// decode reads a JSON body into v, refusing unknown fields, trailing data
// and oversized bodies with a problem detail. It reports whether to go on.
func decode(w http.ResponseWriter, r *http.Request, v any) bool { return decodeBody(w, r, v, false) }

// decodeOptions decodes a body of options, as decode does, except that an
// empty body means "no options": v is left as it is.
func decodeOptions(w http.ResponseWriter, r *http.Request, v any) bool {
	return decodeBody(w, r, v, true)
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any, optional bool) bool {
	data, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		problem(w, r, http.StatusRequestEntityTooLarge, "request body too large", fmt.Sprintf("the limit is %d bytes", MaxBody))
		return false
	}
	if err != nil {
		problem(w, r, http.StatusBadRequest, "cannot read the request body", err.Error())
		return false
	}
	if optional && len(bytes.TrimSpace(data)) == 0 {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		problem(w, r, http.StatusBadRequest, "invalid JSON body", strings.TrimPrefix(err.Error(), "json: "))
		return false
	}
	if dec.More() {
		problem(w, r, http.StatusBadRequest, "invalid JSON body", "more than one JSON value")
		return false
	}
	return true
}

// inputProblem maps a request orbit will not record to 422, anything else
// to 500.
func inputProblem(w http.ResponseWriter, r *http.Request, err error) {
	var fe *journal.FieldError
	if errors.As(err, &fe) {
		fieldProblem(w, r, http.StatusUnprocessableEntity, fe)
		return
	}
	if ceo.IsInput(err) {
		problem(w, r, http.StatusUnprocessableEntity, "the request cannot be recorded as given", err.Error())
		return
	}
	var tl *project.TooLargeError
	if errors.Is(err, project.ErrUnsafe) || errors.As(err, &tl) {
		// A file of the project orbit will not use (a link, a FIFO, one
		// too large): the project's state, not a fault of the server.
		problem(w, r, http.StatusConflict, "a project file is refused", err.Error())
		return
	}
	problem(w, r, http.StatusInternalServerError, "internal error", err.Error())
}

func queryInt(r *http.Request, name string, def, lo, hi int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s=%q: want a number from %d to %d", name, v, lo, hi)
	}
	return n, nil
}

// oneOfParam reads an enumeration from the query, in any case.
func oneOfParam(r *http.Request, name string, allowed []string) (string, error) {
	return journal.ParseEnum(name, r.URL.Query().Get(name), allowed)
}

func (s *Server) handleDecisions(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", 50, 1, 1000)
	var cat, out string
	if err == nil {
		cat, err = oneOfParam(r, "category", journal.Categories)
	}
	if err == nil {
		out, err = oneOfParam(r, "outcome", journal.Outcomes)
	}
	var before int64
	if err == nil && r.URL.Query().Get("before") != "" {
		before, err = strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
		if err != nil || before < 1 {
			err = fmt.Errorf("before=%q: want a cursor from a previous page", r.URL.Query().Get("before"))
		}
	}
	f := db.DecisionFilter{Category: cat, Outcome: out, Limit: limit + 1, BeforeSeq: before,
		Requestor: r.URL.Query().Get("requestor"), Grep: r.URL.Query().Get("grep")}
	if err == nil {
		f.Tier, err = oneOfParam(r, "tier", journal.Tiers)
	}
	if err == nil {
		f.Decision, err = oneOfParam(r, "decision", journal.DecisionValues)
	}
	if v := r.URL.Query().Get("since"); err == nil && v != "" {
		t, perr := time.Parse(time.RFC3339Nano, v)
		if perr != nil {
			err = fmt.Errorf("since=%q: want an RFC 3339 time", v)
		}
		f.SinceNS = t.UnixNano()
	}
	if err == nil && r.URL.Query().Get("iteration") != "" {
		it, perr := strconv.ParseInt(r.URL.Query().Get("iteration"), 10, 64)
		if perr != nil {
			err = fmt.Errorf("iteration=%q: want a number", r.URL.Query().Get("iteration"))
		}
		f.Iteration = &it
	}
	if err != nil {
		problem(w, r, http.StatusBadRequest, "bad query parameter", err.Error())
		return
	}
	rows, err := s.reads.LatestDecisions(r.Context(), f)
	if err != nil {
		problem(w, r, http.StatusInternalServerError, "internal error", err.Error())
		return
	}
	// A page is the list `orbit log --json` prints; the next page's
	// address is in the Link header, as GitHub's API pages.
	items := []journal.DecisionView{}
	for i := range rows {
		if i == limit {
			NextLink(w, r, strconv.FormatInt(rows[i-1].Seq, 10))
			break
		}
		items = append(items, journal.ViewOf(&rows[i]))
	}
	writeJSON(w, http.StatusOK, items)
}

func (s *Server) handleDecision(w http.ResponseWriter, r *http.Request) {
	k, err := queryInt(r, "precedents", 3, 0, 100)
	if err != nil {
		problem(w, r, http.StatusBadRequest, "bad query parameter", err.Error())
		return
	}
	d, found, err := ceo.Show(r.Context(), journal.NewIndex(s.reads, s.proj), r.PathValue("id"), k)
	switch {
	case err != nil:
		problem(w, r, http.StatusInternalServerError, "internal error", err.Error())
	case !found:
		problem(w, r, http.StatusNotFound, "no such decision", fmt.Sprintf("no decision %q in the journal", r.PathValue("id")))
	default:
		writeJSON(w, http.StatusOK, d)
	}
}

// DecideRequest is the body of POST /api/v1/decisions: what `orbit decide`
// takes on stdin.
type DecideRequest = ceo.Request

func (s *Server) handleDecide(w http.ResponseWriter, r *http.Request) {
	var req DecideRequest
	if !decode(w, r, &req) {
		return
	}
	k := 3
	if req.Precedents != nil {
		k = *req.Precedents
	}
	in, err := req.Input()
	if err == nil {
		var res ceo.Result
		if res, err = s.decide(r.Context(), in); err == nil {
			if err = ceo.Similar(r.Context(), journal.NewIndex(s.reads, s.proj), &res, k); err == nil {
				status := http.StatusCreated
				if res.Existing {
					status = http.StatusOK
				}
				writeJSON(w, status, res)
				return
			}
		}
	}
	inputProblem(w, r, err)
}

// RetroRequest is the body of POST /api/v1/retro.
type RetroRequest struct {
	ID       string `json:"id"`
	Outcome  string `json:"outcome"`
	Evidence string `json:"evidence"`
}

func (s *Server) handleRetro(w http.ResponseWriter, r *http.Request) {
	var req RetroRequest
	if !decode(w, r, &req) {
		return
	}
	var res ceo.RetroResult
	err := s.event(r.Context(), func() (err error) {
		res, err = ceo.Retro(r.Context(), s.ix, req.ID, req.Outcome, req.Evidence, ceo.Options{Now: s.cfg.Now})
		return err
	})
	if err != nil {
		eventProblem(w, r, err)
		return
	}
	s.changed()
	writeJSON(w, http.StatusCreated, res)
}

// event records an event about a decision (an outcome, a void) under the
// writer's lock, on an index synced first.
func (s *Server) event(ctx context.Context, record func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.ix.Sync(ctx, journal.SyncOptions{}); err != nil {
		return err
	}
	return record()
}

// eventProblem renders why an event was not recorded: 404 for an id that
// names no decision, else as inputProblem.
func eventProblem(w http.ResponseWriter, r *http.Request, err error) {
	var ie *ceo.InputError
	if errors.As(err, &ie) && strings.HasPrefix(ie.Msg, "no decision") {
		problem(w, r, http.StatusNotFound, "no such decision", ie.Msg)
		return
	}
	inputProblem(w, r, err)
}

// VoidRequest is the body of POST /api/v1/void.
type VoidRequest struct {
	ID       string `json:"id"`
	Evidence string `json:"evidence"`
	Undo     bool   `json:"undo"`
}

// handleVoid voids a decision recorded by mistake (or takes a void back)
// through ceo.Void, as orbit void does: 201 with what was written, 200 when
// the decision already was as asked.
func (s *Server) handleVoid(w http.ResponseWriter, r *http.Request) {
	var req VoidRequest
	if !decode(w, r, &req) {
		return
	}
	var res ceo.VoidResult
	err := s.event(r.Context(), func() (err error) {
		res, err = ceo.Void(r.Context(), s.ix, req.ID, req.Evidence, req.Undo, ceo.Options{Now: s.cfg.Now})
		return err
	})
	if err != nil {
		eventProblem(w, r, err)
		return
	}
	status := http.StatusOK
	if res.Written {
		s.changed()
		status = http.StatusCreated
	}
	writeJSON(w, status, res)
}

func (s *Server) handlePrecedent(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	k, err := queryInt(r, "k", 3, 1, 100)
	var cat string
	if err == nil {
		cat, err = oneOfParam(r, "category", journal.Categories)
	}
	if err == nil && strings.TrimSpace(q) == "" {
		err = errors.New("q is required: the text to find similar decisions for")
	}
	if err != nil {
		problem(w, r, http.StatusBadRequest, "bad query parameter", err.Error())
		return
	}
	hits, err := precedent.Search(r.Context(), s.reads, q, precedent.Options{K: k, Category: cat})
	if err != nil {
		problem(w, r, http.StatusInternalServerError, "internal error", err.Error())
		return
	}
	if hits == nil {
		hits = []precedent.Hit{}
	}
	writeJSON(w, http.StatusOK, hits)
}

func (s *Server) trustReport(r *http.Request) (trust.Report, int, error) {
	var f trust.Filter
	var err error
	if f.Category, err = oneOfParam(r, "category", journal.Categories); err != nil {
		return trust.Report{}, http.StatusBadRequest, err
	}
	if f.Window, err = queryInt(r, "window", 0, 0, 1<<30); err != nil {
		return trust.Report{}, http.StatusBadRequest, err
	}
	bins, err := queryInt(r, "bins", 10, 1, 100)
	if err != nil {
		return trust.Report{}, http.StatusBadRequest, err
	}
	if v := r.URL.Query().Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return trust.Report{}, http.StatusBadRequest, fmt.Errorf("since=%q: want an RFC 3339 time", v)
		}
		f.SinceNS = t.UnixNano()
	}
	rep, err := trust.Load(r.Context(), s.reads, trust.Options{Filter: f, Bins: bins})
	if err != nil {
		return rep, http.StatusInternalServerError, err
	}
	return rep, http.StatusOK, nil
}

func (s *Server) handleTrust(w http.ResponseWriter, r *http.Request) {
	rep, status, err := s.trustReport(r)
	if err != nil {
		problem(w, r, status, http.StatusText(status), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func (s *Server) handleTrustChart(w http.ResponseWriter, r *http.Request) {
	rep, status, err := s.trustReport(r)
	if err != nil {
		problem(w, r, status, http.StatusText(status), err.Error())
		return
	}
	var b bytes.Buffer
	if err := report.TrustChart(&b, "trust.svg", rep); err != nil {
		problem(w, r, http.StatusInternalServerError, "internal error", err.Error())
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

func (s *Server) handleStale(w http.ResponseWriter, r *http.Request) {
	iters, err := queryInt(r, "iterations", ceo.DefaultStaleIterations, 0, 1<<30)
	var limit int
	if err == nil {
		limit, err = queryInt(r, "limit", 50, 0, 10000)
	}
	if err != nil {
		problem(w, r, http.StatusBadRequest, "bad query parameter", err.Error())
		return
	}
	ix := journal.NewIndex(s.reads, s.proj)
	rep, err := ceo.StaleDecisions(r.Context(), ix, ceo.StaleOptions{Iterations: int64(iters), Limit: limit}, s.cfg.Now())
	if err != nil {
		problem(w, r, http.StatusInternalServerError, "internal error", err.Error())
		return
	}
	// The list `orbit stale --json` prints; how many there are in all
	// (at least, when counting stopped at the cap) and the current
	// iteration in headers.
	total := strconv.FormatInt(rep.Total, 10)
	if rep.AtLeast {
		total += "+"
	}
	w.Header().Set("X-Total-Count", total)
	w.Header().Set("X-Current-Iteration", strconv.FormatInt(rep.Current, 10))
	writeJSON(w, http.StatusOK, rep.Decisions)
}

func (s *Server) handleQueue(w http.ResponseWriter, r *http.Request) {
	p, err := ceo.ReadPending(r.Context(), journal.NewIndex(s.reads, s.proj))
	if err != nil {
		problem(w, r, http.StatusInternalServerError, "internal error", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, p.View())
}
