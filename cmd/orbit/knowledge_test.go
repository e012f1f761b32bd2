package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/internal/golden"
)

// knowledgeFixture is a file under testdata/knowledge.
func knowledgeFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "knowledge", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// knowledgeGolden compares got with testdata/knowledge/name (-update
// rewrites it).
func knowledgeGolden(tb testing.TB, name, got string) {
	tb.Helper()
	golden.Check(tb, filepath.Join("..", "..", "testdata", "knowledge", name), []byte(got))
}

// put writes a project file, creating its directory.
func (p *testProject) put(rel string, content []byte) {
	p.tb.Helper()
	if err := os.MkdirAll(filepath.Dir(p.path(rel)), 0o755); err != nil {
		p.tb.Fatal(err)
	}
	if err := os.WriteFile(p.path(rel), content, 0o644); err != nil {
		p.tb.Fatal(err)
	}
}

// conductorProject is a project with a conductor knowledge directory made of
// fixtures, and the synthetic track when tracks is true.
func conductorProject(tb testing.TB, errorsFixture, patternsFixture string, tracks bool) *testProject {
	tb.Helper()
	p := newProject(tb)
	if errorsFixture != "" {
		p.put("conductor/knowledge/errors.json", knowledgeFixture(tb, errorsFixture))
	}
	if patternsFixture != "" {
		p.put("conductor/knowledge/patterns.md", knowledgeFixture(tb, patternsFixture))
	}
	if tracks {
		p.put("conductor/tracks/autonomous-decisions_20260301/metadata.json",
			knowledgeFixture(tb, "tracks/synthetic.autonomous-decisions_20260301.metadata.json"))
	}
	p.put("conductor/tracks/backend_core_services_20260411/metadata.json",
		knowledgeFixture(tb, "tracks/gearsnitch.backend_core_services_20260411.metadata.json"))
	return p
}

// runIn runs orbit on the project with stdin.
func (p *testProject) runIn(stdin string, tty bool, args ...string) result {
	p.tb.Helper()
	var out, errOut bytes.Buffer
	f := NewFactory(&IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut, OutTTY: tty})
	f.Now = func() time.Time { return testNow }
	f.Getenv = func(string) string { return "" }
	f.Getwd = func() (string, error) { return p.root, nil }
	code := run(context.Background(), f, append([]string{"--root", p.root}, args...))
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

func TestKnowledgeFlags(t *testing.T) {
	f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	t.Run("match", func(t *testing.T) {
		cases := []struct {
			name    string
			args    []string
			text    string
			stdin   bool
			k       int
			record  bool
			fields  []string
			wantErr string
		}{
			{name: "text", args: []string{"boom"}, text: "boom", k: 5, record: true},
			{name: "stdin dash", args: []string{"-"}, stdin: true, k: 5, record: true},
			{name: "stdin by default when piped", args: nil, stdin: true, k: 5, record: true},
			{name: "k", args: []string{"-k", "2", "x"}, text: "x", k: 2, record: true},
			{name: "no record", args: []string{"--no-record", "x"}, text: "x", k: 5},
			{name: "json fields", args: []string{"--json=id,solution,code_fix", "x"}, text: "x", k: 5, record: true, fields: []string{"id", "solution", "code_fix"}},
			{name: "k zero", args: []string{"-k", "0", "x"}, wantErr: "-k 0: must be between 1 and 100"},
			{name: "two texts", args: []string{"a", "b"}, wantErr: "expected one ERROR TEXT (quote it)"},
			{name: "json unknown field", args: []string{"--json=bogus", "x"}, wantErr: `unknown JSON field "bogus"`},
		}
		for _, tt := range cases {
			t.Run(tt.name, func(t *testing.T) {
				var got *knowledgeMatchOptions
				err := parse(newCmdKnowledgeMatch(f, func(o *knowledgeMatchOptions) error { got = o; return nil }), append([]string{}, tt.args...)...)
				if !checkParseErr(t, tt.args, err, tt.wantErr) {
					return
				}
				if got.Text != tt.text || got.Stdin != tt.stdin || got.K != tt.k || got.NoRecord == tt.record || !slices.Equal(got.JSON.fields, tt.fields) {
					t.Errorf("options = text %q stdin %v k %d no-record %v fields %q; want %q %v %d %v %q",
						got.Text, got.Stdin, got.K, got.NoRecord, got.JSON.fields, tt.text, tt.stdin, tt.k, !tt.record, tt.fields)
				}
			})
		}
	})
	t.Run("match on a terminal without text", func(t *testing.T) {
		ft := NewFactory(&IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, InTTY: true})
		err := parse(newCmdKnowledgeMatch(ft, func(*knowledgeMatchOptions) error { return nil }), []string{}...)
		checkParseErr(t, nil, err, "give the ERROR TEXT as an argument, or pipe it to stdin")
	})
	t.Run("add", func(t *testing.T) {
		cases := []struct {
			name    string
			args    []string
			wantErr string
		}{
			{name: "all flags", args: []string{"--pattern", "x", "--solution", "y", "--code-fix", "z", "--category", "c", "--track", "t", "--problem", "p", "--dir", "d"}},
			{name: "no pattern", args: []string{"--solution", "y"}, wantErr: "--pattern is required"},
			{name: "no solution", args: []string{"--pattern", "x"}, wantErr: "--solution is required"},
			{name: "argument", args: []string{"--pattern", "x", "--solution", "y", "extra"}, wantErr: `unexpected argument "extra"`},
		}
		for _, tt := range cases {
			t.Run(tt.name, func(t *testing.T) {
				var got *knowledgeAddOptions
				err := parse(newCmdKnowledgeAdd(f, func(o *knowledgeAddOptions) error { got = o; return nil }), tt.args...)
				if !checkParseErr(t, tt.args, err, tt.wantErr) {
					return
				}
				r := got.Req
				if r.Pattern != "x" || r.Solution != "y" || r.CodeFix != "z" || r.Category != "c" || r.Track != "t" || r.Problem != "p" || got.Dir != "d" {
					t.Errorf("request = %+v dir %q", r, got.Dir)
				}
			})
		}
	})
	t.Run("import", func(t *testing.T) {
		cases := []struct {
			name    string
			args    []string
			dir     string
			wantErr string
		}{
			{name: "default", args: nil},
			{name: "dir", args: []string{"k"}, dir: "k"},
			{name: "two dirs", args: []string{"a", "b"}, wantErr: "expected at most one DIR, got 2 arguments"},
			{name: "tracks and no decisions", args: []string{"--tracks", "t", "--no-decisions"}, wantErr: "--tracks and --no-decisions cannot both be given"},
		}
		for _, tt := range cases {
			t.Run(tt.name, func(t *testing.T) {
				var got *knowledgeImportOptions
				err := parse(newCmdKnowledgeImport(f, func(o *knowledgeImportOptions) error { got = o; return nil }), append([]string{}, tt.args...)...)
				if checkParseErr(t, tt.args, err, tt.wantErr) && got.Dir != tt.dir {
					t.Errorf("dir = %q; want %q", got.Dir, tt.dir)
				}
			})
		}
	})
	t.Run("list", func(t *testing.T) {
		err := parse(newCmdKnowledgeList(f, func(*knowledgeListOptions) error { return nil }), "--kind", "bogus")
		checkParseErr(t, nil, err, `--kind "bogus" is not allowed (allowed: error, pattern)`)
		var got *knowledgeListOptions
		err = parse(newCmdKnowledgeList(f, func(o *knowledgeListOptions) error { got = o; return nil }), "--kind", "error", "--unusable", "--never-matched")
		if checkParseErr(t, nil, err, "") && (got.Kind != "error" || !got.Unusable || !got.NeverMatched) {
			t.Errorf("list options = %+v", got)
		}
	})
	t.Run("stats and export", func(t *testing.T) {
		checkParseErr(t, nil, parse(newCmdKnowledgeStats(f, func(*knowledgeStatsOptions) error { return nil }), "x"), `unexpected argument "x"`)
		var got *knowledgeExportOptions
		err := parse(newCmdKnowledgeExport(f, func(o *knowledgeExportOptions) error { got = o; return nil }), "--dry-run")
		if checkParseErr(t, nil, err, "") && !got.DryRun {
			t.Errorf("export --dry-run not set")
		}
	})
}

func TestKnowledgeImportCmd(t *testing.T) {
	p := conductorProject(t, "template.errors.json", "template.patterns.md", true)
	res := p.run("knowledge", "import")
	if res.code != exitOK {
		t.Fatalf("import: exit %d; want 0 (an unknown decision type is imported, with a warning)\nstderr:\n%s", res.code, res.stderr)
	}
	knowledgeGolden(t, "cmd-import.golden", res.stdout)
	if want := `conductor/tracks/autonomous-decisions_20260301/metadata.json:57: warning: type "vibes_based" is not a conductor decision type`; !strings.Contains(res.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
	}
	// The decisions are journal records like ORBIT's own.
	res = p.mustRun("log", "--json=id,category,tier,decision,input", "--limit", "0")
	var ds []map[string]string
	if err := json.Unmarshal([]byte(res.stdout), &ds); err != nil || len(ds) != 8 {
		t.Fatalf("log after import: %d decisions, %v; want 8", len(ds), err)
	}
	// An empty decision: its text is the reasoning, not the step.
	if !strings.Contains(res.stdout, `"input": "Skipped the flaky e2e suite until the staging database is back"`) {
		t.Errorf("the decision without text is not read from its reasoning:\n%s", res.stdout)
	}
	res = p.mustRun("precedent", "document store instead of Postgres", "--json=id,decision")
	if !strings.Contains(res.stdout, "conductor-autonomous-decisions_20260301-4") {
		t.Errorf("precedent search does not find the board's decision:\n%s", res.stdout)
	}
	// Again: nothing new, nothing said, exit 0.
	res = p.run("knowledge", "import", "--json=decisions")
	if res.code != exitOK || !strings.Contains(res.stdout, `"appended": 0`) || !strings.Contains(res.stdout, `"skipped": 8`) {
		t.Errorf("second import: exit %d\n%s", res.code, res.stdout)
	}
	// Imported at iteration 0, they keep their own track: the ORBIT loop,
	// ten iterations on, does not count them stale.
	p.write(".claude/ceo-loop-state.json", `{"active": true, "iteration": 10, "max_iterations": 20}`)
	if res := p.run("stale", "--json"); strings.Contains(res.stdout, "conductor-") {
		t.Errorf("stale lists imported decisions:\n%s", res.stdout)
	}
}

// TestKnowledgeReimportOldMapping: a journal imported by an orbit that put
// the step in the text of a decision without one is not in conflict with
// today's import of the same decision: exit 0, nothing appended.
func TestKnowledgeReimportOldMapping(t *testing.T) {
	p := conductorProject(t, "template.errors.json", "", true)
	p.mustRun("knowledge", "import")
	journal := p.read(".claude/ceo-loop-decisions.jsonl")
	old := strings.Replace(journal, `"input":"Skipped the flaky e2e suite until the staging database is back"`, `"input":"EXECUTE"`, 1)
	if old == journal {
		t.Fatal("the decision without text is not in the journal")
	}
	p.write(".claude/ceo-loop-decisions.jsonl", old)
	p.mustRun("rebuild")
	if res := p.run("knowledge", "import", "--json=decisions"); res.code != exitOK || !strings.Contains(res.stdout, `"conflicts": 0`) {
		t.Errorf("re-import over the old mapping: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

func TestKnowledgeImportClean(t *testing.T) {
	p := conductorProject(t, "gearsnitch.errors.json", "gearsnitch.patterns.md", false)
	res := p.mustRun("knowledge", "import")
	want := "conductor/knowledge/errors.json: free-form, 3 entries: 0 with a regex, 3 full-text only (no pattern), 0 unusable regexes\n" +
		"conductor/knowledge/patterns.md: bullets, 12 entries\n" +
		"conductor/tracks: 1 track, 0 autonomous decisions: 0 appended, 0 already present, 0 conflicts, 0 rejected\n"
	if res.stdout != want {
		t.Errorf("import stdout:\n%s\nwant:\n%s", res.stdout, want)
	}
	if res.stderr != "" {
		t.Errorf("import stderr = %q; want empty", res.stderr)
	}
}

func TestKnowledgeImportErrors(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(p *testProject)
		args    []string
		code    int
		wantErr string
	}{
		{name: "no conductor directory", args: []string{"knowledge", "import"}, code: exitError, wantErr: "knowledge directory conductor/knowledge: not found under"},
		{name: "not a directory", args: []string{"knowledge", "import", "nowhere"}, code: exitError, wantErr: "knowledge directory nowhere: not a directory"},
		{name: "empty directory", setup: func(p *testProject) { os.MkdirAll(p.path("conductor/knowledge"), 0o755) },
			args: []string{"knowledge", "import"}, code: exitError, wantErr: "holds neither errors.json nor patterns.md"},
		{name: "hostile patterns", setup: func(p *testProject) {
			p.put("conductor/knowledge/errors.json", knowledgeFixture(p.tb, "hostile.errors.json"))
		},
			args: []string{"knowledge", "import", "--no-decisions"}, code: exitFindings, wantErr: "conductor/knowledge/errors.json:18: err-004: invalid regex: missing closing ): `(unclosed group`"},
		{name: "broken JSON", setup: func(p *testProject) {
			p.put("conductor/knowledge/errors.json", []byte("{\"errors\": [\n  {\"id\": }\n]}"))
		},
			args: []string{"knowledge", "import", "--no-decisions"}, code: exitFindings, wantErr: "conductor/knowledge/errors.json:2: not valid JSON: unexpected '}', expecting a value; its entries are not indexed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProject(t)
			if tt.setup != nil {
				tt.setup(p)
			}
			res := p.run(tt.args...)
			if res.code != tt.code || !strings.Contains(res.stderr, tt.wantErr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", res.code, res.stderr, tt.code, tt.wantErr)
			}
		})
	}
	res := orbit(t, env{}, "knowledge", "stats")
	if res.code != exitError || !strings.Contains(res.stderr, "not inside an orbit project") {
		t.Errorf("outside a project: exit %d, %q; want 1 and a one-line reason", res.code, res.stderr)
	}
}

func TestKnowledgeMatchCmd(t *testing.T) {
	p := conductorProject(t, "template.errors.json", "template.patterns.md", false)
	p.put("other/errors.json", knowledgeFixture(t, "gearsnitch.errors.json"))
	if res := p.runIn("", false, "knowledge", "import", "other", "--no-decisions"); res.code != exitOK {
		t.Fatalf("import other: exit %d\n%s", res.code, res.stderr)
	}
	text := "Type 'string' is not assignable to type 'User'. NEXT_REDIRECT; also eslint could not find the config"
	res := p.runIn("", true, "knowledge", "match", "--no-record", text)
	if res.code != exitOK {
		t.Fatalf("match: exit %d\n%s", res.code, res.stderr)
	}
	knowledgeGolden(t, "cmd-match-terminal.golden", res.stdout)
	res = p.runIn(text, false, "knowledge", "match", "--no-record", "-")
	knowledgeGolden(t, "cmd-match-piped.golden", res.stdout)
	for i, l := range lines(res.stdout) {
		if n := strings.Count(l, "\t"); n != 6 {
			t.Errorf("piped line %d has %d tabs; want 6: %q", i+1, n, l)
		}
	}

	res = p.run("knowledge", "match", "kernel panic")
	if res.code != exitOK || res.stdout != "" || res.stderr != "no known solution\n" {
		t.Errorf("no match: exit %d, stdout %q, stderr %q; want 0, nothing, 'no known solution'", res.code, res.stdout, res.stderr)
	}
	res = p.run("knowledge", "match", "--json", "kernel panic")
	if strings.TrimSpace(res.stdout) != "[]" {
		t.Errorf("no match --json = %q; want []", res.stdout)
	}
	res = p.run("knowledge", "match", "   ")
	if res.code != exitUsage {
		t.Errorf("blank text: exit %d; want 2", res.code)
	}

	// Counting: two recorded matches of err-002, then export.
	p.mustRun("knowledge", "match", "NEXT_REDIRECT")
	p.mustRun("knowledge", "match", "next_redirect thrown")
	res = p.mustRun("knowledge", "list", "--kind", "error", "--json=id,occurrences,pending_hits,hits")
	if !strings.Contains(res.stdout, "\"id\": \"err-002\",\n    \"occurrences\": 3,\n    \"pending_hits\": 2,\n    \"hits\": 2") {
		t.Errorf("list after two matches:\n%s", res.stdout)
	}
	res = p.mustRun("knowledge", "export")
	want := "conductor/knowledge/errors.json: updated 1 entries with 2 matches (backup: conductor/knowledge/errors.json.bak)\n" +
		"other/errors.json: unchanged (no matches since the last export)\n"
	if res.stdout != want {
		t.Errorf("export:\n%s\nwant:\n%s", res.stdout, want)
	}
	if !strings.Contains(p.read("conductor/knowledge/errors.json"), "\"occurrences\": 3,\n      \"last_seen\": \"2026-03-09\"") {
		t.Errorf("errors.json after export:\n%s", p.read("conductor/knowledge/errors.json"))
	}
	res = p.mustRun("knowledge", "export")
	if !strings.HasPrefix(res.stdout, "conductor/knowledge/errors.json: unchanged") {
		t.Errorf("second export:\n%s", res.stdout)
	}
}

func TestKnowledgeAddCmd(t *testing.T) {
	p := conductorProject(t, "loop-fixer.errors.json", "", false)
	res := p.run("knowledge", "add", "--pattern", "(?=x)", "--solution", "s")
	if res.code != exitUsage || !strings.Contains(res.stderr, "orbit: --pattern \"(?=x)\": uses a lookahead, `(?=…)`, which Go's RE2 does not support") {
		t.Errorf("lookahead: exit %d\n%s", res.code, res.stderr)
	}
	res = p.run("knowledge", "add", "--pattern", ".*", "--solution", "s")
	if res.code != exitUsage || !strings.Contains(res.stderr, "matches any text") {
		t.Errorf("catch-all: exit %d\n%s", res.code, res.stderr)
	}
	res = p.run("knowledge", "add", "--pattern", "stripe webhook signature verification failed", "--solution", "s")
	if res.code != exitUsage || !strings.Contains(res.stderr, "is already in conductor/knowledge/errors.json:10 (err-002)") {
		t.Errorf("duplicate: exit %d\n%s", res.code, res.stderr)
	}
	res = p.mustRun("knowledge", "add", "--pattern", "ENOSPC: no space left on device", "--solution", "Free disk space on the runner", "--track", "ci_20260309")
	if res.stdout != "added err-004 at conductor/knowledge/errors.json:24 (loop-fixer shape)\n" {
		t.Errorf("add stdout = %q", res.stdout)
	}
	res = p.mustRun("knowledge", "match", "--json=id", "write failed: ENOSPC: no space left on device")
	if !strings.Contains(res.stdout, `"id": "err-004"`) {
		t.Errorf("the added entry does not match:\n%s", res.stdout)
	}
	// A new directory is created and registered.
	res = p.runIn("", false, "knowledge", "add", "--dir", "fresh", "--pattern", "boom", "--solution", "s", "--json")
	if !strings.Contains(res.stdout, `"created": true`) || !strings.Contains(res.stdout, `"file": "fresh/errors.json"`) {
		t.Errorf("add to a new directory:\n%s", res.stdout)
	}
	if res := p.mustRun("knowledge", "match", "--json=id,file", "boom"); !strings.Contains(res.stdout, "fresh/errors.json") {
		t.Errorf("the new directory is not indexed:\n%s", res.stdout)
	}
}

func TestKnowledgeListStatsCmd(t *testing.T) {
	p := conductorProject(t, "hostile.errors.json", "talemate.patterns.md", false)
	p.run("knowledge", "import", "--no-decisions")
	res := p.mustRun("knowledge", "list", "--unusable")
	got := firstColumn(res.stdout)
	want := []string{"err-001", "err-002", "err-003", "err-004", "err-005", "err-006", "err-010", "err-011", "err-012", "err-016"}
	if !slices.Equal(got, want) {
		t.Errorf("list --unusable = %v; want %v", got, want)
	}
	res = p.runTTY("knowledge", "stats")
	knowledgeGolden(t, "cmd-stats-terminal.golden", res.stdout)
	res = p.mustRun("knowledge", "stats", "--json=regex,unsupported,invalid,matches_all,no_pattern")
	var s map[string]int
	if err := json.Unmarshal([]byte(res.stdout), &s); err != nil || s["regex"] != 5 || s["unsupported"] != 2 || s["invalid"] != 3 || s["matches_all"] != 2 || s["no_pattern"] != 3 {
		t.Errorf("stats --json = %v, %v", s, err)
	}
}

func TestKnowledgeUnknownSubcommand(t *testing.T) {
	res := orbit(t, env{}, "knowledge", "mach", "x")
	if res.code != exitUsage || !strings.Contains(res.stderr, `unknown command "mach" for "orbit knowledge"; did you mean match?`) {
		t.Errorf("exit %d, stderr %q; want 2 and a suggestion", res.code, res.stderr)
	}
}
