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
	m.reg.MustRegister(m.requests, m.commits, &indexCollector{s: s}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
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
// decisions by tier, category and decision is a scan, so it is cached per
// index generation.
type indexCollector struct {
	s *Server

	mu     sync.Mutex
	gen    int64
	counts []tierCount
	cached bool
}

type tierCount struct {
	Tier     string `db:"tier"`
	Category string `db:"category"`
	Decision string `db:"decision"`
	N        int64  `db:"n"`
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
	if g := s.gen.Load(); !c.cached || g != c.gen {
		var counts []tierCount
		if err := s.reads.DB.SelectContext(ctx, &counts, `SELECT tier, category, decision, count(*) AS n FROM decisions GROUP BY 1, 2, 3`); err == nil {
			c.counts, c.gen, c.cached = counts, g, true
		}
	}
	for _, t := range c.counts {
		ch <- prometheus.MustNewConstMetric(descDecisions, prometheus.GaugeValue, float64(t.N), t.Tier, t.Category, t.Decision)
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
