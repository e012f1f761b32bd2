package hook_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/hook"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/synth"
)

// The Stop hook runs at every iteration of a loop: what it reads of the
// index must not grow with the journal. This guard counts the index pages
// one Stop fetches (SQLite's page cache hits and misses on the hook's
// connection, sqlite3_db_status) after the index is synced, on projects
// of the bench's shape (a synthetic journal, the loop active at its last
// iteration, four requests queued (seed 000's example queue)) with 5 times more history, and fails
// when the count grows with it. A query that scans a table, or walks an
// unbounded range of an index (the session summary once counted every
// decision dated after the loop's start: 1.7 s of a Stop at 1M
// decisions), fetches pages in proportion to the history; lookups through
// an index fetch about as many at any size (a B-tree one level deeper at
// most). Counting pages, not time, keeps the test deterministic.
func TestStopReadsDoNotGrowWithTheJournal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two indexes of thousands of decisions")
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, shape := range []struct {
		name string
		// start is the history's first decision (synth spaces decisions
		// about a minute apart).
		start time.Time
	}{
		{"history before the loop", now.AddDate(0, -2, 0)},
		{"history dated after the loop's start", now.Add(-time.Hour)},
	} {
		t.Run(shape.name, func(t *testing.T) {
			small := stopPages(t, 2000, shape.start, now)
			large := stopPages(t, 10000, shape.start, now)
			t.Logf("pages fetched by one Stop: %d with 2000 decisions, %d with 10000", small, large)
			// 5 times the history: a scan fetches about 5 times the
			// pages; a deeper B-tree adds a page to some lookups. (With
			// fewer than 2000 decisions the stale count, capped at 1000,
			// still grows with the journal.)
			if limit := small + small/2; large > limit {
				t.Errorf("one Stop fetched %d index pages with 10000 decisions, %d with 2000 (limit %d): the hook path reads in proportion to the journal; find the query with EXPLAIN QUERY PLAN (a SCAN, or a range with no upper bound)", large, small, limit)
			}
		})
	}
}

// stopPages builds a project of n synthetic decisions starting at start,
// its loop active at the journal's last iteration (started now, 13
// iterations before its limit, four requests queued (seed 000's example queue)), and returns how
// many index pages one Stop fetched after the index was synced.
func stopPages(t *testing.T, n int, start, now time.Time) int {
	t.Helper()
	fx := &fixture{tb: t, root: t.TempDir()}
	if err := os.Mkdir(fx.path(".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	var j bytes.Buffer
	if err := synth.Generate(&j, synth.Options{Decisions: n, Seed: 20260308, Start: start}); err != nil {
		t.Fatal(err)
	}
	last := synth.Decisions(synth.Options{Decisions: n, Seed: 20260308, Start: start})[n-1].Iteration
	fx.write(project.DecisionsFile, j.String())
	queue, err := os.ReadFile(filepath.Join("..", "testdata", "hooks", "pending-4.json"))
	if err != nil {
		t.Fatal(err)
	}
	fx.write(project.PendingFile, string(queue))
	fx.write(project.StateFile, strings.NewReplacer(
		`"iteration": 5,`, `"iteration": `+fmt.Sprint(last)+`,`,
		`"max_iterations": 20,`, `"max_iterations": `+fmt.Sprint(last+13)+`,`,
		`"started_at": "2026-03-09T11:50:00Z"`, `"started_at": "`+now.Add(-10*time.Minute).Format(time.RFC3339)+`"`,
		`"last_stop_decisions": 6`, `"last_stop_decisions": `+fmt.Sprint(n),
	).Replace(state(5, 20)))

	var store *db.Store
	env := fx.env(now)
	open := env.Open
	env.Open = func(ctx context.Context, p project.Project) (*journal.Index, error) {
		ix, err := open(ctx, p)
		if err != nil {
			return nil, err
		}
		store = ix.Store
		// Syncing a new journal reads it all, once; what is counted is
		// the Stop's own reads.
		pageCounters(t, store, true)
		return ix, nil
	}
	r := hook.Stop(context.Background(), env, hook.Input{CWD: fx.root, HookEventName: "Stop", SessionID: "s1"})
	if r.Err != nil || r.Output.Decision != "block" || !strings.Contains(r.Output.Reason, "iteration "+fmt.Sprint(last+1)+" of") {
		t.Fatalf("the Stop did not go on to iteration %d: err %v, output %s", last+1, r.Err, r.Output.Bytes())
	}
	return pageCounters(t, store, false)
}

// pageCounters is the pages the store's connection fetched (page cache
// hits and misses) since the last reset; reset zeroes them.
func pageCounters(t *testing.T, s *db.Store, reset bool) int {
	t.Helper()
	conn, err := s.DB.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	total := 0
	err = conn.Raw(func(dc any) error {
		st, ok := dc.(sqlite.DBStatus)
		if !ok {
			t.Fatalf("the driver's connection %T has no sqlite3_db_status", dc)
		}
		for _, op := range []sqlite.DBStatusOp{sqlite.DBStatusCacheHit, sqlite.DBStatusCacheMiss} {
			cur, _, err := st.Status(op, reset)
			if err != nil {
				return err
			}
			total += cur
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}
