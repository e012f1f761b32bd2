package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/orbit-loop/orbit/server"
)

// Config configures a hub's HTTP server.
type Config struct {
	// Admin is the hub's own token: it pushes and reads every project.
	// Empty: only stored project tokens are accepted.
	Admin string
	// Now is the clock.
	Now func() time.Time
	// Log receives one line per notable event (a failed request).
	Log io.Writer
}

// Server serves the hub's API and the dashboard over a store. It keeps no
// state of its own: several can serve one PostgreSQL.
type Server struct {
	store *Store
	cfg   Config
	logMu sync.Mutex
}

// NewServer returns a server over store.
func NewServer(store *Store, cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	return &Server{store: store, cfg: cfg}
}

type route struct {
	method, path string
	handler      func(*Server, http.ResponseWriter, *http.Request, Access)
}

var routes = []route{
	{"GET", "/api/v1/push/state", (*Server).handleState},
	{"POST", "/api/v1/push", (*Server).handlePush},
}

// Handler is the hub's whole HTTP surface.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range append(routes, viewRoutes...) {
		h := rt.handler
		mux.HandleFunc(rt.method+" "+rt.path, s.guard(func(w http.ResponseWriter, r *http.Request, a Access) { h(s, w, r, a) }))
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /readyz", s.handleReady)
	web := server.Dashboard()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			server.WriteProblem(w, r, http.StatusMethodNotAllowed, "method not allowed", r.Method+" "+r.URL.Path+": only GET")
			return
		}
		web.ServeHTTP(w, r)
	})
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		server.WriteProblem(w, r, http.StatusNotFound, "no such endpoint on a hub",
			r.Method+" "+r.URL.Path+": a hub is fed by `orbit push` only and serves the read endpoints (GET /api/v1/projects lists the projects)")
	})
	return mux
}

// guard authenticates the request's bearer token: every API request of a
// hub needs one, since a hub holds many projects.
func (s *Server) guard(next func(http.ResponseWriter, *http.Request, Access)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok := server.BearerToken(r)
		a, ok, err := s.store.Authenticate(r.Context(), tok, s.cfg.Admin)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="orbit"`)
			server.WriteProblem(w, r, http.StatusUnauthorized, "missing or unknown bearer token",
				"send Authorization: Bearer <token> (`orbit serve token create` makes one per project)")
			return
		}
		next(w, r, a)
	}
}

// fail answers an error: the store's typed errors as what they are,
// anything else as a 500 (logged).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var bad *BadBatchError
	var ce *ConflictError
	switch {
	case errors.As(err, &ce):
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusConflict)
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.Encode(struct {
			server.Problem
			State FileState `json:"state"`
		}{server.Problem{Type: "about:blank", Title: "the batch does not follow what the hub holds", Status: http.StatusConflict, Detail: ce.Reason, Instance: r.URL.Path}, ce.State})
	case errors.As(err, &bad):
		server.WriteProblem(w, r, http.StatusBadRequest, "bad request", bad.Msg)
	case errors.Is(err, ErrForbidden):
		server.WriteProblem(w, r, http.StatusForbidden, "forbidden", "this token is not allowed to do that for this project")
	case errors.Is(err, context.Canceled):
		server.WriteProblem(w, r, 499, "client closed request", "")
	default:
		s.logf("%s %s: %v", r.Method, r.URL.Path, err)
		server.WriteProblem(w, r, http.StatusInternalServerError, "internal error", "the hub could not answer; its log says why")
	}
}

func (s *Server) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.Log, format+"\n", args...)
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if err := s.store.DB.PingContext(r.Context()); err != nil {
		server.WriteProblem(w, r, http.StatusServiceUnavailable, "not ready: the store does not answer", "")
		return
	}
	io.WriteString(w, "ready\n")
}

func (s *Server) handleState(w http.ResponseWriter, r *http.Request, a Access) {
	id := r.URL.Query().Get("project")
	files, err := s.store.State(r.Context(), a, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	server.WriteJSON(w, http.StatusOK, struct {
		Project string      `json:"project"`
		Files   []FileState `json:"files"`
	}{id, files})
}

func (s *Server) handlePush(w http.ResponseWriter, r *http.Request, a Access) {
	q := r.URL.Query()
	b := Batch{Project: q.Get("project"), Name: q.Get("name"), Kind: q.Get("kind"), TailHash: q.Get("tail_hash")}
	var err error
	if b.Offset, err = strconv.ParseInt(q.Get("offset"), 10, 64); err != nil {
		s.fail(w, r, &BadBatchError{fmt.Sprintf("offset=%q: want a byte offset", q.Get("offset"))})
		return
	}
	if b.Lines, err = strconv.ParseInt(q.Get("lines"), 10, 64); err != nil {
		s.fail(w, r, &BadBatchError{fmt.Sprintf("lines=%q: want a line count", q.Get("lines"))})
		return
	}
	if !a.CanPush(b.Project) {
		s.fail(w, r, ErrForbidden)
		return
	}
	b.Data, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBatch))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		server.WriteProblem(w, r, http.StatusRequestEntityTooLarge, "batch too large", fmt.Sprintf("at most %d bytes", MaxBatch))
		return
	}
	if err != nil {
		server.WriteProblem(w, r, http.StatusBadRequest, "cannot read the batch", err.Error())
		return
	}
	res, err := s.store.Push(r.Context(), a, b, s.cfg.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	server.WriteJSON(w, http.StatusOK, res)
}

// Run serves until ctx is done, then shuts down gracefully.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shut); serr != nil && err == nil {
		err = serr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
