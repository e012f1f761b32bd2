package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orbit-loop/orbit/project"
)

// The serve suite's load: how long each endpoint is driven, after how long
// an untimed warm-up, by how many concurrent clients; how many parallel
// `orbit decide` processes the service is compared with, and the target.
const (
	serveLoadTime    = 10 * time.Second
	serveWarmup      = time.Second
	serveReadClients = 32
	servePostClients = 32
	serveCLIProcs    = 8
	serveVsCLITarget = 10.0
	// serveAlone is how many requests of each read are sent one at a time
	// before its load, for the latency of a request on an idle server.
	serveAlone = 3
)

// servePostBody is decideArgs as the JSON body of POST /api/v1/decisions.
const servePostBody = `{"title":"Add ESLint rule eqeqeq","category":"quality","impact":"low","reversible":true,"iteration":99999}`

// serveQueries are the precedent searches the load rotates through.
var serveQueries = []string{
	"SQLite vs Postgres for state storage",
	"Add ESLint rule eqeqeq",
	"rotate the signing key",
	"Cache rendered pages in Redis",
	"Run database migration in production",
	"Split search into a separate service",
	"Replace REST with gRPC for the tasks API",
	"Drop team invites from the milestone",
}

// servedProcess is a running `orbit serve`.
type servedProcess struct {
	cmd     *exec.Cmd
	base    string
	token   string
	started time.Duration // from exec to the URL printed
	mu      sync.Mutex
	log     bytes.Buffer
	exited  chan struct{}
}

var serveURLLine = regexp.MustCompile(`on (http://[^/\s]+)/#token=([0-9a-f]+)`)

// startServe runs `orbit serve --addr 127.0.0.1:0` in the project at dir and
// waits for the URL it prints.
func (e *Env) startServe(dir string) (*servedProcess, error) {
	return startServed(e.OrbitCmd(dir, "serve", "--addr", "127.0.0.1:0"), serveURLLine, 5*time.Minute)
}

// startServed starts cmd (an `orbit serve`) and waits up to wait for the
// line re matches on its stderr: its first group is the base URL, its
// second, if any, the token.
func startServed(cmd *exec.Cmd, re *regexp.Regexp, wait time.Duration) (*servedProcess, error) {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start orbit serve: %w", err)
	}
	p := &servedProcess{cmd: cmd, exited: make(chan struct{})}
	found := make(chan []string, 1)
	go func() {
		defer close(p.exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m:
				default:
				}
			}
		}
	}()
	select {
	case m := <-found:
		p.base, p.started = m[1], time.Since(start)
		if len(m) > 2 {
			p.token = m[2]
		}
		return p, nil
	case <-p.exited:
		cmd.Wait()
		return nil, fmt.Errorf("orbit serve exited before printing its URL:\n%s", p.output())
	case <-time.After(wait):
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("orbit serve printed no URL within %s:\n%s", wait, p.output())
	}
}

func (p *servedProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// stop interrupts the server (a graceful shutdown) and waits for it.
func (p *servedProcess) stop() error {
	p.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { <-p.exited; done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("orbit serve after SIGINT: %w\n%s", err, tail(p.output(), 2000))
		}
		return nil
	case <-time.After(time.Minute):
		p.cmd.Process.Kill()
		return fmt.Errorf("orbit serve still running a minute after SIGINT:\n%s", tail(p.output(), 2000))
	}
}

// cpu is the server process's user + system time so far.
func (p *servedProcess) cpu() time.Duration {
	f := strings.Fields(readFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid)))
	// Fields 14 and 15 (utime, stime) in clock ticks of 1/100 s; the
	// command name (field 2) has no space for orbit.
	if len(f) < 15 {
		return 0
	}
	u, _ := strconv.ParseInt(f[13], 10, 64)
	s, _ := strconv.ParseInt(f[14], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// loadRun is what one load run measured.
type loadRun struct {
	name    string
	clients int
	// requests counts the timed requests, errors those of them that failed;
	// warmErrors the failures of the untimed warm-up.
	requests, errors, warmErrors int
	firstErr                     string
	elapsed                      time.Duration
	lat                          []time.Duration // of the successes, sorted
	cpu                          time.Duration   // the server's CPU time during the run
	ids                          []string        // POST: the ids acknowledged with 201
	// alone is the median latency of a few requests sent one at a time
	// before the load (0: not measured).
	alone time.Duration
}

// rate is the successes per second.
func (r *loadRun) rate() float64 { return float64(len(r.lat)) / r.elapsed.Seconds() }

func (r *loadRun) quantile(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[nearestRank(len(r.lat), p)]
}

// loadSpec is one endpoint under load: the request a client sends (worker
// w, its i-th request) and the status that counts as success.
type loadSpec struct {
	name    string
	method  string
	path    func(w, i int) string
	body    string
	clients int
	status  int
	// id, when set, reads the acknowledged id from a success's body.
	id func(body []byte) (string, error)
}

// drive sends spec's requests from spec.clients concurrent clients for d,
// after an untimed warm-up of warm, and measures them.
func drive(ctx context.Context, client *http.Client, base, token string, spec loadSpec, warm, d time.Duration, cpu func() time.Duration) (loadRun, error) {
	do := func(w, i int) (time.Duration, []byte, error) {
		var body io.Reader
		if spec.body != "" {
			body = strings.NewReader(spec.body)
		}
		req, err := http.NewRequestWithContext(ctx, spec.method, base+spec.path(w, i), body)
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		lat := time.Since(start)
		if err != nil {
			return lat, nil, err
		}
		if res.StatusCode != spec.status {
			return lat, data, fmt.Errorf("%s %s: status %d; want %d: %s", spec.method, req.URL.RequestURI(), res.StatusCode, spec.status, tail(string(data), 300))
		}
		return lat, data, nil
	}
	run := func(d time.Duration, keep bool) loadRun {
		r := loadRun{name: spec.name, clients: spec.clients}
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := time.Now()
		deadline := start.Add(d)
		for w := range spec.clients {
			wg.Go(func() {
				var lats []time.Duration
				var ids []string
				errs, first := 0, ""
				for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
					lat, data, err := do(w, i)
					if err == nil && spec.id != nil {
						var id string
						if id, err = spec.id(data); err == nil {
							ids = append(ids, id)
						}
					}
					if err != nil {
						errs++
						if first == "" {
							first = err.Error()
						}
						continue
					}
					lats = append(lats, lat)
				}
				mu.Lock()
				defer mu.Unlock()
				r.requests += len(lats) + errs
				r.errors += errs
				if r.firstErr == "" {
					r.firstErr = first
				}
				if keep {
					r.lat = append(r.lat, lats...)
				}
				r.ids = append(r.ids, ids...)
			})
		}
		wg.Wait()
		r.elapsed = time.Since(start)
		slices.Sort(r.lat)
		return r
	}
	var alone []time.Duration
	aloneErrs, aloneErr := 0, ""
	if spec.method == "GET" {
		for i := range serveAlone {
			lat, _, err := do(0, i)
			if err != nil {
				aloneErrs++
				aloneErr = err.Error()
				continue
			}
			alone = append(alone, lat)
		}
	}
	warmRun := run(warm, false)
	c0 := cpu()
	r := run(d, true)
	r.cpu = cpu() - c0
	r.ids = append(warmRun.ids, r.ids...)
	r.warmErrors = warmRun.errors + aloneErrs
	if r.firstErr == "" {
		r.firstErr = warmRun.firstErr
	}
	if r.firstErr == "" {
		r.firstErr = aloneErr
	}
	if len(alone) > 0 {
		slices.Sort(alone)
		r.alone = median(alone)
	}
	return r, ctx.Err()
}

// decidedID reads the id of POST /api/v1/decisions's answer.
func decidedID(body []byte) (string, error) {
	// The answer is the record in its one JSON form, what it was made
	// from beside it (ceo.Result).
	var res struct {
		ID      string `json:"id"`
		Written bool   `json:"written"`
	}
	if err := json.Unmarshal(body, &res); err != nil || res.ID == "" || !res.Written {
		return "", fmt.Errorf("201 without a written decision: %s", tail(string(body), 300))
	}
	return res.ID, nil
}

// copyProject copies the journal and index of the project at src into a
// new project (the source must be quiet: no process writing it).
func (e *Env) copyProject(src, name string) (string, error) {
	dir, err := e.Dir(name)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		return "", err
	}
	for _, rel := range []string{project.DecisionsFile, project.IndexFile} {
		if err := CopyFile(filepath.Join(dir, rel), filepath.Join(src, rel)); err != nil {
			return "", err
		}
	}
	for _, rel := range []string{project.IndexFile + "-wal", project.RetroFile} {
		if _, err := os.Stat(filepath.Join(src, rel)); err == nil {
			if err := CopyFile(filepath.Join(dir, rel), filepath.Join(src, rel)); err != nil {
				return "", err
			}
		}
	}
	return dir, nil
}

// journalTail reads the decision journal of the project at dir from byte
// off: the ids of its lines, and how many lines are not a JSON object with
// an id.
func journalTail(dir string, off int64) (ids []string, bad int, err error) {
	f, err := os.Open(JournalPath(dir))
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, 0, err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var d struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(sc.Bytes(), &d) != nil || d.ID == "" {
			bad++
			continue
		}
		ids = append(ids, d.ID)
	}
	return ids, bad, sc.Err()
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// durability checks that the lines appended to the journal at dir since off
// are exactly the acknowledged ids, each once and well formed.
func durability(dir string, off int64, acked []string) (string, error) {
	ids, bad, err := journalTail(dir, off)
	if err != nil {
		return "", err
	}
	have := make(map[string]int, len(ids))
	for _, id := range ids {
		have[id]++
	}
	missing, dups := 0, 0
	for _, id := range acked {
		if have[id] == 0 {
			missing++
		}
	}
	for _, n := range have {
		if n > 1 {
			dups += n - 1
		}
	}
	msg := fmt.Sprintf("%d acknowledged, %d lines appended, %d acknowledged ids missing from the journal, %d duplicate ids, %d malformed lines",
		len(acked), len(ids), missing, dups, bad)
	if missing > 0 || dups > 0 || bad > 0 || len(ids) != len(acked) {
		return msg, fmt.Errorf("durability check failed: %s", msg)
	}
	return msg, nil
}

// cliLoad runs procs parallel loops of `orbit decide ... --precedents 0`
// through `sh -c` (as a hook runs it) in the project at dir for d, after an
// untimed warm-up, and measures them.
func (e *Env) cliLoad(ctx context.Context, dir string, procs int, warm, d time.Duration) (loadRun, error) {
	args := decideArgs + " --precedents 0"
	one := func() (time.Duration, string, error) {
		s, err := Measure(e.Command(dir, "sh", "-c", ShellQuote(e.Orbit)+" "+args))
		if err != nil {
			return 0, "", err
		}
		m := regexp.MustCompile(`Id: (iter-99999-\d+)`).FindSubmatch(s.Stdout)
		if m == nil {
			return s.Wall, "", fmt.Errorf("orbit %s printed no decision id:\n%s", args, s.Stdout)
		}
		return s.Wall, string(m[1]), nil
	}
	run := func(d time.Duration) loadRun {
		r := loadRun{name: fmt.Sprintf("%d × `orbit decide --precedents 0`", procs), clients: procs}
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := time.Now()
		deadline := start.Add(d)
		for range procs {
			wg.Go(func() {
				for time.Now().Before(deadline) && ctx.Err() == nil {
					lat, id, err := one()
					mu.Lock()
					r.requests++
					if err != nil {
						r.errors++
						if r.firstErr == "" {
							r.firstErr = err.Error()
						}
					} else {
						r.lat = append(r.lat, lat)
						r.ids = append(r.ids, id)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		r.elapsed = time.Since(start)
		slices.Sort(r.lat)
		return r
	}
	w := run(warm)
	r := run(d)
	r.ids = append(w.ids, r.ids...)
	r.warmErrors = w.errors
	if r.firstErr == "" {
		r.firstErr = w.firstErr
	}
	return r, ctx.Err()
}

// metricSample reads one series of the Prometheus text at base/metrics.
func metricSample(client *http.Client, base, series string) (float64, error) {
	res, err := client.Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if name, v, ok := strings.Cut(sc.Text(), " "); ok && name == series {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("/metrics has no %s", series)
}

// runServe load-tests `orbit serve` on the large project: the dashboard's
// reads, then POST /api/v1/decisions, against parallel `orbit decide`
// processes on a copy of the same project.
func runServe(ctx context.Context, e *Env) (string, error) {
	large := e.Large()
	L := SizeLabel(large)
	src, err := e.Project(ctx, large)
	if err != nil {
		return "", err
	}
	e.Logf("serve: copying the %s-decision project twice (service, CLI)", L)
	svcDir, err := e.copyProject(src, "serve-"+L)
	if err != nil {
		return "", err
	}
	cliDir, err := e.copyProject(src, "serve-cli-"+L)
	if err != nil {
		return "", err
	}

	e.Logf("serve: starting orbit serve on %s", svcDir)
	srv, err := e.startServe(svcDir)
	if err != nil {
		return "", err
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.stop()
		}
	}()
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: 256, MaxIdleConnsPerHost: 256, DisableCompression: true, IdleConnTimeout: time.Minute,
	}, Timeout: time.Minute}
	defer client.CloseIdleConnections()

	stale := 0
	var trust struct {
		Decisions int `json:"decisions"`
	}
	if res, err := client.Get(srv.base + "/api/v1/trust"); err == nil {
		json.NewDecoder(res.Body).Decode(&trust)
		res.Body.Close()
	}
	if v, err := metricSample(client, srv.base, "orbit_stale_decisions"); err == nil {
		stale = int(v)
	}

	get := func(name string, path func(w, i int) string) loadSpec {
		return loadSpec{name: name, method: "GET", path: path, clients: serveReadClients, status: 200}
	}
	fixed := func(p string) func(int, int) string { return func(int, int) string { return p } }
	reads := []loadSpec{
		get("`GET /api/v1/trust`", fixed("/api/v1/trust")),
		get("`GET /api/v1/trust/chart.svg`", fixed("/api/v1/trust/chart.svg")),
		get("`GET /api/v1/decisions?limit=25`", fixed("/api/v1/decisions?limit=25")),
		get("`GET /api/v1/precedent?k=10&q=…`", func(w, i int) string {
			return "/api/v1/precedent?k=10&q=" + url.QueryEscape(serveQueries[(w+i)%len(serveQueries)])
		}),
		get("`GET /api/v1/stale?limit=20`", fixed("/api/v1/stale?limit=20")),
		get("`GET /api/v1/queue`", fixed("/api/v1/queue")),
	}
	var runs []loadRun
	for _, spec := range reads {
		e.Logf("serve: %s, %d clients, %s", spec.name, spec.clients, serveLoadTime)
		r, err := drive(ctx, client, srv.base, srv.token, spec, serveWarmup, serveLoadTime, srv.cpu)
		if err != nil {
			return "", err
		}
		runs = append(runs, r)
	}

	off, err := fileSize(JournalPath(svcDir))
	if err != nil {
		return "", err
	}
	commits0, _ := metricSample(client, srv.base, "orbit_decision_commit_batch_size_count")
	post := loadSpec{name: "`POST /api/v1/decisions`", method: "POST", path: fixed("/api/v1/decisions"), body: servePostBody,
		clients: servePostClients, status: http.StatusCreated, id: decidedID}
	e.Logf("serve: %s, %d clients, %s", post.name, post.clients, serveLoadTime)
	pr, err := drive(ctx, client, srv.base, srv.token, post, serveWarmup, serveLoadTime, srv.cpu)
	if err != nil {
		return "", err
	}
	// A scrape after the writes (the decision tally advances by the
	// decisions added since the last scrape), then one more (nothing new).
	var scrapes []time.Duration
	for range 2 {
		start := time.Now()
		if _, err := metricSample(client, srv.base, "orbit_decision_commit_batch_size_count"); err != nil {
			return "", err
		}
		scrapes = append(scrapes, time.Since(start))
	}
	commits1, _ := metricSample(client, srv.base, "orbit_decision_commit_batch_size_count")
	stopped = true
	if err := srv.stop(); err != nil {
		return "", err
	}
	svcDurable, err := durability(svcDir, off, pr.ids)
	if err != nil {
		return "", fmt.Errorf("orbit serve: %w", err)
	}

	coff, err := fileSize(JournalPath(cliDir))
	if err != nil {
		return "", err
	}
	e.Logf("serve: %d parallel `orbit decide --precedents 0` loops, %s", serveCLIProcs, serveLoadTime)
	cr, err := e.cliLoad(ctx, cliDir, serveCLIProcs, serveWarmup, serveLoadTime)
	if err != nil {
		return "", err
	}
	cliDurable, err := durability(cliDir, coff, cr.ids)
	if err != nil {
		return "", fmt.Errorf("orbit decide: %w", err)
	}

	t := Table{Header: []string{"load", "alone", "clients", "requests", "ok/s", "p50", "p90", "p99", "max", "errors", "server CPU"}}
	row := func(r loadRun, cpu string) {
		errs := strconv.Itoa(r.errors)
		if r.errors > 0 {
			errs = "**" + errs + "**"
		}
		if r.warmErrors > 0 {
			errs += fmt.Sprintf(" (+%d warm-up)", r.warmErrors)
		}
		q := func(p float64) string {
			if len(r.lat) == 0 {
				return "–"
			}
			return Dur(r.quantile(p))
		}
		alone := "–"
		if r.alone > 0 {
			alone = Dur(r.alone)
		}
		t.Add(r.name, alone, strconv.Itoa(r.clients), strconv.Itoa(r.requests), fmt.Sprintf("%.0f", r.rate()),
			q(0.5), q(0.9), q(0.99), q(1), errs, cpu)
	}
	cores := func(r loadRun) string {
		if r.cpu <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f cores", r.cpu.Seconds()/r.elapsed.Seconds())
	}
	for _, r := range runs {
		row(r, cores(r))
	}
	row(pr, cores(pr))
	row(cr, "(processes)")

	ratio := pr.rate() / cr.rate()
	rt := Table{Header: []string{"decisions per second", "value", "target", ""}}
	rt.Add(fmt.Sprintf("`orbit serve`, %d clients", servePostClients), fmt.Sprintf("%.0f", pr.rate()), "", "")
	rt.Add(fmt.Sprintf("%d parallel `orbit decide --precedents 0`", serveCLIProcs), fmt.Sprintf("%.0f", cr.rate()), "", "")
	rt.Add("service ÷ CLI", fmt.Sprintf("%.1f", ratio), fmt.Sprintf("≥ %.0f", serveVsCLITarget), met(ratio >= serveVsCLITarget))
	errs := sumErrors(append(append(runs, pr), cr))
	rt.Add("errors (every run, warm-ups included)", strconv.Itoa(errs), "0", met(errs == 0))

	var b strings.Builder
	fmt.Fprintf(&b, "`orbit serve` under load on loopback, on a copy of the %s-decision project (%d decisions indexed, %d stale). The real binary is started with `orbit serve --addr 127.0.0.1:0` (ready %s after exec: it syncs and opens its read pool); a Go load generator in the harness (keep-alive connections, one per client) drives each endpoint for %s after %s untimed, each client sending its next request when the previous answer is read (a request still running at the end is waited for, and counted). Latency is from sending the request to reading the whole body; *alone* is the median of %d requests sent one at a time before the load; ok/s counts the successes. Server CPU is the process's user + system time over the run's wall time. The generator and the server share the machine's cores.\n\n",
		L, trust.Decisions, stale, Dur(srv.started), serveLoadTime, serveWarmup, serveAlone)
	b.WriteString(t.String())
	b.WriteString("\n")
	mean := "–"
	if n := commits1 - commits0; n > 0 {
		mean = fmt.Sprintf("%.1f", float64(len(pr.ids))/n)
	}
	fmt.Fprintf(&b, "The reads are the dashboard's own calls. `POST /api/v1/decisions` records the hook suite's decision (`%s`); the service groups the decisions that arrive together into one journal append, one fsync and one sync (group commit: %s decisions per commit on average here) and answers each only once its line is durable and indexed. The CLI row is %d loops, each running `orbit %s --precedents 0` through `sh -c` one after another, on a second copy of the same project: every decision is its own process, append, fsync and sync. Both are durable in the same sense (the line is fsynced before the decision is acknowledged), and both were checked afterwards: every acknowledged id is in the journal exactly once and every appended line is a well-formed record.\n\n",
		servePostBody, mean, serveCLIProcs, decideArgs)
	b.WriteString(rt.String())
	b.WriteString("\n")
	fmt.Fprintf(&b, "Durability check, service: %s. CLI: %s.\n\n", svcDurable, cliDurable)
	fmt.Fprintf(&b, "A Prometheus scrape of `/metrics` on the idle server took %s right after the writes (the tally of decisions by tier, category and decision advances by the decisions added since the scrape before; it is counted in full once, when the server starts) and %s with nothing new.\n\n",
		Dur(scrapes[0]), Dur(scrapes[1]))
	var errNotes []string
	for _, r := range append(append(runs, pr), cr) {
		if r.errors+r.warmErrors > 0 {
			errNotes = append(errNotes, fmt.Sprintf("- %s: %d errors; the first: `%s`", r.name, r.errors+r.warmErrors, tail(r.firstErr, 300)))
		}
	}
	if len(errNotes) > 0 {
		b.WriteString("**Errors:**\n\n" + strings.Join(errNotes, "\n") + "\n\n")
	}
	return b.String(), nil
}

func sumErrors(runs []loadRun) int {
	n := 0
	for _, r := range runs {
		n += r.errors + r.warmErrors
	}
	return n
}
