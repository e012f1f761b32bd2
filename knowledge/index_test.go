package knowledge

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSyncIncremental(t *testing.T) {
	e := newTestEnv(t)
	e.withErrors("template.errors.json")
	e.write(knowledgeFile(PatternsFile), readFixture(t, "template.patterns.md"))
	rep := e.sync()
	if len(rep.Files) != 2 || rep.Files[0].Entries != 4 || rep.Files[0].Regex != 4 || rep.Files[1].Entries != 3 {
		t.Fatalf("first sync read %+v; want errors.json (4 entries, 4 regexes) and patterns.md (3 entries)", rep.Files)
	}
	if rep := e.sync(); len(rep.Files) != 0 {
		t.Errorf("second sync re-read %+v; want nothing (files unchanged)", rep.Files)
	}
	// A new mtime with the same bytes: stat differs, hash does not.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(e.path(knowledgeFile(ErrorsFile)), later, later); err != nil {
		t.Fatal(err)
	}
	if rep := e.sync(); len(rep.Files) != 0 {
		t.Errorf("sync after touch re-indexed %+v; want nothing (same content)", rep.Files)
	}
	data := e.read(knowledgeFile(ErrorsFile))
	e.write(knowledgeFile(ErrorsFile), bytes.Replace(data, []byte(`"NEXT_REDIRECT"`), []byte(`"NEXT_NOT_FOUND"`), 1))
	rep = e.sync()
	if len(rep.Files) != 1 || rep.Files[0].Path != knowledgeFile(ErrorsFile) {
		t.Fatalf("sync after an edit read %+v; want errors.json only", rep.Files)
	}
	if ms := e.match("Error: NEXT_NOT_FOUND", 5); len(ms) == 0 || ms[0].Key != "err-002" {
		t.Errorf("after the edit, match = %v; want err-002 first", keys(ms))
	}
	// The file disappears: its entries go.
	if err := os.Remove(e.path(knowledgeFile(ErrorsFile))); err != nil {
		t.Fatal(err)
	}
	rep = e.sync()
	if len(rep.Files) != 1 || !rep.Files[0].Gone {
		t.Errorf("sync after removal = %+v; want errors.json gone", rep.Files)
	}
	rs, err := e.k.List(e.ctx, Filter{Kind: KindError})
	if err != nil || len(rs) != 0 {
		t.Errorf("List after removal = %d entries, %v; want none", len(rs), err)
	}
}

func TestSyncBrokenFile(t *testing.T) {
	e := newTestEnv(t)
	e.withErrors("template.errors.json")
	e.sync()
	e.write(knowledgeFile(ErrorsFile), []byte("{\n  \"errors\": [\n    {\"id\": \"err-001\",\n"))
	for i := range 2 {
		rep := e.sync()
		if len(rep.Broken) != 1 || rep.Broken[0].Line != 4 || !strings.Contains(rep.Broken[0].Message, "not valid JSON") {
			t.Fatalf("sync %d: broken = %+v; want conductor/knowledge/errors.json:4 not valid JSON, on every sync", i, rep.Broken)
		}
	}
	if rs, _ := e.k.List(e.ctx, Filter{}); len(rs) != 0 {
		t.Errorf("a broken file keeps %d entries indexed; want none", len(rs))
	}
	e.withErrors("template.errors.json")
	if rep := e.sync(); len(rep.Broken) != 0 || len(rep.Files) != 1 || rep.Files[0].Entries != 4 {
		t.Errorf("after the fix: %+v; want 4 entries and nothing broken", rep)
	}
}

func TestMatchRanking(t *testing.T) {
	e := newTestEnv(t)
	e.withErrors("template.errors.json")
	e.write(knowledgeFile(PatternsFile), readFixture(t, "template.patterns.md"))
	e.write("other/knowledge/errors.json", readFixture(t, "loop-fixer.errors.json"))
	if _, err := e.k.Register(e.ctx, "other/knowledge"); err != nil {
		t.Fatal(err)
	}
	e.write("third/errors.json", readFixture(t, "gearsnitch.errors.json"))
	if _, err := e.k.Register(e.ctx, "third"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"regex, case-insensitive", "error: cannot FIND module 'react-dom/client'", []string{"regex:err-003"}},
		{"two regexes: the more specific first", "Type 'string' is not assignable to type 'number'. NEXT_REDIRECT",
			[]string{"regex:err-004", "regex:err-002"}},
		{"regex in a registered directory", "connect ECONNREFUSED 127.0.0.1:5432", []string{"regex:err-001"}},
		{"alternation", "HTTP 429 Too Many Requests from the API", []string{"regex:err-003"}},
		{"full text for entries without a regex", "npm run lint failed: ESLint 9 could not find eslint.config.js",
			[]string{"text:api-eslint-flat-config-missing"}},
		{"patterns.md by full text", "each component creates a new supabase client", []string{"text:supabase-client-singleton"}},
		{"nothing", "segmentation fault", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := e.k.Match(e.ctx, tt.text, MatchOptions{K: 5})
			if err != nil {
				t.Fatal(err)
			}
			got := keys(ms)
			if len(got) < len(tt.want) || !slices.Equal(got[:len(tt.want)], tt.want) || (tt.want == nil && len(got) > 0) {
				t.Errorf("Match(%q) = %v; want it to start with %v", tt.text, got, tt.want)
			}
			for i, m := range ms {
				if m.Rank != i+1 {
					t.Errorf("rank of %s = %d; want %d", m.Key, m.Rank, i+1)
				}
				if i > 0 && m.Via == ViaRegex && ms[i-1].Via == ViaText {
					t.Errorf("regex match %s ranked after a text match", m.Key)
				}
			}
		})
	}
}

// TestMatchHostile: the seed's lookup returns the first entry for every
// error when that entry has no pattern (new RegExp(undefined) matches
// everything); orbit never lets a missing, empty, invalid or catch-all
// pattern match as a regex.
func TestMatchHostile(t *testing.T) {
	e := newTestEnv(t)
	e.withErrors("hostile.errors.json")
	rep := e.sync()
	var errs, warns []string
	for _, p := range rep.Problems {
		if p.Severity == SevError {
			errs = append(errs, fmt.Sprintf("%d:%s", p.Line, p.Code))
		} else if p.Code == "pattern-unsupported" {
			warns = append(warns, fmt.Sprintf("%d:%s", p.Line, p.Message))
		}
	}
	want := []string{"13:pattern-matches-all", "18:pattern-invalid", "48:pattern-invalid",
		"58:pattern-invalid", "68:not-object", "73:pattern-matches-all"}
	if !slices.Equal(errs, want) {
		t.Errorf("problems = %v; want %v", errs, want)
	}
	// Valid JavaScript that RE2 cannot run: a warning naming the construct,
	// per entry (issue 18).
	wantWarns := []string{"23:err-005: uses a lookbehind, `(?<=…)`, which Go's RE2 does not support (it keeps matching linear in time): matched by full text only",
		"28:err-006: uses a backreference, `\\1`, which Go's RE2 does not support (it keeps matching linear in time): matched by full text only"}
	if !slices.Equal(warns, wantWarns) {
		t.Errorf("unsupported = %q; want %q", warns, wantWarns)
	}
	// ... and its entry is found by its text.
	found := false
	for _, m := range e.match("the Lookbehind of JavaScript", 3) {
		found = found || (m.Key == "err-005" && m.Via != ViaRegex && m.PatternState == StateUnsupported)
	}
	if !found {
		t.Errorf("the unsupported entry err-005 is not found by its text")
	}
	for _, text := range []string{"segfault in libc", "", "x", strings.Repeat("a", 50000) + "!"} {
		ms, err := e.k.Match(e.ctx, text, MatchOptions{K: 20})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.Via == ViaRegex && m.PatternState != StateOK {
				t.Errorf("Match(%.20q) matched %s by an unusable regex %q", text, m.Key, m.Pattern)
			}
			if m.Via == ViaRegex && !slices.Contains([]string{"err-007", "err-009"}, m.Key) {
				t.Errorf("Match(%.20q) = regex %s; want only (a+)+$ or the ReDoS pattern", text, m.Key)
			}
		}
	}
	// The pathological patterns run in linear time, matching or not.
	if ms := e.match(strings.Repeat("a", 60000)+"!", 5); len(ms) != 0 {
		t.Errorf("Match(a…a!) = %v; want nothing", keys(ms))
	}
	if ms := e.match("!"+strings.Repeat("a", 60000), 5); len(ms) == 0 || ms[0].Key != "err-007" {
		t.Errorf("Match(!a…a) = %v; want err-007 ((a+)+$ matches the final run of a)", keys(ms))
	}
}

func TestCountsExportAndRebuild(t *testing.T) {
	e := newTestEnv(t)
	e.withErrors("template.errors.json")
	orig := e.read(knowledgeFile(ErrorsFile))
	e.sync()
	e.match("Error: NEXT_REDIRECT", 3)
	e.now = fixedNow.Add(24 * time.Hour)
	e.match("unhandled NEXT_REDIRECT in action", 3)
	e.match("Cannot find module 'x' and Type 'a' is not assignable to type 'b'", 3)
	e.sync()
	check := func(stage string, wantOcc map[string]int64, wantPending, wantHits int64) {
		t.Helper()
		rs, err := e.k.List(e.ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var pending, hits int64
		for _, r := range rs {
			if w, ok := wantOcc[r.Key]; ok && r.Occurrences != w {
				t.Errorf("%s: %s occurrences = %d; want %d", stage, r.Key, r.Occurrences, w)
			}
			pending += r.Pending
			hits += r.Hits
		}
		if pending != wantPending || hits != wantHits {
			t.Errorf("%s: pending %d, hits %d; want %d, %d", stage, pending, hits, wantPending, wantHits)
		}
	}
	occ := map[string]int64{"err-001": 3, "err-002": 3, "err-003": 3, "err-004": 2}
	check("after matches", occ, 4, 4)

	rep, err := e.k.Export(e.ctx, ExportOptions{DryRun: true})
	if err != nil || rep.Files[0].Updated != 3 || !bytes.Equal(e.read(knowledgeFile(ErrorsFile)), orig) {
		t.Fatalf("dry run: %+v, %v; want 3 entries to update and the file untouched", rep.Files, err)
	}
	rep, err = e.k.Export(e.ctx, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.Files[0]; f.Updated != 3 || f.Hits != 4 || f.Backup != knowledgeFile(ErrorsFile)+".bak" {
		t.Errorf("export = %+v; want 3 entries updated with 4 matches and a backup", f)
	}
	goldenFile(t, "template.export.golden", e.read(knowledgeFile(ErrorsFile)))
	if got := e.read(knowledgeFile(ErrorsFile) + ".bak"); !bytes.Equal(got, orig) {
		t.Errorf("the backup differs from the file before the export")
	}
	check("after export", occ, 0, 4)

	// Nothing new: the second export leaves the file byte for byte.
	after := e.read(knowledgeFile(ErrorsFile))
	if rep, err := e.k.Export(e.ctx, ExportOptions{}); err != nil || !rep.Files[0].Unchanged {
		t.Errorf("second export = %+v, %v; want unchanged", rep.Files, err)
	}
	if !bytes.Equal(e.read(knowledgeFile(ErrorsFile)), after) {
		t.Errorf("the second export changed the file")
	}

	// Deleting the index loses nothing: the counts come back from the files.
	e.rebuild()
	e.sync()
	check("after rebuild", occ, 0, 4)
}

// TestExportVoid: an export that appended its journal line but never
// renamed the file did not happen; its matches stay pending.
func TestExportVoid(t *testing.T) {
	e := newTestEnv(t)
	e.withErrors("template.errors.json")
	e.sync()
	e.match("NEXT_REDIRECT", 1)
	data := e.read(knowledgeFile(ErrorsFile))
	line := fmt.Sprintf(`{"ts":"2026-03-09T12:00:00Z","event":"export","file":%q,"before":%q,"after":%q}`+"\n",
		knowledgeFile(ErrorsFile), sha(data), sha([]byte("never written")))
	if err := e.k.appendJournal([]byte(line)); err != nil {
		t.Fatal(err)
	}
	e.sync()
	rs, _ := e.k.List(e.ctx, Filter{File: knowledgeFile(ErrorsFile)})
	if rs[1].Key != "err-002" || rs[1].Pending != 1 || rs[1].Occurrences != 2 {
		t.Errorf("after a void export: %s pending %d occurrences %d; want err-002 pending 1, occurrences 2", rs[1].Key, rs[1].Pending, rs[1].Occurrences)
	}
	if _, err := e.k.Export(e.ctx, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(e.read(knowledgeFile(ErrorsFile)), []byte(`"occurrences": 2,`)) {
		t.Errorf("the real export did not write occurrences 2:\n%s", e.read(knowledgeFile(ErrorsFile)))
	}
}

// TestExportRoundTrip: for every shape, an export with nothing new leaves
// the file byte-identical; with matches, only occurrences and last_seen
// change, and every other byte stays.
func TestExportRoundTrip(t *testing.T) {
	tests := []struct {
		file  string
		match string // an error text that one entry's regex matches ("" for none)
	}{
		{"gearsnitch.errors.json", ""},
		{"RTS-Commander.errors.json", ""},
		{"talemate.errors.json", ""},
		{"template.errors.json", "Hydration failed because the initial UI does not match"},
		{"loop-fixer.errors.json", "Stripe webhook signature verification failed"},
		{"hostile.errors.json", "no id at all"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			e := newTestEnv(t)
			e.withErrors(tt.file)
			orig := e.read(knowledgeFile(ErrorsFile))
			e.sync()
			if _, err := e.k.Export(e.ctx, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := e.read(knowledgeFile(ErrorsFile)); !bytes.Equal(got, orig) {
				t.Fatalf("export with nothing new changed the file:\n%s", got)
			}
			if _, err := os.Stat(e.path(knowledgeFile(ErrorsFile) + ".bak")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("export with nothing new left a backup (%v)", err)
			}
			if tt.match == "" {
				return
			}
			if ms := e.match(tt.match, 1); len(ms) != 1 || ms[0].Via != ViaRegex {
				t.Fatalf("Match(%q) = %v; want one regex match", tt.match, keys(ms))
			}
			if _, err := e.k.Export(e.ctx, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			got := e.read(knowledgeFile(ErrorsFile))
			goldenFile(t, strings.TrimSuffix(tt.file, ".json")+".export.golden", got)
			if _, err := parseRegistry("x", got); err != nil {
				t.Errorf("exported file is not a registry: %v", err)
			}
		})
	}
}

func TestExportCompactFile(t *testing.T) {
	e := newTestEnv(t)
	e.write(knowledgeFile(ErrorsFile), []byte(`{"errors":[{"id":"e1","pattern":"boom","solution":"x"},{"id":"e2","pattern":"bang","solution":"y","occurrences":"4"}]}`))
	e.sync()
	e.match("boom bang", 5)
	if _, err := e.k.Export(e.ctx, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `{"errors":[{"id":"e1","pattern":"boom","solution":"x","occurrences":1,"last_seen":"2026-03-09"},{"id":"e2","pattern":"bang","solution":"y","occurrences":5,"last_seen":"2026-03-09"}]}`
	if got := string(e.read(knowledgeFile(ErrorsFile))); got != want {
		t.Errorf("export of a compact file:\ngot  %s\nwant %s", got, want)
	}
}

func TestAddShapes(t *testing.T) {
	tests := []struct {
		fixture string // "" for no file
		wantID  string
		shape   string
		line    int
	}{
		{"template.errors.json", "err-005", ShapeTemplate, 52},
		{"loop-fixer.errors.json", "err-004", ShapeLoopFixer, 24},
		{"gearsnitch.errors.json", "err-001", ShapeFreeForm, 24},
		{"RTS-Commander.errors.json", "err-001", ShapeTemplate, 4},
		{"talemate.errors.json", "err-001", ShapeTemplate, 4},
		{"", "err-001", ShapeTemplate, 4},
	}
	for _, tt := range tests {
		name := tt.fixture
		if name == "" {
			name = "missing.errors.json"
		}
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t)
			if tt.fixture != "" {
				e.withErrors(tt.fixture)
			}
			added, err := e.k.Add(e.ctx, AddRequest{Pattern: `Module not found: Can't resolve '(.+)'`, Solution: "Add the package to the workspace",
				CodeFix: "npm install <pkg>", Category: "webpack", Track: "build_20260309", Problem: "A dependency is missing"})
			if err != nil {
				t.Fatal(err)
			}
			if added.ID != tt.wantID || added.Shape != tt.shape || added.Line != tt.line || added.Created != (tt.fixture == "") {
				t.Errorf("Add = %+v; want id %s, shape %s, line %d", added, tt.wantID, tt.shape, tt.line)
			}
			got := e.read(knowledgeFile(ErrorsFile))
			goldenFile(t, strings.TrimSuffix(name, ".json")+".add.golden", got)
			reg, err := parseRegistry("x", got)
			if err != nil {
				t.Fatalf("the file after Add is not a registry: %v", err)
			}
			if last := reg.entries[len(reg.entries)-1]; last.Key != tt.wantID || last.Line != tt.line {
				t.Errorf("last entry = %s at line %d; want %s at %d", last.Key, last.Line, tt.wantID, tt.line)
			}
			if ms := e.match("Module not found: Can't resolve 'lodash'", 1); len(ms) != 1 || ms[0].Key != tt.wantID {
				t.Errorf("the new entry does not match: %v", keys(ms))
			}
		})
	}
}

func TestAddRefused(t *testing.T) {
	e := newTestEnv(t)
	e.withErrors("template.errors.json")
	orig := e.read(knowledgeFile(ErrorsFile))
	tests := []struct {
		name    string
		pattern string
		field   string
		msg     string
	}{
		{"invalid", "(unclosed", "pattern", "missing closing )"},
		{"lookbehind", "(?<=a)b", "pattern", "uses a lookbehind"},
		{"catch-all", ".*", "pattern", "matches any text"},
		{"empty", "  ", "pattern", "empty"},
		{"duplicate", "next_redirect", "pattern", "already in conductor/knowledge/errors.json:16 (err-002)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.k.Add(e.ctx, AddRequest{Pattern: tt.pattern, Solution: "s"})
			var re *RequestError
			if !errors.As(err, &re) || re.Field != tt.field || !strings.Contains(re.Msg, tt.msg) {
				t.Errorf("Add(%q) = %v; want a refusal of --%s containing %q", tt.pattern, err, tt.field, tt.msg)
			}
		})
	}
	if _, err := e.k.Add(e.ctx, AddRequest{Pattern: "x", Solution: " "}); err == nil {
		t.Errorf("Add without a solution succeeded")
	}
	if !bytes.Equal(e.read(knowledgeFile(ErrorsFile)), orig) {
		t.Errorf("a refused Add changed the file")
	}
}

func TestNextID(t *testing.T) {
	es := []Entry{{Key: "err-002"}, {Key: "err-010"}, {Key: "custom"}, {Key: "err-7"}}
	if got := nextID(es); got != "err-011" {
		t.Errorf("nextID = %s; want err-011 (after the highest, not the count)", got)
	}
	if got := nextID(nil); got != "err-001" {
		t.Errorf("nextID(nil) = %s; want err-001", got)
	}
}

// installTracks puts the track fixtures in place as conductor/tracks/<id>/metadata.json.
func (e *testEnv) installTracks() {
	e.tb.Helper()
	names, err := filepath.Glob(fixture("tracks/*.metadata.json"))
	if err != nil {
		e.tb.Fatal(err)
	}
	for _, n := range names {
		parts := strings.Split(filepath.Base(n), ".")
		e.write(filepath.Join("conductor", "tracks", parts[1], "metadata.json"), readFixture(e.tb, "tracks/"+filepath.Base(n)))
	}
}

func TestImportDecisions(t *testing.T) {
	e := newTestEnv(t)
	e.installTracks()
	rep, err := e.k.ImportDecisions(e.ctx, e.jix, "conductor/tracks", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tracks) != 6 {
		t.Fatalf("read %d tracks; want 6", len(rep.Tracks))
	}
	var syn *TrackReport
	for _, tr := range rep.Tracks {
		if tr.Track == "autonomous-decisions_20260301" {
			syn = tr
		} else if tr.Decisions != 0 {
			t.Errorf("%s: %d decisions; want 0 (real tracks hold none)", tr.Path, tr.Decisions)
		}
	}
	// The unknown type is imported (the decision was made), said once,
	// and does not fail the import.
	if syn == nil || syn.Decisions != 8 || syn.Appended != 8 || syn.Rejected != 0 || rep.Failed() {
		t.Fatalf("synthetic track = %+v; want 8 decisions, 8 appended, none rejected", syn)
	}
	if len(rep.Problems) != 1 || rep.Problems[0].Severity != SevWarning || !strings.Contains(rep.Problems[0].Error(),
		`metadata.json:57: warning: type "vibes_based" is not a conductor decision type (allowed: ambiguity_resolved,`) {
		t.Errorf("problems = %v; want a warning for the unknown type at line 57", rep.Problems)
	}
	if rep.Sync.Decisions != 8 || rep.Sync.Errors() != 0 {
		t.Errorf("sync indexed %d decisions with %d errors; want 8, 0", rep.Sync.Decisions, rep.Sync.Errors())
	}
	goldenFile(t, "decisions.golden", e.read(".claude/ceo-loop-decisions.jsonl"))

	// Idempotent.
	rep, err = e.k.ImportDecisions(e.ctx, e.jix, "conductor/tracks", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range rep.Tracks {
		if tr.Appended != 0 || tr.Conflicts != 0 {
			t.Errorf("second import of %s: %+v; want nothing appended", tr.Path, tr)
		}
	}
	if rep.Failed() || len(rep.Problems) != 0 {
		t.Errorf("second import: failed %v, problems %v; want exit 0 and nothing said again", rep.Failed(), rep.Problems)
	}
	// A decision changed in the file is a conflict, not a second record.
	p := filepath.Join("conductor", "tracks", "autonomous-decisions_20260301", "metadata.json")
	e.write(p, bytes.Replace(e.read(p), []byte("CSV only"), []byte("CSV and PDF"), 1))
	rep, err = e.k.ImportDecisions(e.ctx, e.jix, "conductor/tracks", false)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Failed() || !strings.Contains(fmt.Sprint(rep.Problems), `"conductor-autonomous-decisions_20260301-1" is already in the journal`) {
		t.Errorf("changed decision: problems %v; want a conflict", rep.Problems)
	}
	// The decisions are in the index like ORBIT's own.
	d, found, err := e.store.Decision(e.ctx, "conductor-autonomous-decisions_20260301-4")
	if err != nil || !found || d.Decision != "REJECTED" || d.Category != "architecture" || d.Tier != "deep_think" || d.Requestor != "conductor" {
		t.Errorf("decision 4 = %+v, %v, %v; want REJECTED architecture deep_think by conductor", d, found, err)
	}
}

func TestMapTier(t *testing.T) {
	tests := []struct{ text, dflt, want, decision string }{
		{"Board APPROVED the migration", "quick_review", "deep_think", "APPROVED"},
		{"Escalated to the user for review", "quick_review", "escalate", "NEEDS_REVIEW"},
		{"Board REJECTED the rewrite", "quick_review", "deep_think", "REJECTED"},
		{"Skipped Task 2.3", "quick_review", "quick_review", "APPROVED"},
		{"Dashboard redesign", "quick_review", "quick_review", "APPROVED"},
	}
	for _, tt := range tests {
		tier := mapTier(tt.text, tt.dflt)
		if d := mapDecision(tt.text, tier); tier != tt.want || d != tt.decision {
			t.Errorf("mapTier/mapDecision(%q) = %s, %s; want %s, %s", tt.text, tier, d, tt.want, tt.decision)
		}
	}
}

func TestJournalLinesAndRewrite(t *testing.T) {
	e := newTestEnv(t)
	e.withErrors("template.errors.json")
	e.sync()
	e.match("NEXT_REDIRECT", 1)
	f, err := os.OpenFile(e.path(JournalFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"event\":\"hit\"}\nnot json\n{\"ts\":\"x\",\"event\":\"unknown\"}\n{\"ts\":\"2026-03-09T12:00:00Z\",\"event\":\"hit\",\"file\":\"conductor/knowledge/errors.json\",\"id\":\"err-002\"}\n{\"partial")
	f.Close()
	rep := e.sync()
	var lines []int
	for _, p := range rep.Problems {
		lines = append(lines, p.Line)
	}
	if !slices.Equal(lines, []int{2, 3, 4}) {
		t.Errorf("bad journal lines reported at %v; want 2, 3, 4", lines)
	}
	rs, _ := e.k.List(e.ctx, Filter{File: knowledgeFile(ErrorsFile)})
	if rs[1].Hits != 2 {
		t.Errorf("err-002 hits = %d; want 2 (the partial last line waits)", rs[1].Hits)
	}
	// Rewriting the journal's past is reported and its events re-read.
	data := e.read(JournalFile)
	e.write(JournalFile, data[bytes.IndexByte(data, '\n')+1:])
	rep = e.sync()
	if len(rep.Rewritten) != 1 {
		t.Errorf("rewritten journal: %+v; want it reported", rep.Rewritten)
	}
	rs, _ = e.k.List(e.ctx, Filter{File: knowledgeFile(ErrorsFile)})
	if rs[1].Hits != 1 {
		t.Errorf("after the rewrite err-002 hits = %d; want 1", rs[1].Hits)
	}
}

func TestStats(t *testing.T) {
	e := newTestEnv(t)
	e.withErrors("hostile.errors.json")
	e.write(knowledgeFile(PatternsFile), readFixture(t, "template.patterns.md"))
	e.sync()
	e.match("x aaaa", 1)
	e.sync()
	s, err := e.k.Stats(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("entries %d errors %d patterns %d regex %d none %d unsupported %d invalid %d all %d hits %d never %d unusable %d top %d",
		s.Entries, s.Errors, s.Patterns, s.Regex, s.NoPattern, s.Unsupported, s.Invalid, s.MatchesAll, s.Hits, len(s.NeverMatched), len(s.Unusable), len(s.Top))
	want := "entries 18 errors 15 patterns 3 regex 5 none 3 unsupported 2 invalid 3 all 2 hits 1 never 14 unusable 10 top 1"
	if got != want {
		t.Errorf("Stats = %s\nwant    %s", got, want)
	}
}

func TestRecordAfterTornLine(t *testing.T) {
	e := newTestEnv(t)
	e.withErrors("template.errors.json")
	e.sync()
	e.write(JournalFile, []byte(`{"ts":"2026-03-09T12:00:00Z","event":"hit","file":"conductor/knowledge/errors.json","id":"err-001"}`+"\n"+`{"ts":"2026-03-09T12:00:00Z","ev`))
	e.match("NEXT_REDIRECT", 1)
	rep := e.sync()
	if len(rep.Problems) != 1 || rep.Problems[0].Line != 2 {
		t.Errorf("problems = %v; want the torn fragment reported at line 2", rep.Problems)
	}
	rs, _ := e.k.List(e.ctx, Filter{File: knowledgeFile(ErrorsFile)})
	if rs[0].Hits != 1 || rs[1].Hits != 1 {
		t.Errorf("hits = %d, %d; want 1, 1 (the new hit on a line of its own)", rs[0].Hits, rs[1].Hits)
	}
}

// TestBareArray: a registry that is a top-level array (no "errors" key) is
// read, added to and exported in its own layout.
func TestBareArray(t *testing.T) {
	e := newTestEnv(t)
	e.write(knowledgeFile(ErrorsFile), []byte("[\n\t{\n\t\t\"id\": \"err-001\",\n\t\t\"pattern\": \"boom\",\n\t\t\"solution\": \"x\"\n\t}\n]\n"))
	if _, err := e.k.Add(e.ctx, AddRequest{Pattern: "bang", Solution: "y"}); err != nil {
		t.Fatal(err)
	}
	e.match("boom", 1)
	if _, err := e.k.Export(e.ctx, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "[\n\t{\n\t\t\"id\": \"err-001\",\n\t\t\"pattern\": \"boom\",\n\t\t\"solution\": \"x\",\n\t\t\"occurrences\": 1,\n\t\t\"last_seen\": \"2026-03-09\"\n\t},\n\t{\n\t\t\"id\": \"err-002\",\n\t\t\"pattern\": \"bang\",\n\t\t\"solution\": \"y\",\n\t\t\"last_seen\": \"2026-03-09\"\n\t}\n]\n"
	if got := string(e.read(knowledgeFile(ErrorsFile))); got != want {
		t.Errorf("bare array after add and export:\n%s\nwant:\n%s", got, want)
	}
}

// TestRebuildKeepsDirectories: a registered directory is in the knowledge
// journal, so a rebuilt index reads it again.
func TestRebuildKeepsDirectories(t *testing.T) {
	e := newTestEnv(t)
	e.write("vendor/kb/errors.json", readFixture(t, "loop-fixer.errors.json"))
	if _, err := e.k.Register(e.ctx, "vendor/kb"); err != nil {
		t.Fatal(err)
	}
	e.rebuild()
	e.sync()
	if ms := e.match("429 Too Many Requests", 1); len(ms) != 1 || ms[0].File != "vendor/kb/errors.json" {
		t.Errorf("after a rebuild, match = %v; want vendor/kb/errors.json's err-003", keys(ms))
	}
}

// TestImportDecisionsSameTrackID: two metadata files with one track_id give
// each decision once; a differing copy is a conflict, never a second line
// the journal would reject.
func TestImportDecisionsSameTrackID(t *testing.T) {
	e := newTestEnv(t)
	meta := `{"track_id": "dup", "autonomous_decisions": [{"timestamp": "2026-03-01T10:00:00Z", "type": "blocker_skipped", "decision": "skip %s"}]}`
	e.write("conductor/tracks/a/metadata.json", []byte(fmt.Sprintf(meta, "x")))
	e.write("conductor/tracks/b/metadata.json", []byte(fmt.Sprintf(meta, "x")))
	e.write("conductor/tracks/c/metadata.json", []byte(fmt.Sprintf(meta, "y")))
	rep, err := e.k.ImportDecisions(e.ctx, e.jix, "conductor/tracks", false)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%d/%d/%d %d/%d/%d %d/%d/%d", rep.Tracks[0].Appended, rep.Tracks[0].Skipped, rep.Tracks[0].Conflicts,
		rep.Tracks[1].Appended, rep.Tracks[1].Skipped, rep.Tracks[1].Conflicts, rep.Tracks[2].Appended, rep.Tracks[2].Skipped, rep.Tracks[2].Conflicts)
	if got != "1/0/0 0/1/0 0/0/1" || rep.Sync.Errors() != 0 {
		t.Errorf("appended/skipped/conflicts per track = %s, sync errors %d; want 1/0/0 0/1/0 0/0/1 and none", got, rep.Sync.Errors())
	}
}

// A same-length edit of a line far before the end (past the tail hash) is
// still noticed: the file changed without growing, so sync compares it line
// by line, reports the rewrite and counts the hits as the file now says.
func TestJournalSameLengthRewrite(t *testing.T) {
	e := newTestEnv(t)
	e.withErrors("template.errors.json")
	e.sync()
	const n = 60
	for range n {
		e.match("NEXT_REDIRECT", 1)
	}
	e.sync()
	rs, _ := e.k.List(e.ctx, Filter{File: knowledgeFile(ErrorsFile)})
	if rs[1].Hits != n || rs[0].Hits != 0 {
		t.Fatalf("hits %s=%d %s=%d; want %d and 0", rs[0].Key, rs[0].Hits, rs[1].Key, rs[1].Hits, n)
	}
	data := e.read(JournalFile)
	first := bytes.IndexByte(data, '\n')
	const tailWindow = 4096 // the bytes the follower's tail hash covers
	if len(data)-first <= tailWindow {
		t.Fatalf("journal of %d bytes: line 1 must lie before the tail hash's %d bytes", len(data), tailWindow)
	}
	line1 := bytes.Replace(data[:first], []byte(`"`+rs[1].Key+`"`), []byte(`"`+rs[0].Key+`"`), 1)
	if len(line1) != first || bytes.Equal(line1, data[:first]) {
		t.Fatalf("edit of line 1 %q did not keep its length or change it", line1)
	}
	e.write(JournalFile, append(line1, data[first:]...))

	rep := e.sync()
	if len(rep.Rewritten) != 1 {
		t.Errorf("same-length rewrite: %+v; want it reported", rep.Rewritten)
	}
	rs, _ = e.k.List(e.ctx, Filter{File: knowledgeFile(ErrorsFile)})
	if rs[0].Hits != 1 || rs[1].Hits != n-1 {
		t.Errorf("after the rewrite hits %s=%d %s=%d; want 1 and %d", rs[0].Key, rs[0].Hits, rs[1].Key, rs[1].Hits, n-1)
	}

	// Touching the file without changing it is not a rewrite.
	now := time.Now().Add(time.Minute)
	if err := os.Chtimes(e.path(JournalFile), now, now); err != nil {
		t.Fatal(err)
	}
	if rep := e.sync(); len(rep.Rewritten) != 0 {
		t.Errorf("touched journal reported rewritten: %+v", rep.Rewritten)
	}
}
