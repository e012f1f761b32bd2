package server

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/trust"
)

// metrics are what /metrics exposes, in Prometheus's exposition format.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.HistogramVec
	commits  prometheus.Histogram
	index    *indexCollector
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "orbit_http_request_duration_seconds", Help: "HTTP request latency by route, method and status.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"route", "method", "status"})
	m.commits = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "orbit_decision_commit_batch_size", Help: "Decisions recorded per group commit.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
	})
	m.index = &indexCollector{s: s}
	m.reg.MustRegister(m.requests, m.commits, m.index, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// instrument records each request's latency by route.
func (s *Server) instrument(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		s.metrics.requests.WithLabelValues(route, r.Method, strconv.Itoa(sw.status)).Observe(time.Since(start).Seconds())
	})
}

// indexCollector reads the index's figures at scrape time. The count of
// decisions by tier, category and decision is kept between scrapes and
// brought up to date by counting only the decisions added since; it is
// counted again in full when the index lost decisions (a journal's past
// was rewritten, the index rebuilt), which the per-file totals sync keeps
// tell.
type indexCollector struct {
	s *Server

	mu    sync.Mutex
	gen   int64
	tally map[tallyKey]int64
	total int64 // decisions in tally
	last  int64 // highest journal position counted
}

type tallyKey struct{ tier, category, decision string }

// warm counts the decisions once, ahead of the first scrape: on a
// million decisions the full count takes seconds, the updates after it
// milliseconds.
func (c *indexCollector) warm(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.refresh(ctx) // a failure is retried by the first scrape
}

// refresh brings the tally up to the index's current state.
func (c *indexCollector) refresh(ctx context.Context) error {
	g := c.s.gen.Load()
	if c.tally != nil && g == c.gen {
		return nil
	}
	counts, err := c.s.reads.Counts(ctx)
	if err != nil {
		return err
	}
	rows, err := c.s.reads.DecisionTally(ctx, c.last)
	if err != nil {
		return err
	}
	added := int64(0)
	for _, r := range rows {
		added += r.N
	}
	if c.tally == nil || c.total+added != counts.Decisions {
		// The first scrape, or decisions were lost: count them all (rows
		// already did when nothing was counted before).
		if c.last > 0 {
			if rows, err = c.s.reads.DecisionTally(ctx, 0); err != nil {
				return err
			}
		}
		c.tally, c.total, c.last = map[tallyKey]int64{}, 0, 0
	}
	for _, r := range rows {
		c.tally[tallyKey{r.Tier, r.Category, r.Decision}] += r.N
		c.total += r.N
		c.last = max(c.last, r.Last)
	}
	c.gen = g
	return nil
}

var (
	descDecisions = prometheus.NewDesc("orbit_decisions", "Decisions in the journal by tier, category and decision.", []string{"tier", "category", "decision"}, nil)
	descAccuracy  = prometheus.NewDesc("orbit_accuracy", "Accuracy of the scored decisions over a window (all, last20, last10).", []string{"window"}, nil)
	descScored    = prometheus.NewDesc("orbit_scored_decisions", "Decisions whose current outcome is CORRECT or INCORRECT, by outcome.", []string{"outcome"}, nil)
	descLevel     = prometheus.NewDesc("orbit_trust_level", "1 for the trust level in force.", []string{"level"}, nil)
	descAlert     = prometheus.NewDesc("orbit_trust_alert", "1 while the trust calibration alert is raised.", nil, nil)
	descStale     = prometheus.NewDesc("orbit_stale_decisions", "Decisions still PENDING more than 2 iterations after they were made.", nil, nil)
	descSyncAge   = prometheus.NewDesc("orbit_sync_age_seconds", "Seconds since the last successful sync of the journal files.", nil, nil)
	descSyncLag   = prometheus.NewDesc("orbit_sync_lag_bytes", "Bytes of the journal files not yet indexed.", []string{"file"}, nil)
)

func (c *indexCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDecisions, descAccuracy, descScored, descLevel, descAlert, descStale, descSyncAge, descSyncLag} {
		ch <- d
	}
}

func (c *indexCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := c.s
	c.mu.Lock()
	_ = c.refresh(ctx) // on failure, the last tally (a scrape reports what it can)
	for k, n := range c.tally {
		ch <- prometheus.MustNewConstMetric(descDecisions, prometheus.GaugeValue, float64(n), k.tier, k.category, k.decision)
	}
	c.mu.Unlock()
	if h, err := trust.Current(ctx, s.reads); err == nil {
		ch <- prometheus.MustNewConstMetric(descAccuracy, prometheus.GaugeValue, trust.NewWindow(h.Correct, h.Incorrect).Accuracy, "all")
		ch <- prometheus.MustNewConstMetric(descAccuracy, prometheus.GaugeValue, h.Last20.Accuracy, "last20")
		ch <- prometheus.MustNewConstMetric(descAccuracy, prometheus.GaugeValue, h.Last10.Accuracy, "last10")
		ch <- prometheus.MustNewConstMetric(descScored, prometheus.GaugeValue, float64(h.Correct), "CORRECT")
		ch <- prometheus.MustNewConstMetric(descScored, prometheus.GaugeValue, float64(h.Incorrect), "INCORRECT")
		for _, l := range trust.Levels {
			v := 0.0
			if l == h.Level {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descLevel, prometheus.GaugeValue, v, string(l))
		}
		alert := 0.0
		if h.Alert {
			alert = 1
		}
		ch <- prometheus.MustNewConstMetric(descAlert, prometheus.GaugeValue, alert)
	}
	ix := journal.NewIndex(s.reads, s.proj)
	if st, err := ceo.StaleDecisions(ctx, ix, ceo.StaleOptions{Iterations: ceo.DefaultStaleIterations, Limit: 1}, s.cfg.Now()); err == nil {
		ch <- prometheus.MustNewConstMetric(descStale, prometheus.GaugeValue, float64(st.Total))
	}
	if last := s.lastSync.Load(); last > 0 {
		ch <- prometheus.MustNewConstMetric(descSyncAge, prometheus.GaugeValue, s.cfg.Now().Sub(time.Unix(0, last)).Seconds())
	}
	if files, err := s.reads.Files(ctx); err == nil {
		for _, f := range files {
			lag := 0.0
			if fi, err := statSize(s.proj.Path(f.Path)); err == nil && fi > f.SyncedOffset {
				lag = float64(fi - f.SyncedOffset)
			}
			ch <- prometheus.MustNewConstMetric(descSyncLag, prometheus.GaugeValue, lag, f.Path)
		}
	}
}
