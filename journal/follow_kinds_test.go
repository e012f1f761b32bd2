package journal_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"

	// Every kind of file is registered, with its test lines.
	"github.com/orbit-loop/orbit/internal/followtest"
	"github.com/orbit-loop/orbit/internal/projecttest"
)

// follow is one followed file of one kind in a fresh project.
type follow struct {
	t     *testing.T
	ctx   context.Context
	spec  journal.FileSpec
	line  func(int) string
	proj  project.Project
	store *db.Store
	ix    *journal.Index
	now   time.Time
}

func newFollow(t *testing.T, spec journal.FileSpec) *follow {
	t.Helper()
	if _, ok := followtest.Line(spec.Kind.Name(), 0); !ok {
		t.Fatalf("kind %q (%s) has no test lines in internal/followtest", spec.Kind.Name(), spec.Path)
	}
	line := func(i int) string {
		l, _ := followtest.Line(spec.Kind.Name(), i)
		return l
	}
	p := projecttest.New(t)
	store := projecttest.Open(t, p, time.Time{}).Store
	f := &follow{t: t, ctx: context.Background(), spec: spec, line: line, proj: p, store: store,
		now: time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)}
	f.ix = journal.NewIndex(store, p).Following(spec)
	f.ix.Now = func() time.Time { return f.now }
	return f
}

// lines are lines from..to-1 of the kind, each with its newline.
func (f *follow) lines(from, to int) string {
	return followtest.Lines(f.spec.Kind.Name(), from, to)
}

func (f *follow) path() string { return f.proj.Path(f.spec.Path) }

func (f *follow) read() string {
	f.t.Helper()
	b, err := os.ReadFile(f.path())
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// write replaces the file in place, its mtime a second after the last
// write's (a coarse clock must not hide the rewrite).
func (f *follow) write(content string) {
	f.t.Helper()
	fi, statErr := os.Stat(f.path())
	if err := os.WriteFile(f.path(), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	if statErr == nil {
		later := fi.ModTime().Add(time.Second)
		if err := os.Chtimes(f.path(), later, later); err != nil {
			f.t.Fatal(err)
		}
	}
}

// appendRaw appends as `echo >>` does.
func (f *follow) appendRaw(s string) {
	f.t.Helper()
	a, err := os.OpenFile(f.path(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		f.t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.WriteString(s); err != nil {
		f.t.Fatal(err)
	}
}

// clockAfterWrite sets the follower's clock d after the file's last write.
func (f *follow) clockAfterWrite(d time.Duration) {
	f.t.Helper()
	fi, err := os.Stat(f.path())
	if err != nil {
		f.t.Fatal(err)
	}
	f.now = fi.ModTime().Add(d)
}

// sync syncs and fails on an error or a rejected line.
func (f *follow) sync() journal.SyncReport {
	f.t.Helper()
	rep, err := f.ix.Sync(f.ctx, journal.SyncOptions{})
	if err != nil {
		f.t.Fatalf("Sync: %v", err)
	}
	if n := rep.Errors(); n > 0 {
		f.t.Fatalf("Sync rejected %d lines: %v", n, rep.Problems)
	}
	return rep
}

// state is the file's sync state.
func (f *follow) state() db.FileState {
	f.t.Helper()
	st, found, err := f.store.FileState(f.ctx, f.spec.Path)
	if err != nil || !found {
		f.t.Fatalf("FileState(%s) = found %t, %v", f.spec.Path, found, err)
	}
	return st
}

// indexed is the text of every record the index holds from the file, in
// file order: what the kind's own tables say.
func (f *follow) indexed() string {
	f.t.Helper()
	var b strings.Builder
	err := f.store.EachIndexedLine(f.ctx, f.spec.Kind.Records(), f.state().ID, func(l db.IndexedLine) error {
		if l.Kind != "record" {
			return fmt.Errorf("line %d is a rejected line", l.Line)
		}
		b.WriteString(l.Text + "\n")
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return b.String()
}

// wantIndexed checks that the index holds exactly want.
func (f *follow) wantIndexed(when, want string) {
	f.t.Helper()
	if got := f.indexed(); got != want {
		f.t.Errorf("%s: the index holds\n%s\nwant\n%s", when, got, want)
	}
}

// wantRewrite checks that a sync reports the file's past changed at line,
// rebuilds the index from the file, and saves to a recovery file what the
// index held from that line on (recovered): nothing acknowledged is lost.
func (f *follow) wantRewrite(rep journal.SyncReport, line int, recovered string) {
	f.t.Helper()
	if len(rep.Rewritten) != 1 {
		f.t.Fatalf("Rewritten = %v; want one finding", rep.Rewritten)
	}
	p := rep.Rewritten[0]
	if p.File != f.spec.Path || p.Line != line || p.Code != journal.CodeRewritten || !strings.Contains(p.Message, fmt.Sprintf("first differing line %d", line)) {
		f.t.Errorf("Rewritten = %s (code %s); want %s:%d named as the first differing line", p.Error(), p.Code, f.spec.Path, line)
	}
	if len(rep.Recovered) != 1 {
		f.t.Fatalf("Recovered = %q; want one recovery file", rep.Recovered)
	}
	if ok, _ := filepath.Match(".claude/orbit-recovered-*.jsonl", rep.Recovered[0]); !ok {
		f.t.Errorf("recovery file %s; want .claude/orbit-recovered-*.jsonl", rep.Recovered[0])
	}
	got, err := os.ReadFile(f.proj.Path(rep.Recovered[0]))
	if err != nil {
		f.t.Fatal(err)
	}
	if string(got) != recovered {
		f.t.Errorf("recovery file holds\n%s\nwant\n%s", got, recovered)
	}
	f.wantIndexed("after the rewrite", f.read())
}

// TestFollowerKinds holds every kind of append-only file to the same
// guarantees: the follower's behaviour, once per kind.
func TestFollowerKinds(t *testing.T) {
	for _, kind := range followtest.Kinds() {
		if _, ok := journal.FollowedKind(kind); !ok {
			t.Errorf("kind %s is not followed (not registered?)", kind)
		}
	}
	for _, spec := range journal.Followed() {
		t.Run(spec.Kind.Name(), func(t *testing.T) {
			t.Run("append", func(t *testing.T) {
				f := newFollow(t, spec)
				f.appendRaw(f.lines(1, 4))
				if rep := f.sync(); rep.Added[spec.Kind.Name()] != 3 {
					t.Errorf("first sync added %v; want 3 %s records", rep.Added, spec.Kind.Name())
				}
				f.appendRaw(f.lines(4, 5))
				if rep := f.sync(); rep.Added[spec.Kind.Name()] != 1 {
					t.Errorf("sync after an append added %v; want 1", rep.Added)
				}
				f.wantIndexed("after the append", f.lines(1, 5))
				// An unchanged file: no transaction (the sync state is not
				// even rewritten).
				before := f.state()
				if rep := f.sync(); len(rep.Added) != 0 || len(rep.Problems) != 0 {
					t.Errorf("sync of an unchanged file = %+v; want nothing", rep)
				}
				if after := f.state(); after != before {
					t.Errorf("sync of an unchanged file wrote its state:\n%+v\nwas\n%+v", after, before)
				}
			})

			t.Run("torn line settles", func(t *testing.T) {
				f := newFollow(t, spec)
				full := f.line(2)
				f.appendRaw(f.lines(1, 2) + full[:len(full)/2])
				f.clockAfterWrite(time.Second)
				if rep := f.sync(); rep.Added[spec.Kind.Name()] != 1 || len(rep.Torn) != 0 || slices.ContainsFunc(rep.Problems, func(p journal.Problem) bool { return p.Line == 2 }) {
					t.Fatalf("sync 1s after a half line = %+v; want the whole line indexed, the half one waiting unreported", rep)
				}
				f.clockAfterWrite(6 * time.Second)
				rep := f.sync()
				if len(rep.Torn) != 1 || rep.Torn[0].Line != 2 || rep.Torn[0].Code != journal.CodeTorn || rep.Torn[0].Severity != journal.SevWarning {
					t.Fatalf("sync 6s after a half line: torn = %v; want line 2 reported torn (a warning)", rep.Torn)
				}
				// The writer finishes the line: it is indexed, never torn.
				f.appendRaw(full[len(full)/2:] + "\n")
				if rep := f.sync(); rep.Added[spec.Kind.Name()] != 1 || len(rep.Torn) != 0 {
					t.Errorf("sync after the line was finished = %+v; want it indexed", rep)
				}
				f.wantIndexed("after the torn line was finished", f.lines(1, 3))
			})

			t.Run("truncated", func(t *testing.T) {
				f := newFollow(t, spec)
				f.appendRaw(f.lines(1, 6))
				f.sync()
				f.write(f.lines(1, 4))
				f.wantRewrite(f.sync(), 4, f.lines(4, 6))
			})

			t.Run("same-length edit of an older line", func(t *testing.T) {
				f := newFollow(t, spec)
				// Enough lines that line 2 lies before the tail hash's bytes.
				n := 4096/len(f.line(0)) + 10
				f.appendRaw(f.lines(1, n))
				f.sync()
				edited := strings.Replace(f.read(), f.line(2), f.line(900002), 1)
				if len(edited) != len(f.read()) {
					t.Fatalf("the edit changed the file's size")
				}
				f.write(edited)
				f.wantRewrite(f.sync(), 2, f.lines(2, n))
				if !strings.Contains(f.indexed(), f.line(900002)) {
					t.Errorf("the index does not hold the edited line")
				}
			})

			t.Run("edit then append, found by verify", func(t *testing.T) {
				f := newFollow(t, spec)
				n := 4096/len(f.line(0)) + 10
				f.appendRaw(f.lines(1, n))
				f.sync()
				f.write(strings.Replace(f.read(), f.line(3), f.line(900003), 1))
				f.appendRaw(f.lines(n, n+1))
				// An append reads only the new bytes: the edit far back goes
				// unseen by sync alone.
				if rep := f.sync(); rep.Added[spec.Kind.Name()] != 1 || len(rep.Rewritten) != 0 {
					t.Fatalf("sync after an edit and an append = %+v; want the appended line only", rep)
				}
				v, err := f.ix.Verify(f.ctx)
				if err != nil {
					t.Fatal(err)
				}
				if v.OK() || len(v.Files) != 1 || v.Files[0].Kind != spec.Kind.Name() {
					t.Fatalf("verify = %+v; want this file, not OK", v)
				}
				var lines []int
				for _, p := range v.Findings {
					if p.Code == journal.CodeRewritten {
						lines = append(lines, p.Line)
					}
				}
				if !slices.Equal(lines, []int{3}) {
					t.Errorf("verify findings %v; want line 3 rewritten", v.Findings)
				}
				// Verify marked it: the next sync rebuilds it.
				f.wantRewrite(f.sync(), 3, f.lines(3, n+1))
			})

			t.Run("inode replaced", func(t *testing.T) {
				f := newFollow(t, spec)
				// Line 1 lies before the tail hash's bytes.
				n := 4096/len(f.line(0)) + 10
				f.appendRaw(f.lines(1, n))
				f.sync()
				// Another file takes the path, with the size and mtime of the
				// one it replaces: only the inode tells.
				replace := func(content string) {
					fi, err := os.Stat(f.path())
					if err != nil {
						t.Fatal(err)
					}
					tmp := f.path() + ".tmp"
					if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
						t.Fatal(err)
					}
					if err := os.Rename(tmp, f.path()); err != nil {
						t.Fatal(err)
					}
				}
				// The same bytes in a new file: compared, found intact.
				replace(f.read())
				if rep := f.sync(); len(rep.Rewritten) != 0 || len(rep.Added) != 0 {
					t.Errorf("sync of a copy = %+v; want nothing (the records are intact)", rep)
				}
				// A new file with the same size whose line 1 differs.
				replace(strings.Replace(f.read(), f.line(1), f.line(900001), 1))
				f.wantRewrite(f.sync(), 1, f.lines(1, n))
			})
		})
	}
}
