package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/internal/golden"
	"github.com/orbit-loop/orbit/migrations"
)

// readAnswers are the outputs of every read command on a project: what an
// index, however it was made, must answer alike.
func readAnswers(t *testing.T, p *testProject, ids, queries []string) string {
	t.Helper()
	cmds := [][]string{
		{"log", "--limit", "0", "--json"},
		{"log", "--limit", "20"},
		{"log", "--outcome", "INCORRECT", "--limit", "0", "--json"},
		{"export"},
		{"export", "--format", "csv"},
		{"export", "--format", "md"},
		{"trust", "--json"},
		{"stale", "--limit", "0", "--json", "id,iteration,age_iterations,category,input,ts"},
		{"verify"},
	}
	for _, id := range ids {
		cmds = append(cmds, []string{"show", id, "--json"}, []string{"show", id})
	}
	for _, q := range queries {
		cmds = append(cmds, []string{"precedent", q, "-k", "10", "--json"})
	}
	var b strings.Builder
	for _, args := range cmds {
		res := p.run(args...)
		if res.code != exitOK {
			t.Fatalf("orbit %s: exit %d; stderr %q", strings.Join(args, " "), res.code, res.stderr)
		}
		fmt.Fprintf(&b, "$ orbit %s\n%s", strings.Join(args, " "), res.stdout)
	}
	return b.String()
}

// asSchemaV4 makes the project's index what schema v4 left, by the Down
// parts of the later migrations (v6's: ts text in every row, the full-text
// index with its per-row lengths, seq in the indexes; v5's: every decision
// with its whole line in raw).
func asSchemaV4(t *testing.T, p *testProject) {
	t.Helper()
	ctx := context.Background()
	store, err := db.Open(ctx, p.path(indexRel), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	gp, err := goose.NewProvider(goose.DialectSQLite3, store.DB.DB, migrations.FS, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gp.DownTo(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if _, err := store.DB.ExecContext(ctx, `PRAGMA user_version = 4`); err != nil {
		t.Fatal(err)
	}
}

// cuts counts the decisions whose raw text and whose ts text the index does
// not hold (-1 when the index has no ts_text column: before v6), and reports
// whether the full-text index keeps per-row lengths.
func cuts(t *testing.T, p *testProject) (raw, ts int, docsize bool) {
	t.Helper()
	store, err := db.Open(context.Background(), p.path(indexRel), db.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.DB.Get(&raw, `SELECT count(*) FROM decisions WHERE raw = ''`); err != nil {
		t.Fatal(err)
	}
	if err := store.DB.Get(&ts, `SELECT count(*) FROM decisions WHERE ts_text = '' AND ts <> ''`); err != nil {
		ts = -1
	}
	if err := store.DB.Get(&docsize, `SELECT count(*) > 0 FROM sqlite_master WHERE name = 'decisions_fts_docsize'`); err != nil {
		t.Fatal(err)
	}
	return raw, ts, docsize
}

// checkSameAnswers asks every read command, then again after the index was
// made as schema v4 made it and migrated, and after orbit rebuild: the
// answers must not change.
func checkSameAnswers(t *testing.T, p *testProject, ids, queries []string) {
	t.Helper()
	p.mustRun("sync")
	if raw, ts, docsize := cuts(t, p); raw == 0 || ts <= 0 || docsize {
		t.Fatalf("index of the current schema: %d raw texts, %d ts texts left out, per-row lengths %v; want some, some, none (the corpus should be written as orbit writes it)", raw, ts, docsize)
	}
	before := readAnswers(t, p, ids, queries)

	asSchemaV4(t, p)
	if raw, ts, docsize := cuts(t, p); raw != 0 || ts != -1 || !docsize {
		t.Fatalf("the v4 index: %d raw texts, %d ts texts left out, per-row lengths %v; want 0, no ts_text column, kept", raw, ts, docsize)
	}
	p.mustRun("migrate", "up")
	if raw, ts, docsize := cuts(t, p); raw == 0 || ts <= 0 || docsize {
		t.Errorf("after the migrations to v6: %d raw texts, %d ts texts left out, per-row lengths %v; want some, some, none", raw, ts, docsize)
	}
	if migrated := readAnswers(t, p, ids, queries); migrated != before {
		t.Errorf("answers after the migration from v4 differ:\n%s", golden.FirstDiff(before, migrated))
	}

	p.mustRun("rebuild")
	if rebuilt := readAnswers(t, p, ids, queries); rebuilt != before {
		t.Errorf("answers after orbit rebuild differ:\n%s", golden.FirstDiff(before, rebuilt))
	}
}

// The evaluation corpus: 1,500 decisions of an invoicing product's loop,
// with retrograde verdicts.
func TestRebuildSameAnswersCorpus(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "precedent")
	journal, err := os.ReadFile(filepath.Join(root, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	p := newProject(t)
	p.write(journalRel, string(journal))
	var ids []string
	sc := bufio.NewScanner(strings.NewReader(string(journal)))
	sc.Buffer(nil, 1<<20)
	for n := 0; sc.Scan(); n++ {
		if n%499 == 0 {
			var r struct{ ID string }
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.ID)
		}
	}
	qf, err := os.ReadFile(filepath.Join(root, "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var queries []string
	for i, l := range strings.Split(strings.TrimSpace(string(qf)), "\n") {
		if i%40 == 0 {
			var q struct{ Query string }
			if err := json.Unmarshal([]byte(l), &q); err != nil {
				t.Fatal(err)
			}
			queries = append(queries, q.Query)
		}
	}
	checkSameAnswers(t, p, ids, queries)
}

// The demo's project, as orbit demo --dir leaves it.
func TestRebuildSameAnswersDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	if res := orbit(t, env{}, "demo", "--dir", dir); res.code != exitOK {
		t.Fatalf("demo: exit %d\n%s", res.code, res.stderr)
	}
	p := &testProject{tb: t, root: dir}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(p.read(journalRel)), "\n") {
		var r struct{ ID string }
		if json.Unmarshal([]byte(l), &r) == nil && r.ID != "" {
			ids = append(ids, r.ID)
		}
	}
	checkSameAnswers(t, p, ids, []string{"add a lint rule", "retry failing requests", "database migration"})
}
