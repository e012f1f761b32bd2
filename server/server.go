// Package server owns `orbit serve`: the HTTP API over a project's index,
// the dashboard, Prometheus metrics and health checks. It feeds the index
// only through the same sync as the CLI (one writer, many readers), and
// records decisions and outcomes through the same ceo functions, grouping
// the decisions that arrive together into one journal append (group commit).
package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/report"
)

// Config configures a server.
type Config struct {
	// Addr is where to listen (default 127.0.0.1:7777).
	Addr string
	// Token is the bearer token write endpoints (and, off loopback, every
	// API endpoint) require. Empty on loopback: one is generated.
	Token string
	// Now is the clock.
	Now func() time.Time
	// Log receives one line per notable event.
	Log io.Writer
	// PollInterval is how often the journal files are checked (default 500ms).
	PollInterval time.Duration
	// Readers is the size of the read pool (default 4).
	Readers int
	// TLSCert and TLSKey, both set, serve HTTPS with this certificate and
	// key (PEM files): off loopback the token otherwise travels in clear.
	TLSCert, TLSKey string
	// MaxStreams and MaxStreamsPerClient cap the event streams open at
	// once, in total and per client address (default 64 and 8); past
	// them a stream is refused with 503.
	MaxStreams, MaxStreamsPerClient int
	// StuckAfter is how long one write may hold the index before /readyz
	// reports the writer stuck (default 15s).
	StuckAfter time.Duration
	// MaxConns caps the connections open at once (default 512); more wait
	// in the kernel's backlog until one closes, so that a flood of clients
	// costs a bounded amount of memory.
	MaxConns int
}

// MaxBody bounds a request body.
const MaxBody = 1 << 20

// Server serves one project.
type Server struct {
	cfg   Config
	proj  project.Project
	ix    *journal.Index // the writer: sync and records
	reads *db.Store      // a read-only pool for queries
	// loopback is true while the server listens on a loopback address
	// only (as bound, not as named): reads need no token, and the Host of
	// every request is checked.
	loopback   atomic.Bool
	tokenGiven bool
	tls        *tls.Config
	sessions   sessions
	streams    streams

	mu      writer // in-process writes: sync, records, loop control
	commits chan *decideReq
	hub     *hub
	metrics *metrics

	gen      atomic.Int64 // bumped when a sync changes the index
	lastSync atomic.Int64 // unix nanoseconds of the last successful sync
	syncErr  atomic.Value // string: the last sync error ("" when fine)
}

// writer serialises the server's writes and remembers since when the
// current one has held the index, so that /readyz can tell a stuck writer.
type writer struct {
	mu    sync.Mutex
	since atomic.Int64 // unix nanoseconds the holder took it; 0 when free
}

func (w *writer) Lock()   { w.mu.Lock(); w.since.Store(time.Now().UnixNano()) }
func (w *writer) Unlock() { w.since.Store(0); w.mu.Unlock() }

// held is how long the current write has held the index (0 when none).
func (w *writer) held() time.Duration {
	if t := w.since.Load(); t != 0 {
		return time.Since(time.Unix(0, t))
	}
	return 0
}

// NewToken returns a random bearer token.
func NewToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// New opens a server over the project whose writer index is ix: it opens a
// read pool beside it.
func New(ctx context.Context, ix *journal.Index, cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:7777"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 500 * time.Millisecond
	}
	if cfg.Readers <= 0 {
		cfg.Readers = 4
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = 64
	}
	if cfg.MaxStreamsPerClient <= 0 {
		cfg.MaxStreamsPerClient = 8
	}
	if cfg.StuckAfter <= 0 {
		cfg.StuckAfter = 15 * time.Second
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 512
	}
	loop := IsLoopback(cfg.Addr)
	tokenGiven := cfg.Token != ""
	if !loop && !tokenGiven {
		return nil, fmt.Errorf("serve: %s is not a loopback address: a --token (or ORBIT_TOKEN) is required", cfg.Addr)
	}
	if tokenGiven {
		if err := CheckToken(cfg.Token); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	var tlsCfg *tls.Config
	if cfg.TLSCert != "" || cfg.TLSKey != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("serve: --tls-cert/--tls-key: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if cfg.Token == "" {
		t, err := NewToken()
		if err != nil {
			return nil, err
		}
		cfg.Token = t
	}
	reads, err := db.Open(ctx, ix.Store.Path, db.Options{ReadOnly: true, Conns: cfg.Readers})
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, proj: ix.Project, ix: ix, reads: reads, tokenGiven: tokenGiven, tls: tlsCfg,
		commits: make(chan *decideReq, 1024), hub: newHub()}
	s.loopback.Store(loop)
	s.streams.max, s.streams.per = cfg.MaxStreams, cfg.MaxStreamsPerClient
	s.syncErr.Store("")
	s.metrics = newMetrics(s)
	if err := s.sync(ctx); err != nil {
		reads.Close()
		return nil, err
	}
	return s, nil
}

// Token is the bearer token in force.
func (s *Server) Token() string { return s.cfg.Token }

// Close closes the read pool (the writer belongs to the caller).
func (s *Server) Close() error { return s.reads.Close() }

// sync brings the index up to date with the files, under the write lock,
// and tells the dashboards when something changed.
func (s *Server) sync(ctx context.Context) error {
	s.mu.Lock()
	rep, err := s.ix.Sync(ctx, journal.SyncOptions{})
	s.mu.Unlock()
	if err != nil {
		s.syncErr.Store(err.Error())
		s.logf("sync: %v", err)
		return err
	}
	s.syncErr.Store("")
	s.lastSync.Store(s.cfg.Now().UnixNano())
	for _, p := range rep.Rewritten {
		s.logf("sync: %s", p.Error())
	}
	if rep.Decisions+rep.Events > 0 || len(rep.Problems) > 0 || len(rep.Rewritten) > 0 {
		s.changed()
	}
	return nil
}

// logf writes one line to the server's log, escaped (report.EscapeLog):
// the names and errors it quotes come from the project's files.
func (s *Server) logf(format string, args ...any) {
	io.WriteString(s.cfg.Log, report.EscapeLog(fmt.Sprintf(format, args...))+"\n")
}

// changed bumps the generation and wakes the dashboards.
func (s *Server) changed() {
	g := s.gen.Add(1)
	s.hub.publish(fmt.Sprintf(`{"generation":%d}`, g))
}

// Run serves until ctx is done, then shuts down gracefully: no new
// connections, in-flight requests and pending decisions finish.
// Whether the server is on loopback is decided by the address ln bound, not
// by the name it was asked for.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	loop := IsLoopback(ln.Addr().String())
	if !loop && !s.tokenGiven {
		return fmt.Errorf("%s is not a loopback address (it was asked for as %s): a --token (or ORBIT_TOKEN) is required", ln.Addr(), s.cfg.Addr)
	}
	s.loopback.Store(loop)
	ln = limitListener(ln, s.cfg.MaxConns)
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(s.cfg.Log, "serve: ", 0),
	}
	bg, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); s.committer(bg) }()
	go func() { defer wg.Done(); s.poller(bg) }()
	go func() { defer wg.Done(); s.metrics.index.warm(bg) }()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	s.hub.close()
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shut); serr != nil && err == nil {
		err = serr
	}
	stop()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// poller syncs the files on a timer, so that lines other tools append
// reach the dashboards.
func (s *Server) poller(ctx context.Context) {
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sync(ctx)
		}
	}
}
