package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/internal/tooltest"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/precedent"
	"github.com/orbit-loop/orbit/synth"
)

// The fleet suite's shape: the fleet is the largest size in decisions,
// spread over fleetProjects projects; each push client ships a project of
// fleetPushDecisions (at most the fleet's share of it); the dashboard's
// reads are driven by fleetReadClients for fleetReadTime each.
const (
	fleetProjects      = 100
	fleetPushClients   = 20
	fleetPushDecisions = 20000
	fleetLoadWorkers   = 4
	fleetReadClients   = 32
	fleetReadTime      = 5 * time.Second
	fleetAdminToken    = "fleet-bench-admin-0123456789abcdef0123456789"
	// fleetBatch is the batch size of the bulk load, as `orbit push`'s
	// default.
	fleetBatch = 1 << 20
)

// fleetReads are the dashboard's main reads of a hub, across projects.
var fleetReads = []struct{ name, path string }{
	{"project list", "/api/v1/projects"},
	{"decisions, newest 50", "/api/v1/decisions?project=*&limit=50"},
	{"trust across projects", "/api/v1/trust?project=*"},
	{"stale decisions", "/api/v1/stale?project=*&limit=20"},
	{"loops", "/api/v1/loops?project=*"},
}

// runFleet measures the hub: `orbit push` throughput of one client and of
// 20 at once into `orbit serve --store postgres://…`; the store's ingest
// ceiling (batches stored in process, no HTTP); precedent search across
// the fleet's projects on PostgreSQL beside the single-project SQLite
// search over as many decisions; and the dashboard's main reads under 32
// clients on PostgreSQL beside a SQLite hub holding the same projects.
func runFleet(ctx context.Context, e *Env) (string, error) {
	base := os.Getenv(tooltest.PostgresEnv)
	if base == "" {
		base = tooltest.DefaultPostgres
	}
	admin, err := sql.Open("pgx", base)
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err = admin.PingContext(pctx)
		cancel()
	}
	if err != nil {
		return fmt.Sprintf("**PostgreSQL does not answer at %s (%v), so this section was skipped.** Set %s to a server's URL (the suite creates and drops its own database) and run it again.",
			hub.Redact(base), err, tooltest.PostgresEnv), nil
	}
	defer admin.Close()
	pg, drop, err := benchDatabase(ctx, admin, base)
	if err != nil {
		return "", err
	}
	defer drop()

	total := e.Large()
	per := max(total/fleetProjects, 1)
	pushN := min(fleetPushDecisions, max(total/50, 1000))
	var b strings.Builder
	fmt.Fprintf(&b, "The hub on PostgreSQL %s (this machine's server, in a database the suite creates and drops), `orbit serve --store postgres://… --conns 16`.\n\n", pgVersion(ctx, admin))

	// 1. Push throughput, through the real binary and HTTP.
	hubp, err := e.startHub(pg)
	if err != nil {
		return "", err
	}
	src, err := e.Journal(pushN)
	if err != nil {
		return "", err
	}
	var projects []string
	for i := range 1 + fleetPushClients {
		dir, err := e.pushProject(ctx, src, hubp.base, i)
		if err != nil {
			hubp.stop()
			return "", err
		}
		projects = append(projects, dir)
	}
	e.Logf("fleet: one client pushing %s decisions", SizeLabel(pushN))
	c0 := hubp.cpu()
	one, err := e.timePushes(ctx, projects[:1])
	one.hubCPU = hubp.cpu() - c0
	if err != nil {
		hubp.stop()
		return "", err
	}
	e.Logf("fleet: %d clients pushing %s decisions each", fleetPushClients, SizeLabel(pushN))
	c0 = hubp.cpu()
	many, err := e.timePushes(ctx, projects[1:])
	many.hubCPU = hubp.cpu() - c0
	if err != nil {
		hubp.stop()
		return "", err
	}
	if err := hubp.stop(); err != nil {
		return "", err
	}
	t := &Table{Header: []string{"`orbit push` (batches of 1 MiB, every line a record)", "records", "wall", "records/s", "hub CPU"}}
	t.Add("1 client, 1 project", fmt.Sprint(one.records), Dur(one.wall), Rate(one.records, one.wall), Dur(one.hubCPU))
	t.Add(fmt.Sprintf("%d clients at once, a project each", len(projects)-1), fmt.Sprint(many.records), Dur(many.wall), Rate(many.records, many.wall), Dur(many.hubCPU))
	b.WriteString(t.String())
	fmt.Fprintf(&b, "\nEach project holds a synthetic journal of %s decisions (its outcomes in later lines), synced to its own index first so that the push's own sync reads nothing; a push is timed from the process's start to its exit, asking the hub's offsets, reading the file, and every batch stored in one transaction. The client processes, the hub and PostgreSQL share the machine's cores.\n\n", SizeLabel(pushN))

	// 2. The store's ingest ceiling: the fleet loaded in process, by
	// fleetLoadWorkers workers, with no HTTP and no client process.
	e.Logf("fleet: loading %s decisions in %d projects into PostgreSQL", SizeLabel(per*fleetProjects), fleetProjects)
	pgStore, err := hub.Open(ctx, pg, hub.Options{Conns: fleetLoadWorkers + 2})
	if err != nil {
		return "", err
	}
	defer pgStore.Close()
	jobs, err := fleetJournals(per)
	if err != nil {
		return "", err
	}
	pgLoad, err := loadFleet(ctx, pgStore, jobs)
	if err != nil {
		return "", err
	}
	// What autovacuum does soon after a table grew this much: the planner's
	// statistics.
	if _, err := pgStore.DB.ExecContext(ctx, "ANALYZE"); err != nil {
		return "", err
	}
	liteSpec := "sqlite:" + filepath.Join(e.Work, "fleet-hub.db")
	liteStore, err := hub.Open(ctx, liteSpec, hub.Options{})
	if err != nil {
		return "", err
	}
	defer liteStore.Close()
	e.Logf("fleet: loading the same into a SQLite hub")
	liteLoad, err := loadFleet(ctx, liteStore, jobs)
	jobs = nil
	if err != nil {
		return "", err
	}
	t = &Table{Header: []string{"store", "records", "wall", "records/s (ingest ceiling)", "workers"}}
	t.Add("PostgreSQL", fmt.Sprint(pgLoad.records), Dur(pgLoad.wall), Rate(pgLoad.records, pgLoad.wall), fmt.Sprint(fleetLoadWorkers))
	t.Add("SQLite (one writer)", fmt.Sprint(liteLoad.records), Dur(liteLoad.wall), Rate(liteLoad.records, liteLoad.wall), fmt.Sprint(fleetLoadWorkers))
	fmt.Fprintf(&b, "**Ingest ceiling.** %d projects of %s decisions each (%s in all, each project its own synthetic journal), stored by `hub.Store.Push` in batches of 1 MiB from %d workers in this process: the hub's own work per batch (parse, derive, insert, acknowledge) with no HTTP and no client (then `ANALYZE`, as autovacuum would).\n\n%s\n",
		fleetProjects, SizeLabel(per), SizeLabel(per*fleetProjects), fleetLoadWorkers, t.String())

	// 3. Precedent search across the fleet against the local search.
	qs, err := e.evalQueries()
	if err != nil {
		return "", err
	}
	journal0, err := e.Journal(total)
	if err != nil {
		return "", err
	}
	own, err := ownInputs(journal0, total, precedentOwnQueries)
	if err != nil {
		return "", err
	}
	qs = append(qs, own...)
	e.Logf("fleet: precedent across %d projects on PostgreSQL, %d queries x %d passes", fleetProjects, len(qs), precedentPasses)
	pgLat, err := hubSearchLatencies(ctx, pgStore, qs, precedentPasses)
	if err != nil {
		return "", err
	}
	liteLat, err := hubSearchLatencies(ctx, liteStore, qs, precedentPasses)
	if err != nil {
		return "", err
	}
	dir, err := e.Project(ctx, total)
	if err != nil {
		return "", err
	}
	localLat, err := searchLatencies(ctx, IndexPath(dir), qs, precedentPasses)
	if err != nil {
		return "", err
	}
	t = &Table{Header: []string{"precedent search (k = 3, in process)", "decisions searched", "p50", "p90", "p99", "max"}}
	for _, r := range []struct {
		name string
		lat  []latency
	}{
		{fmt.Sprintf("hub on PostgreSQL, `project=*` (%d projects)", fleetProjects), pgLat},
		{fmt.Sprintf("hub on SQLite, `project=*` (%d projects)", fleetProjects), liteLat},
		{"`orbit precedent`, one project's SQLite index", localLat},
	} {
		p50, p90, p99, mx, _ := percentiles(r.lat)
		n := per * fleetProjects
		if strings.HasPrefix(r.name, "`orbit") {
			n = total
		}
		t.Add(r.name, SizeLabel(n), Dur(p50), Dur(p90), Dur(p99), Dur(mx))
	}
	fmt.Fprintf(&b, "\n**Precedent across projects.** The evaluation queries of `testdata/precedent` and %d decisions' own inputs, %d timed passes after one untimed: `hub.Store.Precedent` over every project beside `precedent.Search` on one project's index of as many decisions (its journal is the same generator's, one seed).\n\n%s\n",
		len(own), precedentPasses, t.String())

	// 4. The dashboard's main reads under load, PostgreSQL against SQLite.
	t = &Table{Header: []string{fmt.Sprintf("read (%d clients, %s each)", fleetReadClients, fleetReadTime), "PostgreSQL req/s", "p50", "p99", "SQLite req/s", "p50", "p99"}}
	runs := map[string][]loadRun{}
	for _, st := range []struct{ name, spec string }{{"postgres", pg}, {"sqlite", liteSpec}} {
		if st.name == "sqlite" {
			// The SQLite hub has one writer: close this process's handle first.
			liteStore.Close()
		}
		h, err := e.startHub(st.spec)
		if err != nil {
			return "", err
		}
		client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}, Timeout: 2 * time.Minute}
		for _, rd := range fleetReads {
			e.Logf("fleet: %s %s under %d clients", st.name, rd.path, fleetReadClients)
			path := rd.path
			r, err := drive(ctx, client, h.base, fleetAdminToken, loadSpec{name: rd.name, method: "GET", path: func(int, int) string { return path },
				clients: fleetReadClients, status: http.StatusOK}, time.Second, fleetReadTime, h.cpu)
			if err != nil {
				h.stop()
				return "", err
			}
			if r.errors > 0 || len(r.lat) == 0 {
				h.stop()
				return "", fmt.Errorf("fleet reads on %s: %s: %d errors of %d: %s", st.name, rd.path, r.errors, r.requests, r.firstErr)
			}
			runs[st.name] = append(runs[st.name], r)
		}
		client.CloseIdleConnections()
		if err := h.stop(); err != nil {
			return "", err
		}
	}
	for i, rd := range fleetReads {
		p, s := runs["postgres"][i], runs["sqlite"][i]
		t.Add(fmt.Sprintf("`GET %s` (%s)", rd.path, rd.name), fmt.Sprintf("%.0f", p.rate()), Dur(p.quantile(0.5)), Dur(p.quantile(0.99)),
			fmt.Sprintf("%.0f", s.rate()), Dur(s.quantile(0.5)), Dur(s.quantile(0.99)))
	}
	fmt.Fprintf(&b, "\n**The dashboard's reads.** One `orbit serve --store …` process over the %s decisions above, %d clients each sending one read after another for %s (after 1 s untimed), a fleet read (the admin token, `project=*`); no errors.\n\n%s",
		SizeLabel(per*fleetProjects), fleetReadClients, fleetReadTime, t.String())
	quality, err := e.hubPrecedentQuality(ctx, base)
	if err != nil {
		return "", err
	}
	b.WriteString("\n" + quality)
	if per*fleetProjects < 1_000_000 {
		fmt.Fprintf(&b, "\nThis run measured a fleet of %s decisions (`-sizes` up to %s), not 1M: re-run with the default sizes for the full scale.\n", SizeLabel(per*fleetProjects), SizeLabel(total))
	}
	return b.String(), nil
}

// benchDatabase creates a database of its own on the server at base and
// returns its URL and how to drop it.
func benchDatabase(ctx context.Context, admin *sql.DB, base string) (string, func(), error) {
	buf := make([]byte, 6)
	rand.Read(buf)
	name := "orbit_bench_" + hex.EncodeToString(buf)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create the bench database on %s: %w", hub.Redact(base), err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() { admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") }, nil
}

func pgVersion(ctx context.Context, db *sql.DB) string {
	var v string
	if err := db.QueryRowContext(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "(version unknown)"
	}
	return strings.Fields(v)[0]
}

var hubURLLine = regexp.MustCompile(` on (http://[^/\s]+)/`)

// startHub runs `orbit serve --store spec` on a free loopback port, with
// the suite's admin token, and waits for its address.
func (e *Env) startHub(spec string) (*servedProcess, error) {
	cmd := e.OrbitCmd(e.Work, "serve", "--store", spec, "--addr", "127.0.0.1:0", "--conns", "16")
	cmd.Env = append(cmd.Env, "ORBIT_TOKEN="+fleetAdminToken)
	p, err := startServed(cmd, hubURLLine, 2*time.Minute)
	if err != nil {
		return nil, err
	}
	p.token = fleetAdminToken
	return p, nil
}

// pushProject makes a project holding the journal at src, its index synced
// and the hub at hubURL added as remote "hub".
func (e *Env) pushProject(ctx context.Context, src, hubURL string, i int) (string, error) {
	dir, err := e.NewProject(fmt.Sprintf("push-%d", i))
	if err != nil {
		return "", err
	}
	if err := CopyFile(JournalPath(dir), src); err != nil {
		return "", err
	}
	for _, args := range [][]string{{"log", "--limit", "1"}, {"remote", "add", "hub", hubURL}} {
		if _, err := Measure(e.OrbitCmd(dir, args...)); err != nil {
			return "", fmt.Errorf("orbit %s: %w", strings.Join(args, " "), err)
		}
	}
	return dir, nil
}

// pushRun is what a timed run of pushes shipped.
type pushRun struct {
	records int
	wall    time.Duration
	hubCPU  time.Duration
}

// timePushes runs `orbit push hub --json` in every project at once and
// times them from the first start to the last exit.
func (e *Env) timePushes(ctx context.Context, dirs []string) (pushRun, error) {
	var run pushRun
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr atomic.Value
	start := time.Now()
	for _, dir := range dirs {
		wg.Go(func() {
			cmd := e.OrbitCmd(dir, "push", "hub", "--json")
			cmd.Env = append(cmd.Env, "ORBIT_TOKEN="+fleetAdminToken)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				firstErr.CompareAndSwap(nil, fmt.Errorf("orbit push in %s: %w\n%s", dir, err, errb.String()))
				return
			}
			var rep struct {
				Files []struct {
					Chunks int    `json:"chunks"`
					Held   string `json:"held"`
				} `json:"files"`
			}
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				firstErr.CompareAndSwap(nil, fmt.Errorf("orbit push --json in %s: %w", dir, err))
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, f := range rep.Files {
				run.records += f.Chunks
			}
		})
	}
	wg.Wait()
	run.wall = time.Since(start)
	if err, _ := firstErr.Load().(error); err != nil {
		return run, err
	}
	return run, nil
}

// fleetJournal is one project of the fleet: its id and its decision
// journal's bytes.
type fleetJournal struct {
	id   string
	data []byte
}

// fleetJournals generates fleetProjects journals of per decisions each,
// project i's its own (seed 1000+i).
func fleetJournals(per int) ([]fleetJournal, error) {
	jobs := make([]fleetJournal, fleetProjects)
	for i := range jobs {
		var buf bytes.Buffer
		if err := synth.Generate(&buf, synth.Options{Decisions: per, Seed: uint64(1000 + i)}); err != nil {
			return nil, err
		}
		jobs[i] = fleetJournal{id: fmt.Sprintf("fleet%03d", i), data: buf.Bytes()}
	}
	return jobs, nil
}

// loadFleet stores the fleet's journals in s through Store.Push, by
// fleetLoadWorkers workers, and times it.
func loadFleet(ctx context.Context, s *hub.Store, jobs []fleetJournal) (pushRun, error) {
	type job = fleetJournal
	var run pushRun
	var records atomic.Int64
	var firstErr atomic.Value
	next := make(chan job)
	var wg sync.WaitGroup
	start := time.Now()
	for range fleetLoadWorkers {
		wg.Go(func() {
			for j := range next {
				n, err := pushAll(ctx, s, j.id, j.data)
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				records.Add(int64(n))
			}
		})
	}
	for _, j := range jobs {
		if firstErr.Load() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	run.wall = time.Since(start)
	run.records = int(records.Load())
	if err, _ := firstErr.Load().(error); err != nil {
		return run, err
	}
	return run, nil
}

// pushAll pushes a decision journal's bytes to s in batches of whole lines
// of about fleetBatch bytes, as `orbit push` does, and returns the chunks
// stored.
func pushAll(ctx context.Context, s *hub.Store, id string, data []byte) (int, error) {
	var off, lines int64
	chunks := 0
	for off < int64(len(data)) {
		end := min(off+fleetBatch, int64(len(data)))
		if end < int64(len(data)) {
			end = off + int64(bytes.LastIndexByte(data[off:end], '\n')) + 1
		}
		batch := data[off:end]
		res, err := s.Push(ctx, hub.Access{Admin: true}, hub.Batch{Project: id, Name: id, Kind: journal.KindDecisions, Offset: off, Lines: lines,
			TailHash: hub.TailHash(data[:off]), Data: batch}, time.Now())
		if err != nil {
			return chunks, fmt.Errorf("load %s at byte %d: %w", id, off, err)
		}
		chunks += res.Chunks
		off, lines = res.State.Offset, res.State.Lines
	}
	return chunks, nil
}

// hubSearchLatencies times Store.Precedent across every project in
// process, as searchLatencies times the local search.
func hubSearchLatencies(ctx context.Context, s *hub.Store, qs []evalQuery, passes int) ([]latency, error) {
	var out []latency
	for pass := range 1 + passes {
		for _, q := range qs {
			start := time.Now()
			hits, err := s.Precedent(ctx, hub.AllProjects, q.Query, precedent.Options{K: 3, Category: q.Category})
			d := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("hub precedent %q: %w", q.Query, err)
			}
			if pass > 0 {
				out = append(out, latency{kind: q.Kind, d: d, hits: len(hits)})
			}
		}
	}
	return out, nil
}

// hubPrecedentQuality runs the hub's precedent evaluation (the hub on
// PostgreSQL and on SQLite beside the local search) and returns its table.
func (e *Env) hubPrecedentQuality(ctx context.Context, pg string) (string, error) {
	if e.GoTool == "" || e.Root == "" {
		return "", fmt.Errorf("the fleet suite needs the go tool and the module's root (Env.GoTool, Env.Root) for the quality table")
	}
	d, err := e.Dir("hub-eval")
	if err != nil {
		return "", err
	}
	out := filepath.Join(d, "eval.md")
	e.Logf("fleet: precedent quality on the hub (go test ./hub -run TestEvalPrecedentOnHub)")
	cmd := exec.CommandContext(ctx, e.GoTool, "test", "./hub", "-run", "^TestEvalPrecedentOnHub$", "-count=1", "-args", "-eval-out", out)
	cmd.Dir = e.Root
	cmd.Env = append(os.Environ(), tooltest.PostgresEnv+"="+pg, "ORBIT_REQUIRE_TOOLS=1")
	if o, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go test ./hub -run TestEvalPrecedentOnHub: %w\n%s", err, tail(string(o), 3000))
	}
	table, err := os.ReadFile(out)
	if err != nil {
		return "", err
	}
	return "**Precedent quality on the hub.** Recall@3 and MRR on `testdata/precedent` (the corpus and metrics of the precedent section's quality table), the journal pushed as it grows so that a query asked as of a line sees only the lines before it: the local search beside the hub on PostgreSQL and on SQLite, all three ranked by the same code (precedent.Score: bm25 in Go over the newest 500 holders of each query word, which the hub finds with its GIN index on PostgreSQL and its FTS5 index on SQLite; PostgreSQL's english stemmer and stopwords find a slightly different pool than FTS5's porter tokenizer). The test holds both hubs to recall@3 ≥ 0.8.\n\n" +
		strings.TrimSpace(string(table)) + "\n\nReproduce: `go test ./hub -run TestEvalPrecedentOnHub -count=1 -v -args -eval-out eval.md`.\n", nil
}
