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
		{"log", "--category", "deploy", "--limit", "0", "--json"},
		{"log", "--tier", "deep_think", "--decision", "needs_review", "--limit", "0", "--json"},
		{"export"},
		{"export", "--format", "csv"},
		{"export", "--format", "md"},
		{"trust", "--json"},
		{"trust", "--category", "architecture", "--json"},
		{"trust", "--since", "2026-03-01", "--window", "50", "--json"},
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
// parts of the later migrations (v7's: the enumerations as text, line_end
// and confidence as they are, the outcome tables with their text and the
// index by outcome; v6's: ts text in every row, the full-text index with its
// per-row lengths, seq in the indexes; v5's: every decision with its whole
// line in raw).
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

// indexCuts is what an index leaves out of its rows: the decisions whose
// raw text (v5) and whose ts text (v6) it does not hold, whether its
// full-text index keeps per-row lengths (cut in v6), and (v7) the decisions
// whose category is a code and the outcome events whose ts text it does
// not hold. A count is -1 when the index has no such column.
type indexCuts struct {
	raw, ts       int
	docsize       bool
	coded, evtsTS int
}

// current says whether the index makes every cut of the current schema.
func (c indexCuts) current() bool {
	return c.raw > 0 && c.ts > 0 && !c.docsize && c.coded > 0 && c.evtsTS > 0
}

// v4 says whether the index makes none of the cuts of schemas v5 to v7.
func (c indexCuts) v4() bool {
	return c.raw == 0 && c.ts == -1 && c.docsize && c.coded == -1 && c.evtsTS == -1
}

func cuts(t *testing.T, p *testProject) indexCuts {
	t.Helper()
	store, err := db.Open(context.Background(), p.path(indexRel), db.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var c indexCuts
	if err := store.DB.Get(&c.raw, `SELECT count(*) FROM decisions WHERE raw = ''`); err != nil {
		t.Fatal(err)
	}
	if err := store.DB.Get(&c.ts, `SELECT count(*) FROM decisions WHERE ts_text = '' AND ts <> ''`); err != nil {
		c.ts = -1
	}
	if err := store.DB.Get(&c.docsize, `SELECT count(*) > 0 FROM sqlite_master WHERE name = 'decisions_fts_docsize'`); err != nil {
		t.Fatal(err)
	}
	if err := store.DB.Get(&c.coded, `SELECT count(*) FROM decisions WHERE typeof(category_code) = 'integer'`); err != nil {
		c.coded = -1
	}
	if err := store.DB.Get(&c.evtsTS, `SELECT count(*) FROM outcome_events WHERE ts_text IS NULL AND ts <> ''`); err != nil {
		c.evtsTS = -1
	}
	return c
}

// checkSameAnswers asks every read command, then again after the index was
// made as schema v4 made it and migrated, and after orbit rebuild: the
// answers must not change.
func checkSameAnswers(t *testing.T, p *testProject, ids, queries []string) {
	t.Helper()
	p.mustRun("sync")
	if c := cuts(t, p); !c.current() {
		t.Fatalf("index of the current schema: %+v; want every cut made (the corpus should be written as orbit writes it)", c)
	}
	before := readAnswers(t, p, ids, queries)

	asSchemaV4(t, p)
	if c := cuts(t, p); !c.v4() {
		t.Fatalf("the v4 index: %+v; want no cut made", c)
	}
	p.mustRun("migrate", "up")
	if c := cuts(t, p); !c.current() {
		t.Errorf("after the migrations to v%d: %+v; want every cut made", migrations.Version, c)
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
