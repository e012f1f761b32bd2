package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/internal/golden"
)

// copyTestdata copies a fixture into dir and returns its path.
func copyTestdata(tb testing.TB, name, dir string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(readTestdata(tb, name)), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

func (e *testEnv) importFiles(opts ImportOptions, paths ...string) ImportReport {
	e.tb.Helper()
	rep, err := e.ix.Import(e.ctx, paths, opts)
	if err != nil {
		e.tb.Fatalf("Import(%q): %v", paths, err)
	}
	return rep
}

// fixtureLines returns lines of a fixture, by 1-based number, each with its
// newline.
func fixtureLines(tb testing.TB, name string, nums ...int) string {
	tb.Helper()
	all := strings.Split(readTestdata(tb, name), "\n")
	var b strings.Builder
	for _, n := range nums {
		b.WriteString(all[n-1] + "\n")
	}
	return b.String()
}

func fileCounts(f *ImportFile) string {
	return fmt.Sprintf("appended %d, skipped %d, conflicts %d, rejected %d", f.Appended, f.Skipped, f.Conflicts, f.Rejected)
}

func TestImportMixedFile(t *testing.T) {
	e := newTestEnv(t)
	src := copyTestdata(t, "import-mixed.jsonl", t.TempDir())
	rep := e.importFiles(ImportOptions{}, src)

	if len(rep.Files) != 1 || rep.Files[0].Path != src {
		t.Fatalf("Files = %+v; want one, %s", rep.Files, src)
	}
	if got, want := fileCounts(rep.Files[0]), "appended 4, skipped 1, conflicts 1, rejected 6"; got != want {
		t.Errorf("import: %s; want %s", got, want)
	}
	if !rep.Failed() {
		t.Error("Failed() = false; want true")
	}
	var got []string
	for _, p := range rep.Problems {
		got = append(got, fmt.Sprintf("%d %s", p.Line, p.Code))
		if p.File != src || !strings.HasPrefix(p.Error(), fmt.Sprintf("%s:%d: ", src, p.Line)) {
			t.Errorf("problem %q is not located in %s", p.Error(), src)
		}
	}
	want := []string{"2 unknown-value", "5 wrong-type", "6 missing-field", "8 invalid-json", "9 torn", "11 not-object", "13 conflict"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems = %q; want %q", got, want)
	}
	// A torn fragment in a journal is a warning; a line of a source file
	// that is not imported is rejected, whatever it is.
	for _, p := range rep.Problems {
		if p.Severity != SevError {
			t.Errorf("problem %q is a %s; want an error (the line is not imported)", p.Error(), p.Severity)
		}
	}
	// Line 13 conflicts with line 4 of the same file, imported with it.
	if p := rep.Problems[len(rep.Problems)-1]; !strings.Contains(p.Message, fmt.Sprintf(`id "iter-1-2" is already in the journal (%s:4)`, src)) {
		t.Errorf("conflict message = %q; want it to name %s:4", p.Message, src)
	}

	if got, want := e.read(decFile), fixtureLines(t, "import-mixed.jsonl", 1, 4, 7, 10); got != want {
		t.Errorf("journal =\n%s\nwant the valid lines as they were\n%s", got, want)
	}
	if rep.Sync.Decisions != 4 || rep.Sync.Events != 1 {
		t.Errorf("Sync = %d decisions, %d events; want 4, 1", rep.Sync.Decisions, rep.Sync.Events)
	}
	if got := e.outcome("iter-1-1"); got != OutcomeCorrect {
		t.Errorf("outcome of iter-1-1 = %s; want %s", got, OutcomeCorrect)
	}

	t.Run("again", func(t *testing.T) {
		journal := e.read(decFile)
		before := e.snapshot()
		rep := e.importFiles(ImportOptions{}, src)
		if got, want := fileCounts(rep.Files[0]), "appended 0, skipped 5, conflicts 1, rejected 6"; got != want {
			t.Errorf("second import: %s; want %s", got, want)
		}
		if e.read(decFile) != journal {
			t.Error("second import changed the journal")
		}
		if p := rep.Problems[len(rep.Problems)-1]; p.Line != 13 || !strings.Contains(p.Message, `id "iter-1-2" is already in the journal (`+decFile+":2)") {
			t.Errorf("conflict = line %d %q; want line 13 naming %s:2", p.Line, p.Message, decFile)
		}
		if after := e.snapshot(); !reflect.DeepEqual(before, after) {
			t.Errorf("second import changed the index:\n%s", diffSnapshots(before, after))
		}
	})
}

func TestImportConflicts(t *testing.T) {
	first := `{"id":"iter-1-1","iteration":1,"ts":"2026-03-08T10:00:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"Add ESLint","decision":"APPROVED","retrograde":{"previous_id":null,"outcome":"N/A"},"confidence":0.9}`
	tests := []struct {
		name     string
		line     string
		conflict bool
	}{
		{"same bytes", first, false},
		{"same record spaced and reordered", `{ "retrograde" : {"outcome":"N/A","previous_id":null}, "confidence": 0.9, "input":"Add ESLint","decision":"APPROVED","id":"iter-1-1","iteration":1,"ts":"2026-03-08T10:00:00Z","tier":"auto_approve","depth":"trivial","category":"quality"}`, false},
		{"same record with escapes", strings.Replace(first, "Add ESLint", `Add \u0045SLint`, 1), false},
		{"different value", strings.Replace(first, "Add ESLint", "Add Prettier", 1), true},
		{"extra field", strings.Replace(first, `"decision":"APPROVED"`, `"decision":"APPROVED","reason":"r"`, 1), true},
		{"same number spelled differently", strings.Replace(first, `"confidence":0.9`, `"confidence":0.90`, 1), false},
		{"different number", strings.Replace(first, `"confidence":0.9`, `"confidence":0.8`, 1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.write(decFile, first+"\n")
			e.sync()
			src := filepath.Join(t.TempDir(), "other.jsonl")
			if err := os.WriteFile(src, []byte(tt.line+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := e.importFiles(ImportOptions{}, src)
			if e.read(decFile) != first+"\n" {
				t.Errorf("journal changed to %q", e.read(decFile))
			}
			f := rep.Files[0]
			if tt.conflict {
				if f.Conflicts != 1 || f.Skipped != 0 || !rep.Failed() {
					t.Errorf("import: %s, failed %v; want one conflict", fileCounts(f), rep.Failed())
				}
				if len(rep.Problems) != 1 || rep.Problems[0].Code != CodeConflict || rep.Problems[0].Line != 1 || rep.Problems[0].RecordID != "iter-1-1" {
					t.Errorf("problems = %+v; want a conflict at line 1 for iter-1-1", rep.Problems)
				}
				return
			}
			if f.Skipped != 1 || f.Conflicts != 0 || rep.Failed() {
				t.Errorf("import: %s, failed %v; want the record skipped", fileCounts(f), rep.Failed())
			}
		})
	}
}

func TestImportDryRun(t *testing.T) {
	e := newTestEnv(t)
	e.write(decFile, lines(dec("iter-0-1", 0, 0)))
	e.sync()
	journal := e.read(decFile)
	before := e.snapshot()
	beforeFiles, err := e.store.Files(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	src := copyTestdata(t, "import-mixed.jsonl", t.TempDir())

	rep := e.importFiles(ImportOptions{DryRun: true}, src)
	if got, want := fileCounts(rep.Files[0]), "appended 4, skipped 1, conflicts 1, rejected 6"; got != want {
		t.Errorf("dry run: %s; want %s (what a real import would do)", got, want)
	}
	if e.read(decFile) != journal {
		t.Error("dry run changed the journal")
	}
	if after := e.snapshot(); !reflect.DeepEqual(before, after) {
		t.Errorf("dry run changed the index:\n%s", diffSnapshots(before, after))
	}
	afterFiles, err := e.store.Files(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(beforeFiles, afterFiles) {
		t.Errorf("dry run changed the sync state:\n%+v\nwant\n%+v", afterFiles, beforeFiles)
	}
	if _, err := os.Stat(e.path(retroFile)); !os.IsNotExist(err) {
		t.Errorf("dry run created %s", retroFile)
	}
}

func TestImportDryRunWithoutJournal(t *testing.T) {
	e := newTestEnv(t)
	src := copyTestdata(t, "import-mixed.jsonl", t.TempDir())
	rep := e.importFiles(ImportOptions{DryRun: true}, src)
	if rep.Files[0].Appended != 4 {
		t.Errorf("dry run: %s; want 4 appended", fileCounts(rep.Files[0]))
	}
	if _, err := os.Stat(e.path(decFile)); !os.IsNotExist(err) {
		t.Errorf("dry run created the journal (stat: %v)", err)
	}
}

func TestImportPrettyPrinted(t *testing.T) {
	e := newTestEnv(t)
	src := copyTestdata(t, "doc-example.pretty.decision-record.json", t.TempDir())
	rep := e.importFiles(ImportOptions{}, src)
	if f := rep.Files[0]; f.Appended != 1 || rep.Failed() {
		t.Fatalf("import: %s; want 1 appended", fileCounts(f))
	}
	if len(rep.Problems) != 1 || rep.Problems[0].Code != CodeMultiline || rep.Problems[0].Line != 1 || rep.Problems[0].LineEnd != 15 || rep.Problems[0].Severity != SevWarning {
		t.Errorf("problems = %+v; want one multi-line warning for lines 1-15", rep.Problems)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(readTestdata(t, "doc-example.pretty.decision-record.json"))); err != nil {
		t.Fatal(err)
	}
	if got, want := e.read(decFile), compact.String()+"\n"; got != want {
		t.Errorf("journal = %q; want the record on one line %q", got, want)
	}
	if d := e.decision("iter-7-1"); d.Line != 1 || d.LineEnd != 1 || d.Input != "Add ESLint auto-fix to CI pipeline" {
		t.Errorf("iter-7-1 = lines %d-%d %q; want line 1", d.Line, d.LineEnd, d.Input)
	}
	// Imported again, it is the same record.
	if rep := e.importFiles(ImportOptions{}, src); rep.Files[0].Skipped != 1 {
		t.Errorf("second import: %s; want it skipped", fileCounts(rep.Files[0]))
	}
}

func TestImportForeignLineEndings(t *testing.T) {
	tests := []struct {
		name string
		src  string
	}{
		{"CRLF", dec("iter-1-1", 1, 0) + "\r\n" + dec("iter-1-2", 1, 1) + "\r\n"},
		{"no final newline", dec("iter-1-1", 1, 0) + "\n" + dec("iter-1-2", 1, 1)},
		{"byte order mark", "\xef\xbb\xbf" + lines(dec("iter-1-1", 1, 0), dec("iter-1-2", 1, 1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			src := filepath.Join(t.TempDir(), "foreign.jsonl")
			if err := os.WriteFile(src, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := e.importFiles(ImportOptions{}, src)
			if rep.Files[0].Appended != 2 || rep.Failed() {
				t.Fatalf("import: %s; want 2 appended", fileCounts(rep.Files[0]))
			}
			if got, want := e.read(decFile), lines(dec("iter-1-1", 1, 0), dec("iter-1-2", 1, 1)); got != want {
				t.Errorf("journal = %q; want %q", got, want)
			}
		})
	}
}

func TestImportAfterTornFragment(t *testing.T) {
	e := newTestEnv(t)
	frag := `{"id":"iter-1-2","itera`
	e.write(decFile, lines(dec("iter-1-1", 1, 0))+frag)
	e.sync()
	src := filepath.Join(t.TempDir(), "more.jsonl")
	if err := os.WriteFile(src, []byte(lines(dec("iter-2-1", 2, 5))), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := e.importFiles(ImportOptions{}, src)
	if rep.Files[0].Appended != 1 {
		t.Fatalf("import: %s; want 1 appended", fileCounts(rep.Files[0]))
	}
	if got, want := e.read(decFile), lines(dec("iter-1-1", 1, 0), frag, dec("iter-2-1", 2, 5)); got != want {
		t.Errorf("journal = %q; want the fragment kept on its own line and the record after it: %q", got, want)
	}
	if d := e.decision("iter-2-1"); d.Line != 3 {
		t.Errorf("iter-2-1 at line %d; want 3", d.Line)
	}
}

func TestExportJSONLGolden(t *testing.T) {
	e := newTestEnv(t)
	input := readTestdata(t, "export-input.jsonl")
	src := copyTestdata(t, "export-input.jsonl", t.TempDir())
	rep := e.importFiles(ImportOptions{}, src)
	if rep.Failed() || rep.Files[0].Appended != strings.Count(input, "\n") {
		t.Fatalf("import: %s, problems %+v; want every line appended", fileCounts(rep.Files[0]), rep.Problems)
	}
	var out bytes.Buffer
	n, err := ExportJSONL(e.ctx, e.store, db.DecisionFilter{}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if n != strings.Count(input, "\n") {
		t.Errorf("ExportJSONL wrote %d records; want %d", n, strings.Count(input, "\n"))
	}
	golden.Check(t, filepath.Join("testdata", "export.golden"), out.Bytes())
	if out.String() != input {
		t.Errorf("ExportJSONL =\n%s\nwant the imported lines byte for byte\n%s", out.Bytes(), input)
	}

	// A filtered export is the matching lines, in journal order.
	out.Reset()
	if _, err := ExportJSONL(e.ctx, e.store, db.DecisionFilter{Category: "quality"}, &out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), fixtureLines(t, "export-input.jsonl", 1, 6); got != want {
		t.Errorf("ExportJSONL(category quality) =\n%s\nwant\n%s", got, want)
	}
}

func TestExportPrettyRecordFromJournal(t *testing.T) {
	e := newTestEnv(t)
	pretty := readTestdata(t, "doc-example.pretty.decision-record.json")
	e.write(decFile, pretty+lines(dec("iter-8-1", 8, 0)))
	e.sync()
	var out bytes.Buffer
	if _, err := ExportJSONL(e.ctx, e.store, db.DecisionFilter{}, &out); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(pretty)); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), compact.String()+"\n"+lines(dec("iter-8-1", 8, 0)); got != want {
		t.Errorf("ExportJSONL = %q; want %q", got, want)
	}
}

func TestCompactLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a": 1,  "b":[1, 2]}`, `{"a": 1,  "b":[1, 2]}`},
		{"{\n  \"a\": 1,\n  \"b\": [1, 2]\n}", `{"a":1,"b":[1,2]}`},
		{"{\r\n  \"a\": \"x y\"\r\n}", `{"a":"x y"}`},
		{"{\n\"a\": ", `{ "a": `},
	}
	for _, tt := range tests {
		if got := compactLine(tt.in); got != tt.want {
			t.Errorf("compactLine(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestImportMissingFile(t *testing.T) {
	e := newTestEnv(t)
	missing := filepath.Join(t.TempDir(), "nope.jsonl")
	_, err := e.ix.Import(e.ctx, []string{missing}, ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Import(%s) = %v; want an error naming it", missing, err)
	}
	_, err = e.ix.Import(e.ctx, []string{t.TempDir()}, ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Import(a directory) = %v; want not a regular file", err)
	}
}

// TestImportDryRunStaleIndex: a dry run writes nothing, not even the sync of
// lines other tools appended since the last command.
// TestImportDryRunAppendsNothing: a dry run syncs what others appended (so
// its counts are right) and appends nothing to the journal.
func TestImportDryRunAppendsNothing(t *testing.T) {
	e := newTestEnv(t)
	e.write(decFile, lines(dec("iter-0-1", 0, 0)))
	e.sync()
	e.appendRaw(decFile, lines(dec("iter-0-2", 0, 1)))
	journalBefore, err := os.ReadFile(e.path(decFile))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "new.jsonl")
	if err := os.WriteFile(src, []byte(lines(dec("iter-0-2", 0, 1), dec("iter-0-3", 0, 2))), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := e.importFiles(ImportOptions{DryRun: true}, src)
	if got, want := fileCounts(rep.Files[0]), "appended 1, skipped 1, conflicts 0, rejected 0"; got != want {
		t.Errorf("dry run: %s; want %s", got, want)
	}
	journalAfter, err := os.ReadFile(e.path(decFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(journalAfter) != string(journalBefore) {
		t.Errorf("dry run changed the journal:\n%s\nwant\n%s", journalAfter, journalBefore)
	}
}
