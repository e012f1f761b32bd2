//go:build reliability

package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/internal/tooltest"
	"github.com/orbit-loop/orbit/journal"
	orbitproject "github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/synth"
	"github.com/orbit-loop/orbit/trust"
)

// fleetAdmin is the hubs' admin token in this attack.
const fleetAdmin = "fleet-admin-0123456789abcdef0123456789abcdef"

// hubProc is one `orbit serve --store postgres://…` process.
type hubProc struct {
	name string // its connections' application_name
	cmd  *exec.Cmd
	url  string
	logs *bytes.Buffer
	mu   sync.Mutex
}

// startHub starts a hub process on a free loopback port and waits for the
// address it prints.
func startHub(t *testing.T, store, name string) *hubProc {
	t.Helper()
	h := &hubProc{logs: &bytes.Buffer{}, name: name}
	u, err := url.Parse(store)
	if err != nil {
		t.Fatal(err)
	}
	// Its connections name it, so that the test can see its transactions.
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	h.cmd = exec.Command(orbitBin, "serve", "--store", u.String(), "--addr", "127.0.0.1:0", "--conns", "8")
	h.cmd.Env = append(envWithout(), "ORBIT_TOKEN="+fleetAdmin)
	stderr, err := h.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			h.mu.Lock()
			h.logs.WriteString(line + "\n")
			h.mu.Unlock()
			if _, rest, ok := strings.Cut(line, " on http://"); ok {
				select {
				case addr <- "http://" + strings.TrimSuffix(rest, "/"):
				default:
				}
			}
		}
	}()
	select {
	case h.url = <-addr:
	case <-time.After(60 * time.Second):
		h.cmd.Process.Kill()
		t.Fatalf("hub did not start: %s", h.logs)
	}
	t.Cleanup(func() { h.stop() })
	return h
}

func (h *hubProc) stop() {
	if h.cmd.ProcessState == nil {
		h.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { h.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			h.cmd.Process.Kill()
			<-done
		}
	}
}

// kill ends the hub with SIGKILL, as a crash would, at a moment PostgreSQL
// shows one of its connections inside a transaction (a batch being stored),
// waiting up to a minute for one; it returns how many were open.
func (h *hubProc) kill(ctx context.Context, s *hub.Store) int {
	open := 0
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if err := s.DB.GetContext(ctx, &open, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND xact_start IS NOT NULL AND state <> 'idle'`, h.name); err == nil && open > 0 {
			break
		}
	}
	h.cmd.Process.Kill()
	h.cmd.Wait()
	return open
}

// fleetProject is a project of the fleet, with the journal lines still to
// be appended while it is pushed.
type fleetProject struct {
	*project
	id    string
	token string
	rest  []string // decision lines not yet in the journal
	ids   []string // decision ids written so far
}

// fleet runs 20 projects pushing concurrently to two hub processes on one
// PostgreSQL database while their journals grow and 8 clients read; the
// pushers are SIGKILLed at random moments (mid-batch: each push carries
// many small batches) and one hub process is SIGKILLed mid-push and
// restarted. Afterwards every chunk of every journal is in the hub exactly
// once, byte for byte, and each project's trust report on the hub equals
// its local `orbit trust`.
func fleet(t *testing.T) {
	r := newRow(t, "7", "Fleet: pushes killed, a hub killed",
		"20 projects growing their journals and pushing (`orbit push`, batches of 4 KiB) to two `orbit serve --store postgres://…` processes on one database, 8 clients reading the API meanwhile; pushers SIGKILLed after a random delay, one hub SIGKILLed mid-push and restarted")
	store := tooltest.Postgres(t)
	hubs := []*hubProc{startHub(t, store, "orbit-hub-0"), startHub(t, store, "orbit-hub-1")}
	const nProjects = 20
	targetKills := scaled(200, 10)
	ctx := context.Background()
	hstore, err := hub.Open(ctx, store, hub.Options{Conns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer hstore.Close()

	var projects []*fleetProject
	for i := 0; i < nProjects; i++ {
		p := newProject(t, t.TempDir())
		p.must("init")
		pr, _ := projectOf(p)
		id, err := pr.ReadIdentity()
		if err != nil {
			t.Fatal(err)
		}
		tok := strings.TrimSpace(p.must("serve", "token", "create", "--store", store, "--project", id.ID, "--scope", "push").Stdout)
		var b bytes.Buffer
		if err := synth.Generate(&b, synth.Options{Decisions: 6000, Seed: uint64(100 + i)}); err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(b.String(), "\n")
		lines = lines[:len(lines)-1] // after the last newline: nothing
		fp := &fleetProject{project: p, id: id.ID, token: tok, rest: lines[600:]}
		fp.write(decisionsFile, strings.Join(lines[:600], ""))
		fp.write(".claude/orbit-loop-events.jsonl", fmt.Sprintf(`{"ts":"2026-06-01T09:00:00Z","framework":"citadel","loop":"docs-%d","event":"seen","status":"running"}`+"\n", i))
		fp.write(".claude/orbit-knowledge.jsonl", `{"ts":"2026-06-01T09:00:00Z","event":"hit","file":"conductor/knowledge/errors.json","id":"err-001"}`+"\n")
		for _, l := range lines[:600] {
			fp.ids = append(fp.ids, recordID(l))
		}
		for j, h := range hubs {
			p.must("remote", "add", fmt.Sprintf("h%d", j), h.url)
		}
		projects = append(projects, fp)
	}

	// 8 readers over both hubs with a fleet read token, for the whole run.
	fleetTok := strings.TrimSpace(projects[0].must("serve", "token", "create", "--store", store, "--project", "*", "--scope", "read").Stdout)
	stop := make(chan struct{})
	var readers sync.WaitGroup
	var reads, readErrs atomic.Int64
	var readFail sync.Map
	var hubMu sync.RWMutex // guards hubs[i].url while a hub restarts
	paths := []string{"/api/v1/projects", "/api/v1/decisions?project=*&limit=50", "/api/v1/trust?project=*",
		"/api/v1/stale?project=*&limit=20", "/api/v1/precedent?project=*&q=deploy+billing+rollback", "/api/v1/loops?project=*"}
	for i := 0; i < 8; i++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			client := &http.Client{Timeout: 30 * time.Second}
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				hubMu.RLock()
				base := hubs[(i+n)%2].url
				hubMu.RUnlock()
				path := paths[(i+n)%len(paths)]
				req, _ := http.NewRequest(http.MethodGet, base+path, nil)
				req.Header.Set("Authorization", "Bearer "+fleetTok)
				resp, err := client.Do(req)
				reads.Add(1)
				if err != nil {
					// A hub being restarted does not answer: not an error
					// of what it says.
					time.Sleep(20 * time.Millisecond)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					readErrs.Add(1)
					readFail.Store(fmt.Sprintf("GET %s: %d", path, resp.StatusCode), true)
				}
			}
		}()
	}

	// Pushers: one per project, each growing its journals and pushing to
	// one hub then the other, killed after a random delay until enough
	// kills have landed.
	var kills, pushes, pushErrs, ok atomic.Int64
	var hubKilled atomic.Bool
	var openAtKill atomic.Int64
	var pushers sync.WaitGroup
	var failMu sync.Mutex
	var unexpected []string
	for i, fp := range projects {
		pushers.Add(1)
		go func() {
			defer pushers.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 77))
			// Every fourth push runs to its end: how long it took bounds
			// the delay of the kills that follow, so that they land within
			// a push (most mid-batch) however loaded the machine is.
			last := time.Second
			for n := 0; kills.Load() < int64(targetKills); n++ {
				fp.grow(rng)
				whole := n%4 == 0
				start := time.Now()
				res, killed := fp.pushKilled(fmt.Sprintf("h%d", (i+n)%2), fp.token, rng, last, whole)
				pushes.Add(1)
				switch {
				case killed:
					kills.Add(1)
				case res.Code == 0:
					ok.Add(1)
					if whole {
						last = time.Since(start)
					}
				default:
					pushErrs.Add(1)
					// A push to the hub being killed fails to reach it;
					// anything else is unexpected.
					if !strings.Contains(res.Stderr, "connection refused") && !strings.Contains(res.Stderr, "EOF") &&
						!strings.Contains(res.Stderr, "connection reset") && !strings.Contains(res.Stderr, "no remote") {
						failMu.Lock()
						unexpected = append(unexpected, excerpt(res.String(), 300))
						failMu.Unlock()
					}
				}
				if i == 0 && !hubKilled.Load() && kills.Load() >= int64(targetKills)/2 {
					// Kill hub 0 while the others push to it, then restart it
					// and point every project's remote at the new one.
					hubKilled.Store(true)
					openAtKill.Store(int64(hubs[0].kill(ctx, hstore)))
					time.Sleep(500 * time.Millisecond)
					nh := startHub(t, store, "orbit-hub-0-restarted")
					hubMu.Lock()
					hubs[0] = nh
					hubMu.Unlock()
					for _, q := range projects {
						q.must("remote", "remove", "h0")
						q.must("remote", "add", "h0", nh.url)
					}
				}
			}
		}()
	}
	pushers.Wait()
	close(stop)
	readers.Wait()
	// What the killed pushes had acknowledged before the final pushes.
	var acked int64
	if err := hstore.DB.GetContext(ctx, &acked, `SELECT coalesce(sum(acked_offset), 0) FROM hub_files`); err != nil {
		t.Fatal(err)
	}

	// Then every project pushes what remains, to each hub in turn.
	for _, fp := range projects {
		for _, rest := range [][]string{fp.rest} {
			if len(rest) > 0 {
				fp.appendRaw(strings.Join(rest, ""))
				fp.rest = nil
			}
		}
		for j := range hubs {
			res := fp.runWith(runOpts{env: []string{"ORBIT_TOKEN=" + fp.token}}, "push", fmt.Sprintf("h%d", j))
			if res.Code != 0 {
				r.fail(t, "final push of %s to h%d: %s", fp.id, j, res)
			}
		}
	}

	// Every chunk of every journal exactly once, byte for byte; trust on
	// the hub equal to the local one.
	chunks, lost := 0, 0
	for _, fp := range projects {
		for _, j := range hub.Journals {
			n, err := sameChunks(ctx, hstore, fp, j)
			chunks += n
			if err != nil {
				lost++
				r.fail(t, "%s %s: %v", fp.id, j.Kind, err)
			}
		}
		local := fp.must("trust", "--json")
		var want trust.Report
		if err := json.Unmarshal([]byte(local.Stdout), &want); err != nil {
			t.Fatal(err)
		}
		var got trust.Report
		if err := getJSON(hubs[1].url+"/api/v1/trust?project="+url.QueryEscape(fp.id), fleetAdmin, &got); err != nil {
			r.fail(t, "trust of %s on the hub: %v", fp.id, err)
			continue
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if !bytes.Equal(gj, wj) {
			lost++
			r.fail(t, "trust of %s on the hub differs from orbit trust:\nhub:   %s\nlocal: %s", fp.id, gj, wj)
		}
	}
	if n := readErrs.Load(); n > 0 {
		var fails []string
		readFail.Range(func(k, _ any) bool { fails = append(fails, k.(string)); return true })
		r.fail(t, "%d of %d reads failed: %s", n, reads.Load(), strings.Join(fails, "; "))
	}
	for _, u := range unexpected {
		r.fail(t, "a push failed unexpectedly: %s", u)
	}
	if !hubKilled.Load() {
		r.fail(t, "the hub was never killed")
	} else if openAtKill.Load() == 0 {
		r.fail(t, "the hub was killed with no transaction open: not mid-batch")
	}
	r.Times = fmt.Sprintf("%d pushes, %d SIGKILLed, 1 hub SIGKILLed; %d reads", pushes.Load(), kills.Load(), reads.Load())
	r.Kept = fmt.Sprintf("%d chunks of %d journals byte for byte, once each; trust of %d projects equal to `orbit trust`", chunks, nProjects*len(hub.Journals), nProjects)
	r.Lost = lost
	t.Logf("%s; %s", r.Times, r.Kept)
	r.note("Fleet: %d pushes completed, %d killed (their acknowledged batches held %d bytes before the final pushes), %d failed to reach a hub being killed or restarted (killed with %d of its transactions open); %d reads, %d errors.",
		ok.Load(), kills.Load(), acked, pushErrs.Load(), openAtKill.Load(), reads.Load(), readErrs.Load())
	t.Log(r.Notes[len(r.Notes)-1])
}

// projectOf is the project package's view of a test project.
func projectOf(p *project) (orbitproject.Project, error) { return orbitproject.New(p.Root, "") }

func (p *project) write(rel, text string) {
	if err := os.WriteFile(p.path(rel), []byte(text), 0o644); err != nil {
		p.tb.Fatal(err)
	}
}

// appendRaw appends to the decision journal in one write, as `echo >>` does.
func (p *project) appendRaw(text string) {
	f, err := os.OpenFile(p.path(decisionsFile), os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		p.tb.Fatal(err)
	}
}

func recordID(line string) string {
	var r struct {
		ID string `json:"id"`
	}
	json.Unmarshal([]byte(line), &r)
	return r.ID
}

// grow appends a few decision lines (sometimes the first half of a line,
// completed at the next call: a write in progress), an outcome line, and
// now and then a loop event and a knowledge hit.
func (fp *fleetProject) grow(rng *rand.Rand) {
	n := min(len(fp.rest), 20+rng.IntN(100))
	if n == 0 {
		return
	}
	text := strings.Join(fp.rest[:n], "")
	for _, l := range fp.rest[:n] {
		fp.ids = append(fp.ids, recordID(l))
	}
	fp.rest = fp.rest[n:]
	if rng.IntN(4) == 0 && len(fp.rest) > 0 {
		// Half a line now, the rest with the next lines.
		half := len(fp.rest[0]) / 2
		text += fp.rest[0][:half]
		fp.rest[0] = fp.rest[0][half:]
	}
	fp.appendRaw(text)
	outcome := "CORRECT"
	if rng.IntN(5) == 0 {
		outcome = "INCORRECT"
	}
	appendFile(fp.project, retroFile, fmt.Sprintf(`{"ts":"2026-06-02T%02d:%02d:00Z","decision_id":%q,"outcome":%q,"evidence":"fleet"}`+"\n",
		rng.IntN(24), rng.IntN(60), fp.ids[rng.IntN(len(fp.ids))], outcome))
	if rng.IntN(3) == 0 {
		appendFile(fp.project, ".claude/orbit-loop-events.jsonl", `{"ts":"2026-06-02T10:00:00Z","framework":"citadel","loop":"docs","event":"attempt","detail":"lint"}`+"\n")
		appendFile(fp.project, ".claude/orbit-knowledge.jsonl", `{"ts":"2026-06-02T10:00:00Z","event":"hit","file":"conductor/knowledge/errors.json","id":"err-002"}`+"\n")
	}
}

func appendFile(p *project, rel, text string) {
	f, err := os.OpenFile(p.path(rel), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		p.tb.Fatal(err)
	}
	defer f.Close()
	f.WriteString(text)
}

// pushKilled pushes to a remote and, unless whole, SIGKILLs the push after
// a random delay up to 1.2 times typical (most land mid-batch: batches are
// 4 KiB, about ten lines, and each push ships tens of them).
func (fp *fleetProject) pushKilled(remote, token string, rng *rand.Rand, typical time.Duration, whole bool) (result, bool) {
	delay := time.Duration(rng.Int64N(int64(typical)*6/5)) + 5*time.Millisecond
	var timer *time.Timer
	res := fp.runWith(runOpts{env: []string{"ORBIT_TOKEN=" + token}, started: func(p *os.Process) {
		if !whole {
			timer = time.AfterFunc(delay, func() { p.Signal(syscall.SIGKILL) })
		}
	}}, "push", remote, "--batch-bytes", "4096")
	if timer != nil {
		timer.Stop()
	}
	return res, res.Killed
}

// sameChunks checks that the hub holds the journal's chunks exactly once,
// contiguous from byte 0, byte for byte, and returns how many.
func sameChunks(ctx context.Context, s *hub.Store, fp *fleetProject, j hub.Journal) (int, error) {
	data, err := os.ReadFile(fp.path(j.Path))
	if errors.Is(err, os.ErrNotExist) {
		data = nil
	} else if err != nil {
		return 0, err
	}
	var rows []struct {
		Offset int64  `db:"byte_offset"`
		Text   []byte `db:"text"`
	}
	if err := s.DB.SelectContext(ctx, &rows, `SELECT byte_offset, text FROM hub_chunks WHERE project_id = $1 AND kind = $2 ORDER BY byte_offset`, fp.id, j.Kind); err != nil {
		return 0, err
	}
	var joined []byte
	for _, r := range rows {
		if r.Offset != int64(len(joined)) {
			return len(rows), fmt.Errorf("the chunk at byte %d follows %d bytes: a gap or an overlap", r.Offset, len(joined))
		}
		joined = append(joined, r.Text...)
	}
	if !bytes.Equal(joined, data) {
		at := 0
		for at < len(joined) && at < len(data) && joined[at] == data[at] {
			at++
		}
		return len(rows), fmt.Errorf("the hub holds %d bytes that are not the file's %d (first difference at byte %d: file %q, hub %q)",
			len(joined), len(data), at, excerpt(string(data[at:]), 120), excerpt(string(joined[at:]), 120))
	}
	want := 0
	rd := journal.NewReader(bytes.NewReader(data), j.Path, 0, 0)
	for {
		c, err := rd.Next()
		if err != nil {
			break
		}
		if c.Kind != journal.Pending {
			want++
		}
	}
	if len(rows) != want {
		return len(rows), fmt.Errorf("the hub holds %d chunks; the file has %d", len(rows), want)
	}
	return len(rows), nil
}

func getJSON(u, token string, v any) error {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%d: %s", resp.StatusCode, data)
	}
	return json.Unmarshal(data, v)
}
