package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/trust"
)

// metrics are what /metrics exposes, in Prometheus's text exposition format
// (version 0.0.4), written here rather than with client_golang: that
// library's package initialisation (its default registry, Go and process
// collectors) ran in every orbit process, hooks included, for an endpoint
// only `orbit serve` has.
type metrics struct {
	requests *histogramVec
	commits  *histogram
	index    *indexCollector
}

// requestBuckets are the latency buckets of orbit_http_request_duration_seconds.
var requestBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}

// commitBuckets are the buckets of orbit_decision_commit_batch_size.
var commitBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}

func newMetrics(s *Server) *metrics {
	return &metrics{
		requests: &histogramVec{buckets: requestBuckets, labels: []string{"method", "route", "status"}},
		commits:  newHistogram(commitBuckets),
		index:    &indexCollector{s: s},
	}
}

func (m *metrics) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e exposition
		m.requests.write(&e, "orbit_http_request_duration_seconds", "HTTP request latency by route, method and status.")
		m.commits.write(&e, "orbit_decision_commit_batch_size", "Decisions recorded per group commit.", nil)
		m.index.collect(r.Context(), &e)
		goMetrics(&e)
		processMetrics(&e)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		e.writeTo(w)
	})
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
		s.metrics.requests.observe(time.Since(start).Seconds(), r.Method, route, strconv.Itoa(sw.status))
	})
}

// histogram counts observations into cumulative buckets, as a Prometheus
// histogram.
type histogram struct {
	mu      sync.Mutex
	buckets []float64 // upper bounds, ascending; +Inf is implied
	counts  []uint64  // observations in each bucket (not cumulative), the last for +Inf
	sum     float64
}

func newHistogram(buckets []float64) *histogram {
	return &histogram{buckets: buckets, counts: make([]uint64, len(buckets)+1)}
}

// Observe records one value.
func (h *histogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.buckets, v) // the first bound >= v
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.mu.Unlock()
}

// write adds the histogram's samples (with labels) to family name,
// declaring the family when labels is nil or it is the first series.
func (h *histogram) write(e *exposition, name, help string, labels []label) {
	h.mu.Lock()
	counts, sum := slices.Clone(h.counts), h.sum
	h.mu.Unlock()
	f := e.family(name, help, "histogram")
	var cum uint64
	for i, c := range counts {
		cum += c
		le := "+Inf"
		if i < len(h.buckets) {
			le = formatFloat(h.buckets[i])
		}
		f.add("_bucket", append(slices.Clip(labels), label{"le", le}), float64(cum))
	}
	f.add("_sum", labels, sum)
	f.add("_count", labels, float64(cum))
}

// histogramVec is histograms by label values.
type histogramVec struct {
	buckets []float64
	labels  []string // names, sorted
	mu      sync.Mutex
	series  map[string]*histogram // by the label values joined with "\xff"
}

// observe records v in the series of the label values (in the order of
// labels).
func (v *histogramVec) observe(x float64, values ...string) {
	key := strings.Join(values, "\xff")
	v.mu.Lock()
	h := v.series[key]
	if h == nil {
		if v.series == nil {
			v.series = map[string]*histogram{}
		}
		h = newHistogram(v.buckets)
		v.series[key] = h
	}
	v.mu.Unlock()
	h.Observe(x)
}

func (v *histogramVec) write(e *exposition, name, help string) {
	v.mu.Lock()
	keys := make([]string, 0, len(v.series))
	for k := range v.series {
		keys = append(keys, k)
	}
	v.mu.Unlock()
	for _, k := range keys {
		v.mu.Lock()
		h := v.series[k]
		v.mu.Unlock()
		values := strings.Split(k, "\xff")
		labels := make([]label, len(v.labels))
		for i, n := range v.labels {
			labels[i] = label{n, values[i]}
		}
		h.write(e, name, help, labels)
	}
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

// collect writes the index's figures. A figure that cannot be read is left
// out (a scrape reports what it can).
func (c *indexCollector) collect(ctx context.Context, e *exposition) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s := c.s
	decisions := e.family("orbit_decisions", "Decisions in the journal by tier, category and decision.", "gauge")
	c.mu.Lock()
	_ = c.refresh(ctx) // on failure, the last tally
	for k, n := range c.tally {
		decisions.add("", []label{{"category", k.category}, {"decision", k.decision}, {"tier", k.tier}}, float64(n))
	}
	c.mu.Unlock()
	if h, err := trust.Current(ctx, s.reads); err == nil {
		acc := e.family("orbit_accuracy", "Accuracy of the scored decisions over a window (all, last20, last10).", "gauge")
		acc.add("", []label{{"window", "all"}}, trust.NewWindow(h.Correct, h.Incorrect).Accuracy)
		acc.add("", []label{{"window", "last20"}}, h.Last20.Accuracy)
		acc.add("", []label{{"window", "last10"}}, h.Last10.Accuracy)
		scored := e.family("orbit_scored_decisions", "Decisions whose current outcome is CORRECT or INCORRECT, by outcome.", "gauge")
		scored.add("", []label{{"outcome", "CORRECT"}}, float64(h.Correct))
		scored.add("", []label{{"outcome", "INCORRECT"}}, float64(h.Incorrect))
		level := e.family("orbit_trust_level", "1 for the trust level in force.", "gauge")
		for _, l := range trust.Levels {
			level.add("", []label{{"level", string(l)}}, boolValue(l == h.Level))
		}
		e.family("orbit_trust_alert", "1 while the trust calibration alert is raised.", "gauge").add("", nil, boolValue(h.Alert))
	}
	ix := journal.NewIndex(s.reads, s.proj)
	if st, err := ceo.StaleDecisions(ctx, ix, ceo.StaleOptions{Iterations: ceo.DefaultStaleIterations, Limit: 1}, s.cfg.Now()); err == nil {
		e.family("orbit_stale_decisions", "Decisions still PENDING more than 2 iterations after they were made.", "gauge").add("", nil, float64(st.Total))
	}
	if last := s.lastSync.Load(); last > 0 {
		e.family("orbit_sync_age_seconds", "Seconds since the last successful sync of the journal files.", "gauge").
			add("", nil, s.cfg.Now().Sub(time.Unix(0, last)).Seconds())
	}
	if files, err := s.reads.Files(ctx); err == nil {
		lag := e.family("orbit_sync_lag_bytes", "Bytes of the journal files not yet indexed.", "gauge")
		for _, f := range files {
			v := 0.0
			if size, err := statSize(s.proj.Path(f.Path)); err == nil && size > f.SyncedOffset {
				v = float64(size - f.SyncedOffset)
			}
			lag.add("", []label{{"file", f.Path}}, v)
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// goMetrics writes the Go runtime's figures under the names Prometheus's
// Go collector gives them.
func goMetrics(e *exposition) {
	e.family("go_goroutines", "Number of goroutines that currently exist.", "gauge").add("", nil, float64(runtime.NumGoroutine()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	e.family("go_threads", "Number of OS threads created.", "gauge").add("", nil, float64(threads))
	e.family("go_info", "Information about the Go environment.", "gauge").add("", []label{{"version", runtime.Version()}}, 1)
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	pauses := e.family("go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", "summary")
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		pauses.add("", []label{{"quantile", q}}, gc.PauseQuantiles[i].Seconds())
	}
	pauses.add("_sum", nil, gc.PauseTotal.Seconds())
	pauses.add("_count", nil, float64(gc.NumGC))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, m := range []struct {
		name, help, typ string
		v               uint64
	}{
		{"alloc_bytes", "Number of bytes allocated in heap and currently in use.", "gauge", ms.Alloc},
		{"alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already.", "counter", ms.TotalAlloc},
		{"sys_bytes", "Number of bytes obtained from system.", "gauge", ms.Sys},
		{"mallocs_total", "Total number of heap objects allocated, both live and gc-ed.", "counter", ms.Mallocs},
		{"frees_total", "Total number of heap objects frees.", "counter", ms.Frees},
		{"heap_alloc_bytes", "Number of heap bytes allocated and currently in use.", "gauge", ms.HeapAlloc},
		{"heap_sys_bytes", "Number of heap bytes obtained from system.", "gauge", ms.HeapSys},
		{"heap_idle_bytes", "Number of heap bytes waiting to be used.", "gauge", ms.HeapIdle},
		{"heap_inuse_bytes", "Number of heap bytes that are in use.", "gauge", ms.HeapInuse},
		{"heap_released_bytes", "Number of heap bytes released to OS.", "gauge", ms.HeapReleased},
		{"heap_objects", "Number of currently allocated objects.", "gauge", ms.HeapObjects},
		{"stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments.", "gauge", ms.StackInuse},
		{"stack_sys_bytes", "Number of bytes obtained from system for stack allocator.", "gauge", ms.StackSys},
		{"next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", "gauge", ms.NextGC},
	} {
		e.family("go_memstats_"+m.name, m.help, m.typ).add("", nil, float64(m.v))
	}
	e.family("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", "gauge").
		add("", nil, float64(ms.LastGC)/1e9)
}

// processMetrics writes the process's figures under the names Prometheus's
// process collector gives them, where /proc has them (Linux).
func processMetrics(e *exposition) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14, stime 15, starttime 22,
	// vsize 23, rss 24 (proc(5)).
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 22 {
		return
	}
	num := func(n int) float64 { v, _ := strconv.ParseFloat(fields[n-3], 64); return v }
	const ticks = 100 // USER_HZ: 100 on every Linux architecture Go supports
	e.family("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter").add("", nil, (num(14)+num(15))/ticks)
	e.family("process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge").add("", nil, num(23))
	e.family("process_resident_memory_bytes", "Resident memory size in bytes.", "gauge").add("", nil, num(24)*float64(os.Getpagesize()))
	if boot := bootTime(); boot > 0 {
		e.family("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge").add("", nil, boot+num(22)/ticks)
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		e.family("process_open_fds", "Number of open file descriptors.", "gauge").add("", nil, float64(len(fds)))
	}
	if limit := maxFDs(); limit > 0 {
		e.family("process_max_fds", "Maximum number of open file descriptors.", "gauge").add("", nil, limit)
	}
}

// bootTime reads the system's boot time from /proc/stat's btime line.
var bootTime = sync.OnceValue(func() float64 {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			t, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return t
		}
	}
	return 0
})

// maxFDs reads the soft limit of open files from /proc/self/limits.
func maxFDs() float64 {
	data, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "Max open files"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				v, _ := strconv.ParseFloat(f[0], 64)
				return v
			}
		}
	}
	return 0
}

// exposition is a scrape being written: metric families by name.
type exposition struct {
	families []*family
}

type family struct {
	name, help, typ string
	samples         []sample
}

type sample struct {
	suffix string
	labels []label
	value  float64
}

type label struct{ name, value string }

// family returns the family called name, declaring it the first time.
func (e *exposition) family(name, help, typ string) *family {
	for _, f := range e.families {
		if f.name == name {
			return f
		}
	}
	f := &family{name: name, help: help, typ: typ}
	e.families = append(e.families, f)
	return f
}

func (f *family) add(suffix string, labels []label, v float64) {
	f.samples = append(f.samples, sample{suffix, labels, v})
}

// writeTo writes the families sorted by name, each family's series sorted
// by their labels (a histogram's buckets in order), as client_golang does.
func (e *exposition) writeTo(w io.Writer) error {
	slices.SortFunc(e.families, func(a, b *family) int { return strings.Compare(a.name, b.name) })
	bw := bufio.NewWriter(w)
	for _, f := range e.families {
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.typ)
		slices.SortStableFunc(f.samples, func(a, b sample) int { return strings.Compare(seriesKey(a.labels), seriesKey(b.labels)) })
		for _, s := range f.samples {
			bw.WriteString(f.name + s.suffix)
			if len(s.labels) > 0 {
				bw.WriteByte('{')
				for i, l := range s.labels {
					if i > 0 {
						bw.WriteByte(',')
					}
					fmt.Fprintf(bw, "%s=\"%s\"", l.name, escapeLabel(l.value))
				}
				bw.WriteByte('}')
			}
			bw.WriteByte(' ')
			bw.WriteString(formatFloat(s.value))
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

// seriesKey orders a family's series by their labels but a histogram's
// "le" and a summary's "quantile", which keep the order they were added in
// (buckets, then sum and count).
func seriesKey(labels []label) string {
	var b strings.Builder
	for _, l := range labels {
		if l.name != "le" && l.name != "quantile" {
			b.WriteString(l.value)
			b.WriteByte(0)
		}
	}
	return b.String()
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }
