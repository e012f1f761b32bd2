package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mixedProblems are the rejected lines of testdata/cmd/mixed.jsonl as
// import lists them (after the path).
var mixedProblems = []string{
	`:2: invalid JSON: invalid character 'n' at column 1`,
	`:4: tier "fast_track" is not allowed (allowed: auto_approve, quick_review, deep_think, escalate)`,
	`:7: missing required field: depth`,
}

// mixedGood are the ids of the valid records of mixed.jsonl, in order.
var mixedGood = []string{"m-1", "m-2", "m-4"}

func TestImportGoodAndBadLines(t *testing.T) {
	p := newProject(t)
	src := copyFixture(t, "mixed.jsonl")

	res := p.run("import", src)
	if res.code != exitFindings {
		t.Errorf("import: exit %d; want %d", res.code, exitFindings)
	}
	var wantErr strings.Builder
	for _, pr := range mixedProblems {
		wantErr.WriteString(src + pr + "\n")
	}
	wantErr.WriteString("orbit: import: some lines were not imported (see above)\n")
	if res.stderr != wantErr.String() {
		t.Errorf("import stderr = %q; want %q", res.stderr, wantErr.String())
	}
	if want := src + ": 6 records: 3 appended, 0 already present, 0 conflicts, 3 rejected lines\n"; res.stdout != want {
		t.Errorf("import stdout = %q; want %q", res.stdout, want)
	}
	if got := firstColumn(p.mustRun("log", "--limit", "0").stdout); strings.Join(got, ",") != "m-4,m-2,m-1" {
		t.Errorf("log after import = %q; want m-4, m-2, m-1", got)
	}

	// Importing again appends nothing.
	journal := p.read(journalRel)
	res = p.run("import", src)
	if res.code != exitFindings {
		t.Errorf("re-import: exit %d; want %d (the bad lines are still bad)", res.code, exitFindings)
	}
	if want := src + ": 6 records: 0 appended, 3 already present, 0 conflicts, 3 rejected lines\n"; res.stdout != want {
		t.Errorf("re-import stdout = %q; want %q", res.stdout, want)
	}
	if got := p.read(journalRel); got != journal {
		t.Errorf("re-import changed the journal:\n%s\nwas:\n%s", got, journal)
	}
}

func TestImportCleanFile(t *testing.T) {
	p := newProject(t)
	src := copyFixture(t, "journal.jsonl")
	res := p.run("import", src)
	if res.code != exitOK {
		t.Fatalf("import: exit %d; stderr %q", res.code, res.stderr)
	}
	if want := src + ": 6 records: 6 appended, 0 already present, 0 conflicts, 0 rejected lines\n"; res.stdout != want {
		t.Errorf("import stdout = %q; want %q", res.stdout, want)
	}
	if res.stderr != "" {
		t.Errorf("import stderr = %q; want empty", res.stderr)
	}
	res = p.run("import", src, src)
	if res.code != exitOK {
		t.Fatalf("re-import: exit %d; stderr %q", res.code, res.stderr)
	}
	want := src + ": 6 records: 0 appended, 6 already present, 0 conflicts, 0 rejected lines\n" +
		src + ": 6 records: 0 appended, 6 already present, 0 conflicts, 0 rejected lines\n"
	if res.stdout != want {
		t.Errorf("re-import stdout = %q; want %q", res.stdout, want)
	}
}

func TestImportConflict(t *testing.T) {
	p := newProject(t)
	p.mustRun("import", copyFixture(t, "journal.jsonl"))
	other := t.TempDir() + "/other.jsonl"
	changed := strings.Replace(string(readFixture(t, "journal.jsonl")), "Focus beats breadth.", "Changed my mind.", 1)
	if err := os.WriteFile(other, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	res := p.run("import", other)
	if res.code != exitFindings {
		t.Errorf("import of a conflicting record: exit %d; want %d", res.code, exitFindings)
	}
	wantErr := other + `:1: id "iter-1-1" is already in the journal (.claude/ceo-loop-decisions.jsonl:1) with different content; not imported` + "\n" +
		"orbit: import: some lines were not imported (see above)\n"
	if res.stderr != wantErr {
		t.Errorf("stderr = %q; want %q", res.stderr, wantErr)
	}
	if want := other + ": 6 records: 0 appended, 5 already present, 1 conflict, 0 rejected lines\n"; res.stdout != want {
		t.Errorf("stdout = %q; want %q", res.stdout, want)
	}
}

func TestImportDryRun(t *testing.T) {
	p := newProject(t)
	p.write(journalRel, "")
	src := copyFixture(t, "mixed.jsonl")

	res := p.run("import", "--dry-run", src)
	if res.code != exitFindings {
		t.Errorf("import --dry-run: exit %d; want %d", res.code, exitFindings)
	}
	if want := src + ": 6 records: 3 would append, 0 already present, 0 conflicts, 3 rejected lines\n"; res.stdout != want {
		t.Errorf("import --dry-run stdout = %q; want %q", res.stdout, want)
	}
	if got := p.read(journalRel); got != "" {
		t.Errorf("import --dry-run wrote to the journal:\n%s", got)
	}
	if got := p.mustRun("log", "--limit", "0").stdout; got != "" {
		t.Errorf("log after a dry run = %q; want nothing", got)
	}
	// A dry run sees duplicates within what it would append.
	res = p.run("import", "--dry-run", src, src)
	want := src + ": 6 records: 3 would append, 0 already present, 0 conflicts, 3 rejected lines\n" +
		src + ": 6 records: 0 would append, 3 already present, 0 conflicts, 3 rejected lines\n"
	if res.stdout != want {
		t.Errorf("import --dry-run twice stdout = %q; want %q", res.stdout, want)
	}
}

func TestImportJSON(t *testing.T) {
	p := newProject(t)
	src := copyFixture(t, "mixed.jsonl")
	res := p.run("import", "--json", src)
	if res.code != exitFindings {
		t.Errorf("import --json: exit %d; want %d", res.code, exitFindings)
	}
	if res.stderr != "" {
		t.Errorf("import --json stderr = %q; want empty (the problems are in the JSON)", res.stderr)
	}
	var got struct {
		DryRun bool `json:"dry_run"`
		Files  []struct {
			Path      string `json:"path"`
			Records   int    `json:"records"`
			Appended  int    `json:"appended"`
			Skipped   int    `json:"skipped"`
			Conflicts int    `json:"conflicts"`
			Rejected  int    `json:"rejected"`
		} `json:"files"`
		Problems []struct {
			File     string `json:"file"`
			Line     int    `json:"line"`
			Severity string `json:"severity"`
			Code     string `json:"code"`
			Message  string `json:"message"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("import --json output does not parse: %v\n%s", err, res.stdout)
	}
	if keys := objectKeys(t, []byte(res.stdout)); strings.Join(keys, ",") != "dry_run,files,problems" {
		t.Errorf("import --json keys = %q; want dry_run, files, problems", keys)
	}
	if len(got.Files) != 1 || got.Files[0].Path != src || got.Files[0].Records != 6 || got.Files[0].Appended != 3 || got.Files[0].Rejected != 3 {
		t.Errorf("import --json files = %+v; want one file %s with 6 records, 3 appended, 3 rejected", got.Files, src)
	}
	wantLines := []int{2, 4, 7}
	wantCodes := []string{"invalid-json", "unknown-value", "missing-field"}
	if len(got.Problems) != len(wantLines) {
		t.Fatalf("import --json problems = %+v; want %d", got.Problems, len(wantLines))
	}
	for i, pr := range got.Problems {
		if pr.File != src || pr.Line != wantLines[i] || pr.Code != wantCodes[i] || pr.Severity != "error" {
			t.Errorf("problem %d = %+v; want %s:%d %s error", i, pr, src, wantLines[i], wantCodes[i])
		}
	}

	// A clean import prints an empty problems array, not null.
	res = p.run("import", "--json=problems", copyFixture(t, "journal.jsonl"))
	if res.code != exitOK {
		t.Fatalf("clean import --json: exit %d; stderr %q", res.code, res.stderr)
	}
	if got := strings.Join(strings.Fields(res.stdout), ""); got != `{"problems":[]}` {
		t.Errorf("clean import --json=problems = %q; want {\"problems\": []}", res.stdout)
	}
}

// TestImportMultiLineRecord imports a record pretty-printed over several
// lines: it lands in the journal as one compact line.
func TestImportMultiLineRecord(t *testing.T) {
	p := newProject(t)
	src := filepath.Join(t.TempDir(), "pretty.jsonl")
	pretty := "{\n  \"id\": \"p-1\",\n  \"iteration\": 1,\n  \"ts\": \"2026-03-09T09:00:00Z\",\n  \"tier\": \"auto_approve\",\n" +
		"  \"depth\": \"trivial\",\n  \"category\": \"quality\",\n  \"input\": \"Pretty printed\",\n  \"decision\": \"APPROVED\"\n}\n"
	if err := os.WriteFile(src, []byte(pretty), 0o644); err != nil {
		t.Fatal(err)
	}
	res := p.run("import", src)
	if res.code != exitOK {
		t.Fatalf("import: exit %d; stderr %q", res.code, res.stderr)
	}
	if want := src + ": 1 record: 1 appended, 0 already present, 0 conflicts, 0 rejected lines\n"; res.stdout != want {
		t.Errorf("import stdout = %q; want %q", res.stdout, want)
	}
	want := `{"id":"p-1","iteration":1,"ts":"2026-03-09T09:00:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"Pretty printed","decision":"APPROVED"}` + "\n"
	if got := p.read(journalRel); got != want {
		t.Errorf("journal = %q; want %q", got, want)
	}
	if got := p.mustRun("export").stdout; got != want {
		t.Errorf("export = %q; want %q", got, want)
	}
}
