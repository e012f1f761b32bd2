//go:build reliability

package reliability

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/internal/projecttest"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/synth"
)

// indexCase damages a copy of a synced project's index.
type indexCase struct {
	name string
	// damage breaks the index of p; crash is a copy of the index files as
	// a crash left them after more decisions were synced (see crashImage).
	damage func(t *testing.T, p *project, crash string)
	// grown: the journal holds the crash image's extra decisions, so the
	// answers are those of the grown journal.
	grown bool
}

// lostIndex deletes, truncates and overwrites the index, and leaves WAL
// files behind: the next command must rebuild from the journal, and every
// report must give the same answer as before.
func lostIndex(t *testing.T) {
	r := newRow(t, "3", "Lost or broken index",
		"delete the database, truncate it, overwrite it with garbage (whole, header, pages in the middle), garbage or stale -wal/-shm files, a crash's WAL, kill -9 during the rebuild; then log, trust and export")
	base := newProject(t, t.TempDir())
	writeJournal(t, base, 2000, 60, 3)
	base.must("sync")
	want, _, err := base.answers()
	if err != nil {
		t.Fatal(err)
	}
	crash, grownJournal := crashImage(t, base)

	size := func(p *project) int64 {
		fi, err := os.Stat(p.path(indexFile))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	overwrite := func(p *project, off int64, data []byte) {
		f, err := os.OpenFile(p.path(indexFile), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(data, off); err != nil {
			t.Fatal(err)
		}
	}
	garbage := func(n int64) []byte {
		b := make([]byte, n)
		rand.Read(b)
		return b
	}
	remove := func(p *project, names ...string) {
		for _, n := range names {
			if err := os.Remove(p.path(n)); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
	}
	putCrash := func(p *project, names ...string) {
		for _, n := range names {
			if err := copyFile(filepath.Join(crash, filepath.Base(n)), p.path(n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := copyFile(grownJournal, p.path(decisionsFile)); err != nil {
			t.Fatal(err)
		}
	}
	const page = 16384
	cases := []indexCase{
		{name: "delete the database file", damage: func(t *testing.T, p *project, _ string) { remove(p, indexFile) }},
		{name: "delete the database with its -wal, -shm and lock files", damage: func(t *testing.T, p *project, _ string) {
			remove(p, indexFile, indexFile+"-wal", indexFile+"-shm", indexFile+".lock")
		}},
		{name: "truncate the database to 0 bytes", damage: func(t *testing.T, p *project, _ string) { os.Truncate(p.path(indexFile), 0) }},
		{name: "truncate the database to 100 bytes (inside its header)", damage: func(t *testing.T, p *project, _ string) { os.Truncate(p.path(indexFile), 100) }},
		{name: "truncate the database to half its size", damage: func(t *testing.T, p *project, _ string) { os.Truncate(p.path(indexFile), size(p)/2) }},
		{name: "truncate the database by its last page", damage: func(t *testing.T, p *project, _ string) { os.Truncate(p.path(indexFile), size(p)-page) }},
		{name: "overwrite the whole database with random bytes", damage: func(t *testing.T, p *project, _ string) { overwrite(p, 0, garbage(size(p))) }},
		{name: "overwrite the whole database with zeros", damage: func(t *testing.T, p *project, _ string) { overwrite(p, 0, make([]byte, size(p))) }},
		{name: "overwrite the database header (first 100 bytes) with random bytes", damage: func(t *testing.T, p *project, _ string) { overwrite(p, 0, garbage(100)) }},
		{name: "overwrite 8 pages in the middle of the database with random bytes", damage: func(t *testing.T, p *project, _ string) {
			overwrite(p, (size(p)/page/2)*page, garbage(8*page))
		}},
		{name: "overwrite the last page of the database with random bytes", damage: func(t *testing.T, p *project, _ string) {
			overwrite(p, size(p)-page, garbage(page))
		}},
		{name: "a -wal file of random bytes beside a good database", damage: func(t *testing.T, p *project, _ string) {
			os.WriteFile(p.path(indexFile+"-wal"), garbage(64<<10), 0o644)
		}},
		{name: "a -shm file of random bytes beside a good database", damage: func(t *testing.T, p *project, _ string) {
			os.WriteFile(p.path(indexFile+"-shm"), garbage(32<<10), 0o644)
		}},
		{name: "the database, -wal and -shm as a crash left them (the last 100 decisions committed only in the WAL)", grown: true,
			damage: func(t *testing.T, p *project, _ string) { putCrash(p, indexFile, indexFile+"-wal", indexFile+"-shm") }},
		{name: "the crash's -wal and -shm, the database itself deleted", grown: true,
			damage: func(t *testing.T, p *project, _ string) {
				remove(p, indexFile)
				putCrash(p, indexFile+"-wal", indexFile+"-shm")
			}},
		{name: "a stale -wal and -shm: the crash's, beside a database rebuilt since", grown: true,
			damage: func(t *testing.T, p *project, _ string) {
				putCrash(p)
				if res := p.run("rebuild"); res.Code != 0 {
					t.Fatalf("%s", res)
				}
				putCrash(p, indexFile+"-wal", indexFile+"-shm")
			}},
		{name: "a stale -wal and -shm from another project's index", damage: func(t *testing.T, p *project, _ string) {
			remove(p, indexFile+"-wal", indexFile+"-shm")
			for _, suffix := range []string{"-wal", "-shm"} {
				if err := copyFile(filepath.Join(crash, "other.db"+suffix), p.path(indexFile+suffix)); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	wantGrown := freshAnswersOf(t, grownJournal, base.path(retroFile))
	lost, killedInRebuild := 0, 0
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := cloneProject(t, base, t.TempDir())
			c.damage(t, p, crash)
			order := [][]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}}[i%3]
			expect := want
			if c.grown {
				expect = wantGrown
			}
			lost += checkAnswers(t, r, p, c.name, order, expect)
		})
	}

	// kill -9 during the rebuild, again and again, then the next command.
	kills := scaled(30, 5)
	t.Run("kill -9 during the rebuild", func(t *testing.T) {
		p := cloneProject(t, base, t.TempDir())
		os.Remove(p.path(indexFile))
		rng := mrand.New(mrand.NewPCG(3, 3))
		// How long a whole rebuild takes here, to aim the kills inside it.
		probe := cloneProject(t, p, t.TempDir())
		full := probe.run("log", "--limit", "1").Dur
		killed, finished := 0, false
		for i := 0; i < kills; i++ {
			if finished {
				// The last run finished the rebuild: lose the index again.
				for _, n := range []string{indexFile, indexFile + "-wal", indexFile + "-shm"} {
					os.Remove(p.path(n))
				}
			}
			delay := time.Duration(rng.Int64N(int64(full) * 9 / 10))
			var timer *time.Timer
			res := p.runWith(runOpts{started: func(pr *os.Process) {
				timer = time.AfterFunc(delay, func() { pr.Signal(syscall.SIGKILL) })
			}}, "log", "--limit", "1")
			timer.Stop()
			finished = !res.Killed
			switch {
			case res.Killed:
				killed++
			case res.Code != 0:
				r.fail(t, "a rebuild that was not killed failed: %s", res)
			}
		}
		killedInRebuild = killed
		r.note("kill -9 during the rebuild: %d runs of `orbit log` on a lost index (lost again after each run that finished), %d SIGKILLed at a random moment of the rebuild (a whole one takes %s here)",
			kills, killed, full.Round(time.Millisecond))
		lost += checkAnswers(t, r, p, "after kill -9 during the rebuild", []int{0, 1, 2}, want)
	})
	r.Times = fmt.Sprintf("%d damaged indexes, %d kills during a rebuild", len(cases), killedInRebuild)
	r.Kept = "2000 decisions and 60 outcome lines; log, trust and export compared after each"
	r.Lost = lost
}

// checkAnswers runs the reports in order on a damaged project and compares
// them with want; it returns how many decisions the log lost.
func checkAnswers(t *testing.T, r *row, p *project, name string, order []int, want answers) int {
	t.Helper()
	got, rs, err := p.answers(order...)
	first := rs[0]
	if err != nil {
		r.fail(t, "%s: the next command did not rebuild: %v", name, err)
		return 0
	}
	if d := got.diff(want); len(d) > 0 {
		r.fail(t, "%s: reports differ from before: %s", name, strings.Join(d, "; "))
	}
	if res := p.run("verify"); res.Code != 0 {
		r.fail(t, "%s: orbit verify afterwards: %s", name, res)
	}
	said := strings.ReplaceAll(strings.TrimSpace(first.Stderr), p.Root+"/", "")
	if said == "" {
		said = "(nothing on stderr)"
	}
	r.note("%s: `orbit %s` first, exit %d: %s", name, strings.Join(first.Args, " "), first.Code, excerpt(strings.ReplaceAll(said, "\n", " / "), 220))
	lost := 0
	if got.Log != want.Log {
		for _, id := range idsIn(want.Log) {
			if !strings.Contains(got.Log, `"id": "`+id+`"`) {
				lost++
			}
		}
	}
	return lost
}

// idsIn returns the ids in `orbit log --json` output.
func idsIn(log string) []string {
	var ids []string
	for _, l := range strings.Split(log, "\n") {
		l = strings.TrimSpace(l)
		if rest, ok := strings.CutPrefix(l, `"id": "`); ok {
			ids = append(ids, strings.TrimSuffix(strings.TrimSuffix(rest, `",`), `"`))
		}
	}
	return ids
}

// freshAnswersOf are the answers for a decisions and an outcome journal,
// indexed from nothing.
func freshAnswersOf(t *testing.T, decisions, retro string) answers {
	t.Helper()
	q := newProject(t, t.TempDir())
	if err := copyFile(decisions, q.path(decisionsFile)); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(retro, q.path(retroFile)); err != nil {
		t.Fatal(err)
	}
	a, _, err := q.answers()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// crashImage returns a directory holding orbit.db, orbit.db-wal and
// orbit.db-shm as a crash leaves them: copied while a process that synced
// 100 more decisions still holds the index open, so that they are committed
// only in the WAL. It also holds other.db-wal and other.db-shm, the same from
// an unrelated project. grown is the journal those 100 decisions are in.
func crashImage(t *testing.T, base *project) (dir, grown string) {
	t.Helper()
	dir = t.TempDir()
	p := cloneProject(t, base, t.TempDir())
	more := synth.Decisions(synth.Options{Decisions: 2100, Seed: 3})[2000:]
	f, err := os.OpenFile(p.path(decisionsFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range more {
		more[i].ID = fmt.Sprintf("crash-%d", i+1)
		line, err := journal.Marshal(&more[i])
		if err != nil {
			t.Fatal(err)
		}
		f.Write(line)
	}
	f.Close()
	grown = filepath.Join(dir, "grown.jsonl")
	if err := copyFile(p.path(decisionsFile), grown); err != nil {
		t.Fatal(err)
	}
	holdAndCopy(t, p, dir, "orbit")
	other := newProject(t, t.TempDir())
	writeJournal(t, other, 300, 10, 99)
	holdAndCopy(t, other, dir, "other")
	return dir, grown
}

// holdAndCopy syncs p's index in this process and copies the index files
// while the connection is still open (nothing checkpointed yet).
func holdAndCopy(t *testing.T, p *project, dir, prefix string) {
	t.Helper()
	ctx := context.Background()
	pr := projecttest.At(t, p.Root)
	ix := projecttest.Open(t, pr, time.Time{})
	defer ix.Store.Close()
	if _, err := ix.Sync(ctx, journal.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{".db", ".db-wal", ".db-shm"} {
		from := pr.DB + suffix[len(".db"):]
		if err := copyFile(from, filepath.Join(dir, prefix+suffix)); err != nil {
			t.Fatalf("crash image: %v", err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, prefix+".db-wal")); err != nil || fi.Size() == 0 {
		t.Fatalf("crash image: the WAL is empty (%v): nothing is committed only there", err)
	}
}
