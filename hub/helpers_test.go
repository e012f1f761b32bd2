package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/internal/projecttest"
	"github.com/orbit-loop/orbit/internal/tooltest"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/remote"
	"github.com/orbit-loop/orbit/synth"
	"github.com/orbit-loop/orbit/trust"
)

var testNow = time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)

// adminToken is the hub's own token in these tests.
const adminToken = "admin-0123456789abcdef0123456789abcdef"

// eachStore runs fn against a hub on PostgreSQL (a fresh database on the
// test server) and one on SQLite, as subtests.
func eachStore(t *testing.T, fn func(t *testing.T, s *hub.Store)) {
	t.Helper()
	for _, dialect := range []string{hub.Postgres, hub.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			fn(t, openStore(t, dialect))
		})
	}
}

// openStore opens a fresh hub store of a dialect.
func openStore(tb testing.TB, dialect string) *hub.Store {
	tb.Helper()
	spec := "sqlite:" + filepath.Join(tb.TempDir(), "hub.db")
	if dialect == hub.Postgres {
		spec = tooltest.Postgres(tb)
	}
	s, err := hub.Open(context.Background(), spec, hub.Options{Conns: 4})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// serve serves a hub over s and returns its base URL.
func serve(tb testing.TB, s *hub.Store) string {
	tb.Helper()
	ts := httptest.NewServer(hub.NewServer(s, hub.Config{Admin: adminToken, Now: func() time.Time { return testNow }}).Handler())
	tb.Cleanup(ts.Close)
	return ts.URL
}

// proj is a temporary project with an identity.
type proj struct {
	project.Project
	id project.Identity
}

func newProject(tb testing.TB, id string, files map[string]string) proj {
	tb.Helper()
	p := projecttest.New(tb)
	for rel, text := range files {
		if err := os.WriteFile(p.Path(rel), []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return proj{Project: p, id: project.Identity{ID: id, Name: "name-" + id}}
}

func (p proj) write(tb testing.TB, rel, text string) {
	tb.Helper()
	if err := os.WriteFile(p.Path(rel), []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func (p proj) appendTo(tb testing.TB, rel, text string) {
	tb.Helper()
	f, err := os.OpenFile(p.Path(rel), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		tb.Fatal(err)
	}
}

// push pushes p to the hub at url with token, in small batches.
func (p proj) push(tb testing.TB, url, token string) remote.Report {
	tb.Helper()
	return p.pushBatches(tb, url, token, 4096)
}

func (p proj) pushBatches(tb testing.TB, url, token string, batch int64) remote.Report {
	tb.Helper()
	rep, err := remote.Push(context.Background(), remote.NewClient(url, token), p.Project, p.id, remote.PushOptions{BatchBytes: batch})
	if err != nil {
		tb.Fatalf("push %s: %v", p.id.ID, err)
	}
	return rep
}

// local syncs p's own index and returns it.
func (p proj) local(tb testing.TB) *journal.Index {
	tb.Helper()
	ix := projecttest.Open(tb, p.Project, time.Time{})
	if _, err := ix.Sync(context.Background(), journal.SyncOptions{}); err != nil {
		tb.Fatal(err)
	}
	return ix
}

// synthJournal is a journal of n decisions with outcomes in later lines.
func synthJournal(tb testing.TB, n int, seed uint64) string {
	tb.Helper()
	var b bytes.Buffer
	if err := synth.Generate(&b, synth.Options{Decisions: n, Seed: seed}); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

// chunks counts the chunks of a file as sync reads them (all of them:
// records, blank lines, rejected lines).
func chunks(tb testing.TB, path string) int {
	tb.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	r := journal.NewReader(f, path, 0, 0)
	n := 0
	for {
		c, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			tb.Fatal(err)
		}
		if c.Kind != journal.Pending {
			n++
		}
	}
}

// get reads a JSON endpoint with token; it returns the status.
func get(tb testing.TB, url, token string, out any) int {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			tb.Fatalf("GET %s: %v in %s", url, err, data)
		}
	}
	return resp.StatusCode
}

// sameJSON fails unless a and b encode to the same JSON.
func sameJSON(tb testing.TB, what string, got, want any) {
	tb.Helper()
	g, _ := json.MarshalIndent(got, "", " ")
	w, _ := json.MarshalIndent(want, "", " ")
	if !bytes.Equal(g, w) {
		tb.Errorf("%s differs from the local one:\nhub:   %s\nlocal: %s", what, g, w)
	}
}

// localTrust is `orbit trust` on p's own index.
func localTrust(tb testing.TB, p proj, opts trust.Options) trust.Report {
	tb.Helper()
	rep, err := trust.Load(context.Background(), p.local(tb).Store, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}
