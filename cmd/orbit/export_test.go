package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/report"
)

// importedProject is a project whose journal was filled by importing the
// fixture journal.
func importedProject(t *testing.T) *testProject {
	t.Helper()
	p := newProject(t)
	p.mustRun("import", copyFixture(t, "journal.jsonl"))
	return p
}

func TestExportJSONLGivesBackImportedLines(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		want    func(t *testing.T) string
	}{
		{name: "clean journal", fixture: "journal.jsonl", want: func(t *testing.T) string { return string(readFixture(t, "journal.jsonl")) }},
		{name: "spacing, field order and unknown fields", fixture: "spacing.jsonl", want: func(t *testing.T) string { return string(readFixture(t, "spacing.jsonl")) }},
		{name: "good lines of a mixed file", fixture: "mixed.jsonl", want: func(t *testing.T) string {
			var b strings.Builder
			for _, l := range lines(string(readFixture(t, "mixed.jsonl"))) {
				for _, id := range mixedGood {
					if strings.HasPrefix(l, `{"id":"`+id+`"`) {
						b.WriteString(l + "\n")
					}
				}
			}
			return b.String()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProject(t)
			p.run("import", copyFixture(t, tt.fixture))
			want := tt.want(t)
			for _, args := range [][]string{{"export"}, {"export", "--format", "jsonl"}} {
				res := p.run(args...)
				if res.code != exitOK {
					t.Fatalf("orbit %s: exit %d; stderr %q", strings.Join(args, " "), res.code, res.stderr)
				}
				if res.stdout != want {
					t.Errorf("orbit %s =\n%s\nwant the imported lines byte for byte:\n%s", strings.Join(args, " "), res.stdout, want)
				}
				if res.stderr != "" {
					t.Errorf("orbit %s stderr = %q; want empty", strings.Join(args, " "), res.stderr)
				}
			}
			if got := p.read(journalRel); got != want {
				t.Errorf("journal after import =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestExportCSV(t *testing.T) {
	p := importedProject(t)
	res := p.run("export", "--format", "csv")
	if res.code != exitOK {
		t.Fatalf("export --format csv: exit %d; stderr %q", res.code, res.stderr)
	}
	records, err := csv.NewReader(strings.NewReader(res.stdout)).ReadAll()
	if err != nil {
		t.Fatalf("export --format csv does not parse as CSV: %v\n%s", err, res.stdout)
	}
	if len(records) != 7 {
		t.Fatalf("CSV has %d rows; want a header and 6 decisions", len(records))
	}
	if !slices.Equal(records[0], report.CSVColumns()) {
		t.Errorf("CSV header = %q; want %q", records[0], report.CSVColumns())
	}
	col := func(name string) int { return slices.Index(records[0], name) }
	want := []struct{ id, outcome, input, confidence string }{
		{"iter-1-1", "CORRECT", "Narrow the loop to cli only this session", "0.87"},
		{"iter-1-2", "INCORRECT", "Replace REST with gRPC for /v1/tasks", "0.79"},
		{"iter-2-1", "CORRECT", "Split the integration test suite into fast and slow tiers so CI stays under ten minutes", ""},
		{"iter-2-2", "PENDING", "Add CSV\texport", "0.8"},
		{"iter-3-1", "PENDING", "Deploy to production on Friday", "0.55"},
		{"iter-3-2", "PENDING", "Défer dark mode — next sprint", "1"},
	}
	for i, w := range want {
		r := records[i+1]
		if len(r) != len(records[0]) {
			t.Fatalf("row %d has %d columns; want %d", i+1, len(r), len(records[0]))
		}
		got := struct{ id, outcome, input, confidence string }{r[col("id")], r[col("outcome")], r[col("input")], r[col("confidence")]}
		if got != w {
			t.Errorf("row %d = %+v; want %+v", i+1, got, w)
		}
	}

	// The header is there even when nothing matches.
	res = p.run("export", "--format", "csv", "--category", "feature")
	records, err = csv.NewReader(strings.NewReader(res.stdout)).ReadAll()
	if err != nil || len(records) != 2 || records[1][0] != "iter-2-2" {
		t.Errorf("export --format csv --category feature = %q, %v; want the header and iter-2-2", records, err)
	}
}

func TestExportMarkdown(t *testing.T) {
	p := importedProject(t)
	res := p.run("export", "--format", "md")
	if res.code != exitOK {
		t.Fatalf("export --format md: exit %d; stderr %q", res.code, res.stderr)
	}
	if !strings.HasPrefix(res.stdout, "# Decision journal\n") {
		t.Errorf("export --format md does not start with \"# Decision journal\":\n%s", res.stdout)
	}
	if !strings.Contains(res.stdout, "6 decisions: 2 CORRECT, 1 INCORRECT, 3 PENDING\n") {
		t.Errorf("export --format md has no outcome summary:\n%s", res.stdout)
	}
	for _, id := range []string{"iter-1-1", "iter-1-2", "iter-2-1", "iter-2-2", "iter-3-1", "iter-3-2"} {
		if !strings.Contains(res.stdout, "| "+id+" ") {
			t.Errorf("export --format md has no row for %s", id)
		}
	}
}

func TestExportOut(t *testing.T) {
	p := importedProject(t)
	for _, format := range exportFormats {
		t.Run(format, func(t *testing.T) {
			stdout := p.mustRun("export", "--format", format).stdout
			out := filepath.Join(t.TempDir(), "export."+format)
			res := p.run("export", "--format", format, "--out", out)
			if res.code != exitOK {
				t.Fatalf("export --out: exit %d; stderr %q", res.code, res.stderr)
			}
			if res.stdout != "" {
				t.Errorf("export --out stdout = %q; want empty", res.stdout)
			}
			if want := "exported 6 decisions to " + out + "\n"; res.stderr != want {
				t.Errorf("export --out stderr = %q; want %q", res.stderr, want)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != stdout {
				t.Errorf("--out file differs from standard output:\n%s\nwant\n%s", got, stdout)
			}
			if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
				t.Errorf("export --out left %d files in the directory; want only the export", len(entries))
			}
		})
	}
}

func TestExportCategory(t *testing.T) {
	p := importedProject(t)
	res := p.mustRun("export", "--category", "scope")
	var ids []string
	for _, l := range lines(res.stdout) {
		ids = append(ids, strings.SplitN(strings.TrimPrefix(l, `{"id":"`), `"`, 2)[0])
	}
	if strings.Join(ids, ",") != "iter-1-1,iter-3-2" {
		t.Errorf("export --category scope ids = %q; want iter-1-1, iter-3-2", ids)
	}
}

func TestExportUnknownFormat(t *testing.T) {
	p := importedProject(t)
	res := p.run("export", "--format", "yaml")
	if res.code != exitUsage {
		t.Errorf("export --format yaml: exit %d; want %d", res.code, exitUsage)
	}
	want := "orbit: --format \"yaml\" is not allowed (allowed: jsonl, csv, md)\nRun 'orbit export --help' for usage.\n"
	if res.stderr != want {
		t.Errorf("stderr = %q; want %q", res.stderr, want)
	}
	if res.stdout != "" {
		t.Errorf("stdout = %q; want empty", res.stdout)
	}
}

// TestExportCSVImportRoundTrip: a CSV export has one column per field of
// the decision's form, context and request_id among them, and orbit import
// reads it back to the same decisions.
func TestExportCSVImportRoundTrip(t *testing.T) {
	src := projectWith(t, "journal.jsonl")
	src.mustRun("decide", "--title", "Pin eslint, \"quoted\"\nover two lines", "--category", "quality", "--impact", "low", "--reversible",
		"--context", "CI keeps breaking", "--key", "req-42", "--requestor", "forge:builder")
	csvPath := filepath.Join(t.TempDir(), "decisions.csv")
	src.mustRun("export", "--format", "csv", "--out", csvPath)
	data, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	header := strings.SplitN(string(data), "\n", 2)[0]
	if header != strings.Join(report.CSVColumns(), ",") || !strings.Contains(header, ",context,request_id,") {
		t.Errorf("CSV header %q; want every field of the decision form", header)
	}
	dst := newProject(t)
	dst.mustRun("init")
	if res := dst.run("import", csvPath); res.code != exitOK {
		t.Fatalf("import %s: exit %d\n%s", csvPath, res.code, res.stderr)
	}
	fields := "--json=id,iteration,ts,tier,depth,category,input,decision,reason,next_action,verification,retrograde,confidence,requestor,context,request_id,line"
	want, got := src.mustRun("log", "--limit", "0", fields).stdout, dst.mustRun("log", "--limit", "0", fields).stdout
	if got != want {
		t.Errorf("decisions imported from CSV:\n%s\nwant the exported ones:\n%s", got, want)
	}
	// A bad cell is a rejected line named by the CSV's line.
	bad := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(bad, []byte(header+"\niter-9-1,nine,2026-03-09T12:00:00Z,auto_approve,trivial,quality,x,APPROVED,r,,PENDING,,N/A,,,,,PENDING,,,1\n"), 0o644)
	res := dst.run("import", bad)
	if res.code != exitFindings || !strings.Contains(res.stderr, "bad.csv:2") {
		t.Errorf("import of a bad CSV row: exit %d, stderr %q; want exit 3 naming bad.csv:2", res.code, res.stderr)
	}
}
