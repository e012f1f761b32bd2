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

	"github.com/orbit-loop/orbit/db"
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

// asSchemaV4 makes the project's index what schema v4 left: every decision
// with its whole line in raw, the last migration not applied.
func asSchemaV4(t *testing.T, p *testProject) {
	t.Helper()
	ctx := context.Background()
	store, err := db.Open(ctx, p.path(indexRel), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, q := range []string{
		`UPDATE decisions SET raw = ` + db.DecisionRawSQL("decisions") + ` WHERE raw = ''`,
		`DELETE FROM goose_db_version WHERE version_id = 5`,
		`PRAGMA user_version = 4`,
	} {
		if _, err := store.DB.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// elided counts the decisions whose raw text the index does not hold.
func elided(t *testing.T, p *testProject) int {
	t.Helper()
	store, err := db.Open(context.Background(), p.path(indexRel), db.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var n int
	if err := store.DB.Get(&n, `SELECT count(*) FROM decisions WHERE raw = ''`); err != nil {
		t.Fatal(err)
	}
	return n
}

// checkSameAnswers asks every read command, then again after the index was
// made as schema v4 made it and migrated, and after orbit rebuild: the
// answers must not change.
func checkSameAnswers(t *testing.T, p *testProject, ids, queries []string) {
	t.Helper()
	p.mustRun("sync")
	if elided(t, p) == 0 {
		t.Fatal("no decision's raw text was left out of the index: the corpus should be written as orbit writes it")
	}
	before := readAnswers(t, p, ids, queries)

	asSchemaV4(t, p)
	if elided(t, p) != 0 {
		t.Fatal("the v4 index still leaves raw text out")
	}
	p.mustRun("migrate", "up")
	if elided(t, p) == 0 {
		t.Error("migration to v5 left every raw text in the index")
	}
	if migrated := readAnswers(t, p, ids, queries); migrated != before {
		t.Errorf("answers after the migration from v4 differ:\n%s", firstDiff(before, migrated))
	}

	p.mustRun("rebuild")
	if rebuilt := readAnswers(t, p, ids, queries); rebuilt != before {
		t.Errorf("answers after orbit rebuild differ:\n%s", firstDiff(before, rebuilt))
	}
}

// firstDiff shows the first line where two outputs differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(la), len(lb))
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
