//go:build reliability

package reliability

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// titles are what the parallel hooks decide about, so that precedent
// search has real work.
var titles = []string{
	"Add ESLint rule eqeqeq", "SQLite vs Postgres for state storage", "Rotate the signing key",
	"WebSocket vs polling for agent communication", "Migrate the build to Go 1.26", "Drop the legacy CSV exporter",
	"Cache precedent queries", "Split the monolith's billing module", "Enable HTTP/2 on the gateway",
	"Pin the container base image", "Add retries to the deploy script", "Rename the config keys",
}

var categories = []string{"feature", "architecture", "quality", "scope", "deploy"}

// parallelHooks runs 16 processes x 500 `orbit decide` (default flags) on one
// project, with `orbit retro`, `orbit sync`, `orbit trust` and `orbit
// precedent` running at the same time. Afterwards every acknowledged id is in
// the journal and the index exactly once, every line is well-formed JSON on
// its own line, verify is clean, index counts equal journal counts, and no
// call printed an error.
func parallelHooks(t *testing.T) {
	procs, calls := 16, scaled(500, 5)
	r := newRow(t, "1", "Parallel hooks",
		fmt.Sprintf("%d processes x %d `orbit decide` (default flags) on one new project, with `orbit retro`, `orbit sync`, `orbit trust` and `orbit precedent` running at the same time", procs, calls))
	p := newProject(t, t.TempDir())

	var (
		mu       sync.Mutex
		acked    []string
		failures []string
		retros   = map[string]int{} // evidence -> count of acknowledged retros
		counts   = map[string]*atomic.Int64{}
	)
	for _, c := range []string{"decide", "retro", "sync", "trust", "precedent"} {
		counts[c] = new(atomic.Int64)
	}
	bad := func(res result, why string) {
		mu.Lock()
		failures = append(failures, why+": "+res.String())
		mu.Unlock()
	}
	// clean: exit 0 and nothing on stderr (no "database is locked", no
	// warning, nothing).
	clean := func(res result) bool {
		if res.Code != 0 || res.Stderr != "" {
			bad(res, "a call failed or printed an error")
			return false
		}
		return true
	}

	start := time.Now()
	var writers sync.WaitGroup
	done := make(chan struct{})
	for w := 0; w < procs; w++ {
		writers.Add(1)
		go func(w int) {
			defer writers.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; i < calls; i++ {
				title := fmt.Sprintf("%s (hook %d, call %d)", titles[rng.IntN(len(titles))], w, i)
				res := p.run("decide", "--title", title, "--category", categories[rng.IntN(len(categories))], "--impact", "low", "--reversible")
				counts["decide"].Add(1)
				if !clean(res) {
					continue
				}
				id := ackedID(res)
				if id == "" {
					bad(res, "decide exited 0 without acknowledging an id")
					continue
				}
				mu.Lock()
				acked = append(acked, id)
				if n := len(acked); n%2000 == 0 {
					t.Logf("%d decisions acknowledged in %s", n, time.Since(start).Round(time.Second))
				}
				mu.Unlock()
			}
		}(w)
	}
	var readers sync.WaitGroup
	reader := func(name string, call func(rng *rand.Rand, n int) result) {
		readers.Add(1)
		go func() {
			defer readers.Done()
			rng := rand.New(rand.NewPCG(uint64(len(name)), 2))
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				res := call(rng, n)
				if res.Args != nil {
					counts[name].Add(1)
					clean(res)
				}
				// Readers come and go like a person or another agent
				// asking: often, without taking the machine from the hooks.
				time.Sleep(time.Duration(50+rng.IntN(100)) * time.Millisecond)
			}
		}()
	}
	reader("retro", func(rng *rand.Rand, n int) result {
		mu.Lock()
		if len(acked) == 0 {
			mu.Unlock()
			return result{}
		}
		id := acked[rng.IntN(len(acked))]
		mu.Unlock()
		outcome := []string{"CORRECT", "CORRECT", "CORRECT", "INCORRECT"}[rng.IntN(4)]
		evidence := fmt.Sprintf("parallel check %d", n)
		res := p.run("retro", id, outcome, "--evidence", evidence)
		if res.Code == 0 && strings.Contains(res.Stdout, id+": recorded "+outcome) {
			mu.Lock()
			retros[evidence]++
			mu.Unlock()
		} else if res.Code == 0 {
			bad(res, "retro exited 0 without acknowledging the outcome")
		}
		return res
	})
	reader("sync", func(*rand.Rand, int) result { return p.run("sync") })
	reader("trust", func(*rand.Rand, int) result {
		res := p.run("trust", "--json")
		if res.Code == 0 && !json.Valid([]byte(res.Stdout)) {
			bad(res, "trust --json printed invalid JSON")
		}
		return res
	})
	reader("precedent", func(rng *rand.Rand, _ int) result {
		res := p.run("precedent", titles[rng.IntN(len(titles))], "--json")
		if res.Code == 0 && !json.Valid([]byte(res.Stdout)) {
			bad(res, "precedent --json printed invalid JSON")
		}
		return res
	})
	writers.Wait()
	close(done)
	readers.Wait()
	took := time.Since(start)

	want := procs * calls
	r.Times = fmt.Sprintf("%d decide, %d retro, %d sync, %d trust, %d precedent calls", counts["decide"].Load(), counts["retro"].Load(),
		counts["sync"].Load(), counts["trust"].Load(), counts["precedent"].Load())
	nRetro := 0
	for _, n := range retros {
		nRetro += n
	}
	r.Kept = fmt.Sprintf("%d acknowledged decisions, %d acknowledged outcomes", len(acked), nRetro)
	r.note("%d calls in %s (%.0f decide calls/s), every one checked for exit 0 and an empty stderr", counts["decide"].Load()+counts["retro"].Load()+counts["sync"].Load()+counts["trust"].Load()+counts["precedent"].Load(),
		took.Round(time.Second), float64(want)/took.Seconds())
	if len(failures) > 0 {
		r.fail(t, "%d of the calls failed or printed something on stderr; the first of each kind:", len(failures))
		seen := map[string]bool{}
		for _, f := range failures {
			kind := f
			if i := strings.Index(f, "stderr: "); i >= 0 {
				kind = strings.Map(func(r rune) rune {
					if r >= '0' && r <= '9' {
						return '#'
					}
					return r
				}, f[i:])
			}
			if !seen[kind] && len(seen) < 5 {
				seen[kind] = true
				r.fail(t, "%s", f)
			}
		}
	}
	if len(acked) != want {
		r.fail(t, "%d of %d decide calls acknowledged a decision", len(acked), want)
	}

	// The journal: one well-formed JSON record per line, every id once,
	// every acknowledged id present.
	lines, err := readLines(p.path(decisionsFile))
	if err != nil {
		t.Fatal(err)
	}
	inJournal := map[string]int{}
	malformed := 0
	for _, l := range lines {
		var rec record
		if !l.Terminated || !json.Valid([]byte(l.Text)) || json.Unmarshal([]byte(l.Text), &rec) != nil || rec.ID == "" {
			malformed++
			if malformed == 1 {
				r.fail(t, "%s:%d is not a whole JSON record on its own line: %q", decisionsFile, l.N, excerpt(l.Text, 200))
			}
			continue
		}
		inJournal[rec.ID]++
	}
	dups := 0
	for id, n := range inJournal {
		if n > 1 {
			dups++
			if dups == 1 {
				r.fail(t, "id %s is in the journal %d times", id, n)
			}
		}
	}
	lost := 0
	logged, err := p.loggedIDs()
	if err != nil {
		r.fail(t, "%v", err)
	}
	for _, id := range acked {
		if inJournal[id] == 0 || (logged != nil && logged[id].ID == "") {
			lost++
			if lost == 1 {
				r.fail(t, "acknowledged decision %s is missing (journal: %d, index: %v)", id, inJournal[id], logged[id].ID != "")
			}
		}
	}
	r.Lost = lost
	r.note("journal: %d lines, %d unique ids, %d malformed lines, %d duplicated ids", len(lines), len(inJournal), malformed, dups)
	if len(inJournal) != want {
		r.fail(t, "%d unique ids in the journal; want %d", len(inJournal), want)
	}

	// The outcome journal: well-formed, every acknowledged outcome present.
	rlines, err := readLines(p.path(retroFile))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, l := range rlines {
		var rec record
		if !l.Terminated || json.Unmarshal([]byte(l.Text), &rec) != nil || rec.DecisionID == "" {
			r.fail(t, "%s:%d is not a whole JSON record on its own line: %q", retroFile, l.N, excerpt(l.Text, 200))
			continue
		}
		seen[rec.Evidence]++
	}
	for ev, n := range retros {
		if seen[ev] < n {
			r.Lost++
			r.fail(t, "acknowledged outcome %q is missing from %s", ev, retroFile)
		}
	}

	// The index agrees with the journal, and verify is clean.
	counts2, err := p.indexCounts()
	if err != nil {
		r.fail(t, "%v", err)
	} else {
		r.note("index: %d decisions, %d outcome events, %d rejected lines, %d warnings; journal: %d decision lines, %d outcome lines",
			counts2.Decisions, counts2.Events, counts2.Rejected, counts2.Warnings, len(lines), len(rlines))
		if counts2.Decisions != len(lines) || counts2.Events != len(rlines) || counts2.Rejected != 0 || counts2.Warnings != 0 {
			r.fail(t, "index counts %+v; want %d decisions and %d outcome events, nothing rejected", counts2, len(lines), len(rlines))
		}
	}
	if logged != nil && len(logged) != len(inJournal) {
		r.fail(t, "orbit log lists %d decisions; the journal holds %d", len(logged), len(inJournal))
	}
	v, vres, err := p.verify()
	switch {
	case err != nil:
		r.fail(t, "%v", err)
	case vres.Code != 0 || !v.OK || len(v.Findings) > 0:
		r.fail(t, "orbit verify is not clean: %s", vres)
	default:
		r.note("`orbit verify`: exit 0, no findings")
	}
}
