package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/project"
)

// TestFleetCommands runs a team's path end to end on a SQLite hub: init
// gives the project an identity, serve token create makes its push token,
// remote add names the hub, push ships the journals (and nothing the
// second time), and a rewritten past is held back with exit status 3.
func TestFleetCommands(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	p.mustRun("init")
	proj, err := project.New(p.root, "")
	if err != nil {
		t.Fatal(err)
	}
	id, err := proj.ReadIdentity()
	if err != nil {
		t.Fatal(err)
	}
	storeSpec := "sqlite:" + filepath.Join(t.TempDir(), "hub.db")

	res := orbit(t, env{}, "serve", "token", "create", "--store", storeSpec, "--project", id.ID, "--scope", "push", "--note", "laptop")
	if res.code != exitOK {
		t.Fatalf("token create: exit %d: %s", res.code, res.stderr)
	}
	token := strings.TrimSpace(res.stdout)
	if len(token) != 2*hub.TokenBytes {
		t.Fatalf("token create printed %q; want a %d-character token", res.stdout, 2*hub.TokenBytes)
	}
	res = orbit(t, env{}, "serve", "token", "list", "--store", storeSpec, "--json")
	if res.code != exitOK || !strings.Contains(res.stdout, `"project": "`+id.ID+`"`) || strings.Contains(res.stdout, token) {
		t.Errorf("token list: exit %d, %s; want the token's project, never the token", res.code, res.stdout)
	}
	if res := orbit(t, env{}, "serve", "token", "create", "--store", storeSpec, "--project", "*", "--scope", "push"); res.code != exitUsage {
		t.Errorf("a push token for every project: exit %d; want 2", res.code)
	}
	if res := orbit(t, env{}, "serve", "--store", "mysql://x"); res.code != exitUsage || !strings.Contains(res.stderr, "want postgres://") {
		t.Errorf("serve --store mysql://: exit %d, %q; want a usage error", res.code, res.stderr)
	}

	store, err := hub.Open(context.Background(), storeSpec, hub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ts := httptest.NewServer(hub.NewServer(store, hub.Config{}).Handler())
	defer ts.Close()

	if res := p.run("remote", "add", "hub", "https://user:pw@example.com"); res.code != exitUsage || !strings.Contains(res.stderr, "carries credentials") {
		t.Errorf("remote add with credentials: exit %d, %q; want refused", res.code, res.stderr)
	}
	tokFile := filepath.Join(t.TempDir(), "hub.token")
	if err := os.WriteFile(tokFile, []byte(token+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := p.run("remote", "add", "hub", ts.URL, "--token-file", tokFile); res.code != exitUsage || !strings.Contains(res.stderr, "chmod 600") {
		t.Errorf("remote add with a readable token file: exit %d, %q; want refused", res.code, res.stderr)
	}
	if err := os.Chmod(tokFile, 0o600); err != nil {
		t.Fatal(err)
	}
	p.mustRun("remote", "add", "hub", ts.URL, "--token-file", tokFile)
	if res := p.mustRun("remote", "list"); res.stdout != "hub\t"+ts.URL+"\t"+tokFile+"\n" {
		t.Errorf("remote list = %q", res.stdout)
	}
	if strings.Contains(p.read(".claude/orbit-remotes.json"), token) {
		t.Fatal("the remotes file holds the token")
	}

	res = p.run("push", "--json")
	if res.code != exitOK {
		t.Fatalf("push: exit %d\n%s", res.code, res.stderr)
	}
	var rep struct {
		Project string `json:"project"`
		Remote  string `json:"remote"`
		Files   []struct {
			Path      string `json:"path"`
			Chunks    int    `json:"chunks"`
			Decisions int    `json:"decisions"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Project != id.ID || rep.Remote != "hub" || rep.Files[0].Path != project.DecisionsFile || rep.Files[0].Decisions != 6 {
		t.Errorf("push report = %+v; want 6 decisions of %s to hub", rep, id.ID)
	}
	if res := p.mustRun("push"); !strings.Contains(res.stdout, project.DecisionsFile+"\t0\t0\t0\t0\t0\t") {
		t.Errorf("second push:\n%s\nwant nothing shipped", res.stdout)
	}
	// ORBIT_TOKEN wins over the remote's token file; a wrong one is refused.
	res = orbit(t, env{vars: map[string]string{"ORBIT_TOKEN": "wrong"}}, "--root", p.root, "push")
	if res.code != exitError || !strings.Contains(res.stderr, "401") {
		t.Errorf("push with a wrong ORBIT_TOKEN: exit %d, %q; want a 401", res.code, res.stderr)
	}

	// Rewrite a line already pushed: held back, exit 3, the hub unchanged.
	journal := p.read(journalRel)
	p.write(journalRel, strings.Replace(journal, "iter-1-1", "iter-1-9", 1))
	res = p.run("push")
	if res.code != exitFindings || !strings.Contains(res.stderr, project.DecisionsFile+" not pushed") {
		t.Errorf("push after a rewrite: exit %d, %q; want 3 and the journal held", res.code, res.stderr)
	}
	ps, err := store.Projects(context.Background(), id.ID)
	if err != nil || len(ps) != 1 || ps[0].Decisions != 6 {
		t.Errorf("hub projects = %+v, %v; want 6 decisions", ps, err)
	}
	p.mustRun("remote", "remove", "hub")
	if res := p.run("push"); res.code != exitError || !strings.Contains(res.stderr, "no remote") {
		t.Errorf("push without a remote: exit %d, %q", res.code, res.stderr)
	}
}

// TestPushWatchSurvivesHubDown: with the hub down, push --watch retries
// (saying so once) and never fails; when interrupted it exits 0.
func TestPushWatchSurvivesHubDown(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	p.mustRun("init")
	ts := httptest.NewServer(nil)
	url := ts.URL
	ts.Close() // nothing listens there now
	p.mustRun("remote", "add", "hub", url)
	var out, errOut strings.Builder
	f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	f.Getenv = func(k string) string { return map[string]string{"ORBIT_TOKEN": "t"}[k] }
	f.Getwd = func() (string, error) { return p.root, nil }
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	code := run(ctx, f, []string{"push", "--watch", "--interval", "100ms"})
	if code != exitOK {
		t.Errorf("push --watch with the hub down: exit %d; want 0 when interrupted\n%s", code, errOut.String())
	}
	if n := strings.Count(errOut.String(), "retrying"); n != 1 {
		t.Errorf("push --watch said %d times that it retries; want once per outage:\n%s", n, errOut.String())
	}
}

// TestPrecedentRemote asks a hub for precedents: of this project with its
// own token, of every project with a fleet token (each hit says its
// project), and refuses --all-projects to a project's token.
func TestPrecedentRemote(t *testing.T) {
	ctx := context.Background()
	store, err := hub.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "hub.db"), hub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ts := httptest.NewServer(hub.NewServer(store, hub.Config{Admin: "admin-token-0123456789abcdef0123"}).Handler())
	defer ts.Close()
	var ids []string
	var projects []*testProject
	for _, input := range []string{"Pin the billing service to Postgres 16", "Pin the search service to Postgres 15"} {
		p := newProject(t)
		p.write(journalRel, `{"id":"iter-1-1","iteration":1,"tier":"auto_approve","depth":"trivial","category":"architecture","input":"`+input+`","decision":"APPROVED"}`+"\n")
		p.mustRun("init")
		p.mustRun("remote", "add", "hub", ts.URL)
		res := orbit(t, env{vars: map[string]string{"ORBIT_TOKEN": "admin-token-0123456789abcdef0123"}}, "--root", p.root, "push")
		if res.code != exitOK {
			t.Fatalf("push: %d %s", res.code, res.stderr)
		}
		proj, _ := project.New(p.root, "")
		id, _ := proj.ReadIdentity()
		ids = append(ids, id.ID)
		projects = append(projects, p)
	}
	own, err := store.CreateToken(ctx, ids[0], hub.ScopePush, "", testNow)
	if err != nil {
		t.Fatal(err)
	}
	fleet, err := store.CreateToken(ctx, hub.AllProjects, hub.ScopeRead, "", testNow)
	if err != nil {
		t.Fatal(err)
	}
	p := projects[0]
	res := orbit(t, env{vars: map[string]string{"ORBIT_TOKEN": own}}, "--root", p.root, "precedent", "--remote", "hub", "Postgres version pin")
	if res.code != exitOK || !strings.HasPrefix(res.stdout, "iter-1-1\t1\tarchitecture\tAPPROVED\tPENDING\t") || !strings.HasSuffix(res.stdout, "\tPin the billing service to Postgres 16\n") || strings.Count(res.stdout, "\n") != 1 {
		t.Errorf("precedent --remote with the project's token: exit %d\n%s%s; want its one decision", res.code, res.stdout, res.stderr)
	}
	res = orbit(t, env{vars: map[string]string{"ORBIT_TOKEN": own}}, "--root", p.root, "precedent", "--remote", "hub", "--all-projects", "Postgres")
	if res.code != exitError || !strings.Contains(res.stderr, "403") {
		t.Errorf("--all-projects with a project's token: exit %d, %q; want a 403", res.code, res.stderr)
	}
	res = orbit(t, env{vars: map[string]string{"ORBIT_TOKEN": fleet}}, "--root", p.root, "precedent", "--remote", "hub", "--all-projects", "--json=project,id,input", "Postgres")
	var hits []struct{ Project, ID, Input string }
	if err := json.Unmarshal([]byte(res.stdout), &hits); err != nil || res.code != exitOK {
		t.Fatalf("--all-projects --json: exit %d, %v\n%s%s", res.code, err, res.stdout, res.stderr)
	}
	got := map[string]string{}
	for _, h := range hits {
		got[h.Project] = h.Input
	}
	if len(hits) != 2 || got[ids[0]] != "Pin the billing service to Postgres 16" || got[ids[1]] != "Pin the search service to Postgres 15" {
		t.Errorf("--all-projects hits = %+v; want one of each project, each with its project", hits)
	}
	if res := p.run("precedent", "--all-projects", "x"); res.code != exitUsage {
		t.Errorf("--all-projects without --remote: exit %d; want 2", res.code)
	}
}
