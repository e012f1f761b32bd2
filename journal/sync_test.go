package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/project"
)

const (
	decFile   = project.DecisionsFile
	retroFile = project.RetroFile
)

func problemSummary(ps []Problem) string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s:%d %s %s", p.File, p.Line, p.Severity, p.Code))
	}
	return strings.Join(out, "; ")
}

func TestSyncIncremental(t *testing.T) {
	e := newTestEnv(t)
	e.write(decFile, lines(dec("iter-1-1", 1, 0), dec("iter-1-2", 1, 1), dec("iter-1-3", 1, 2)))
	rep := e.sync()
	if rep.Decisions != 3 || rep.Events != 0 || len(rep.Problems) != 0 {
		t.Fatalf("first sync = %d decisions, %d events, problems %q; want 3, 0, none", rep.Decisions, rep.Events, problemSummary(rep.Problems))
	}

	e.appendRaw(decFile, lines(dec("iter-2-1", 2, 3), retroDec("iter-2-2", 2, 4, "iter-1-1", OutcomeCorrect)))
	rep = e.sync()
	if rep.Decisions != 2 || rep.Events != 1 || len(rep.Problems) != 0 {
		t.Fatalf("second sync = %d decisions, %d events, problems %q; want 2, 1, none", rep.Decisions, rep.Events, problemSummary(rep.Problems))
	}
	c, err := e.store.Counts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Re-read lines would show as duplicate ids.
	if want := (db.Counts{Decisions: 5, Events: 1, Correct: 1}); c != want {
		t.Errorf("Counts = %+v; want %+v", c, want)
	}
	files, err := e.store.Files(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(e.read(decFile)))
	if len(files) != 1 || files[0].Path != decFile || files[0].SyncedOffset != size || files[0].SyncedLines != 5 {
		t.Fatalf("Files = %+v; want %s synced to offset %d, line 5", files, decFile, size)
	}

	rep = e.sync()
	if !reflect.DeepEqual(rep, SyncReport{}) {
		t.Errorf("sync of an unchanged file = %+v; want an empty report", rep)
	}
	after, err := e.store.Files(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, files) {
		t.Errorf("sync of an unchanged file changed its state:\n%+v\nwant\n%+v", after, files)
	}
}

func TestSyncEmptyProject(t *testing.T) {
	e := newTestEnv(t)
	rep := e.sync()
	if !reflect.DeepEqual(rep, SyncReport{}) {
		t.Errorf("sync with no journal = %+v; want an empty report", rep)
	}
	if files, err := e.store.Files(e.ctx); err != nil || len(files) != 0 {
		t.Errorf("Files = %+v, %v; want none", files, err)
	}
}

func TestSyncProblemsLocated(t *testing.T) {
	e := newTestEnv(t)
	pretty := readTestdata(t, "doc-example.pretty.decision-record.json")
	pretty = strings.Replace(pretty, "iter-7-1", "iter-7-2", 1)
	e.write(decFile, lines(
		dec("iter-1-1", 1, 0),
		strings.Replace(dec("iter-1-2", 1, 1), `"tier":"auto_approve"`, `"tier":"urgent"`, 1),
		`{"id":"iter-1-3",`,
		"",
		strings.TrimSuffix(readTestdata(t, "doc-example.ceo-loop-decisions.jsonl"), "\n"),
		`{"id":"iter-1-4","input":"`+"\x00"+`"}`,
	)+pretty+lines(
		`[1,2,3]`,
		retroDec("iter-1-5", 1, 5, "iter-0-0", OutcomeCorrect),
	))
	rep := e.sync()
	want := []string{
		decFile + ":2 error unknown-value",
		decFile + ":3 warning torn",
		decFile + ":5 warning ts-not-rfc3339",
		decFile + ":6 error nul-byte",
		decFile + ":7 warning multi-line-record",
		decFile + ":22 error not-object",
		decFile + ":23 warning unknown-decision",
	}
	if got := problemSummary(rep.Problems); got != strings.Join(want, "; ") {
		t.Errorf("Problems =\n%s\nwant\n%s", strings.ReplaceAll(got, "; ", "\n"), strings.Join(want, "\n"))
	}
	if rep.Decisions != 4 || rep.Errors() != 3 || rep.Events != 1 {
		t.Errorf("report = %d decisions, %d errors, %d events; want 4, 3, 1", rep.Decisions, rep.Errors(), rep.Events)
	}
	for _, p := range rep.Problems {
		if p.Code == CodeMultiline && p.LineEnd != 21 {
			t.Errorf("multi-line record problem = lines %d-%d; want 7-21", p.Line, p.LineEnd)
		}
		if p.Code == CodeEnum && !strings.Contains(p.Message, "allowed: auto_approve, quick_review, deep_think, escalate") {
			t.Errorf("unknown tier message = %q; want the allowed values", p.Message)
		}
	}
	if d := e.decision("iter-7-2"); d.Line != 7 || d.LineEnd != 21 || d.Input != "Add ESLint auto-fix to CI pipeline" {
		t.Errorf("pretty-printed decision = lines %d-%d input %q; want lines 7-21", d.Line, d.LineEnd, d.Input)
	}
	c, err := e.store.Counts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The unknown-decision warning is reported, not stored: whether the
	// decision exists changes as the journal grows (verify recomputes it).
	// The torn fragment is a stored warning, not a rejected line.
	if c.Decisions != 4 || c.Rejected != 3 || c.Warnings != 3 {
		t.Errorf("Counts = %+v; want 4 decisions, 3 rejected lines, 3 stored warnings", c)
	}
}

// TestSyncOutcomeOrder: a decision's outcome is its latest event in (ts,
// source, line) order, whichever file and sync it arrives in.
func TestSyncOutcomeOrder(t *testing.T) {
	e := newTestEnv(t)
	steps := []struct {
		name string
		file string
		add  string
		want string // outcome of iter-1-1
	}{
		{"decisions", decFile, lines(dec("iter-1-1", 1, 0), dec("iter-1-2", 1, 1), dec("iter-1-3", 1, 2)), OutcomePending},
		{"retrograde field", decFile, lines(retroDec("iter-2-1", 2, 5, "iter-1-1", OutcomeCorrect)), OutcomeCorrect},
		{"later retro line supersedes", retroFile, lines(retroLine(10, "iter-1-1", OutcomeIncorrect)), OutcomeIncorrect},
		{"earlier retro line does not", retroFile, lines(retroLine(3, "iter-1-1", OutcomeCorrect)), OutcomeIncorrect},
		{"earlier retrograde field does not", decFile, lines(retroDec("iter-2-2", 2, 6, "iter-1-1", OutcomeCorrect)), OutcomeIncorrect},
		{"later retrograde field supersedes", decFile, lines(retroDec("iter-3-1", 3, 20, "iter-1-1", OutcomeCorrect)), OutcomeCorrect},
		{"same ts: retro journal after retrograde field", retroFile, lines(retroLine(20, "iter-1-1", OutcomeIncorrect)), OutcomeIncorrect},
		{"same ts: retrograde field before retro journal", decFile, lines(retroDec("iter-3-2", 3, 20, "iter-1-1", OutcomeCorrect)), OutcomeIncorrect},
		{"same ts and source: later line", retroFile, lines(retroLine(20, "iter-1-1", OutcomeCorrect)), OutcomeCorrect},
		{"line without ts takes the ts before it", retroFile, lines(`{"decision_id":"iter-1-1","outcome":"INCORRECT"}`), OutcomeIncorrect},
	}
	for _, s := range steps {
		e.appendRaw(s.file, s.add)
		rep := e.sync()
		if rep.Errors() != 0 {
			t.Fatalf("%s: sync rejected lines: %s", s.name, problemSummary(rep.Problems))
		}
		if got := e.outcome("iter-1-1"); got != s.want {
			t.Errorf("%s: outcome of iter-1-1 = %s; want %s", s.name, got, s.want)
		}
	}
	if got := e.outcome("iter-1-2"); got != OutcomePending {
		t.Errorf("outcome of iter-1-2 = %s; want %s", got, OutcomePending)
	}
	before := e.snapshot()
	if before.Counts.Events != 9 {
		t.Errorf("Counts.Events = %d; want 9 (every event kept)", before.Counts.Events)
	}
	e.rebuild()
	e.sync()
	if after := e.snapshot(); !reflect.DeepEqual(after, before) {
		t.Errorf("rebuilt index differs:\n%s", diffSnapshots(before, after))
	}
}

func diffSnapshots(a, b snapshot) string {
	var out []string
	if a.Counts != b.Counts {
		out = append(out, fmt.Sprintf("Counts %+v != %+v", a.Counts, b.Counts))
	}
	if len(a.Decisions) != len(b.Decisions) {
		out = append(out, fmt.Sprintf("%d decisions != %d", len(a.Decisions), len(b.Decisions)))
	} else {
		for i := range a.Decisions {
			if !reflect.DeepEqual(a.Decisions[i], b.Decisions[i]) {
				out = append(out, fmt.Sprintf("decision %d:\n%+v\n%+v", i, a.Decisions[i], b.Decisions[i]))
			}
		}
	}
	if !reflect.DeepEqual(a.Findings, b.Findings) {
		out = append(out, fmt.Sprintf("findings:\n%+v\n%+v", a.Findings, b.Findings))
	}
	return strings.Join(out, "\n")
}

func TestSyncDuplicateID(t *testing.T) {
	e := newTestEnv(t)
	e.write(decFile, lines(dec("iter-1-1", 1, 0), dec("iter-1-2", 1, 1)))
	e.sync()
	dup := strings.Replace(retroDec("iter-1-1", 1, 2, "iter-1-2", OutcomeIncorrect), "input of", "another input of", 1)
	e.appendRaw(decFile, lines(dup, dec("iter-1-3", 1, 3)))
	rep := e.sync()
	if rep.Decisions != 1 || rep.Events != 0 || len(rep.Problems) != 1 {
		t.Fatalf("sync = %d decisions, %d events, problems %q; want 1, 0 and one problem", rep.Decisions, rep.Events, problemSummary(rep.Problems))
	}
	p := rep.Problems[0]
	if p.Code != CodeDuplicate || p.Severity != SevError || p.File != decFile || p.Line != 3 || p.RecordID != "iter-1-1" {
		t.Errorf("problem = %+v; want error duplicate-id at %s:3 for iter-1-1", p, decFile)
	}
	if want := "(first at " + decFile + ":1)"; !strings.Contains(p.Message, want) {
		t.Errorf("message = %q; want it to name the first %s", p.Message, want)
	}
	if d := e.decision("iter-1-1"); d.Line != 1 || d.Raw != dec("iter-1-1", 1, 0) {
		t.Errorf("iter-1-1 = line %d %q; want the first, line 1", d.Line, d.Raw)
	}
	if got := e.outcome("iter-1-2"); got != OutcomePending {
		t.Errorf("outcome of iter-1-2 = %s; want %s (the duplicate line is not indexed, nor its verdict)", got, OutcomePending)
	}
}

func TestSyncTornLastLine(t *testing.T) {
	e := newTestEnv(t)
	second := dec("iter-1-2", 1, 1)
	e.write(decFile, lines(dec("iter-1-1", 1, 0))+second[:40])

	// Until the file has gone unwritten for tornAfter, a writer may still be
	// finishing the line: nothing to report, however many syncs look at it
	// (the first reads the file, the others find it unchanged).
	for i, after := range []time.Duration{0, time.Millisecond, tornAfter - time.Millisecond} {
		e.clockAfterWrite(decFile, after)
		rep := e.sync()
		if want := max(1-i, 0); rep.Decisions != want || len(rep.Torn) != 0 || len(rep.Problems) != 0 {
			t.Fatalf("sync %v after the write = %d decisions, torn %q, problems %q; want %d and no torn line (a write in progress)", after, rep.Decisions, problemSummary(rep.Torn), problemSummary(rep.Problems), want)
		}
	}
	// Then it is a write cut short, reported by every sync.
	for _, after := range []time.Duration{tornAfter, time.Hour} {
		e.clockAfterWrite(decFile, after)
		rep := e.sync()
		if len(rep.Torn) != 1 || rep.Decisions != 0 {
			t.Fatalf("sync %v after the write = %d decisions, torn %q; want the torn line reported", after, rep.Decisions, problemSummary(rep.Torn))
		}
		if p := rep.Torn[0]; p.File != decFile || p.Line != 2 || p.Code != CodeTorn || p.Severity != SevWarning {
			t.Errorf("torn = %+v; want a torn warning at %s:2", p, decFile)
		}
	}

	// The write goes on, still without its newline: a write in progress again.
	e.appendRaw(decFile, second[40:60])
	e.clockAfterWrite(decFile, time.Second)
	if rep := e.sync(); len(rep.Torn) != 0 || rep.Decisions != 0 {
		t.Fatalf("sync after the line grew = %d decisions, torn %q; want nothing", rep.Decisions, problemSummary(rep.Torn))
	}

	e.appendRaw(decFile, second[60:]+"\n")
	e.clockAfterWrite(decFile, time.Hour)
	rep := e.sync()
	if rep.Decisions != 1 || len(rep.Torn) != 0 || len(rep.Problems) != 0 {
		t.Fatalf("sync after the newline = %d decisions, torn %q, problems %q; want 1, none, none", rep.Decisions, problemSummary(rep.Torn), problemSummary(rep.Problems))
	}
	if d := e.decision("iter-1-2"); d.Line != 2 || d.Raw != second {
		t.Errorf("iter-1-2 = line %d %q; want line 2 %q", d.Line, d.Raw, second)
	}
}

// TestSyncTornLastLineFoundLate: the first sync that sees an unterminated
// last line in a file unwritten for tornAfter reports it at once.
func TestSyncTornLastLineFoundLate(t *testing.T) {
	e := newTestEnv(t)
	e.write(decFile, lines(dec("iter-1-1", 1, 0))+`{"id":"x",`)
	e.clockAfterWrite(decFile, time.Minute)
	rep := e.sync()
	if rep.Decisions != 1 || len(rep.Torn) != 1 || rep.Torn[0].Line != 2 {
		t.Errorf("sync = %d decisions, torn %q; want 1 and the torn line 2", rep.Decisions, problemSummary(rep.Torn))
	}
}

// TestSyncAppendAfterTornFragment: a record appended (by the Appender, which
// starts it on a fresh line) after a fragment that stayed torn is indexed by
// the next sync, and the fragment is a torn fragment: a warning, whatever
// its last byte, which verify lists as one and passes.
func TestSyncAppendAfterTornFragment(t *testing.T) {
	full := strings.Replace(dec("iter-1-2", 1, 1), "input of iter-1-2", "Schlüsselrotation prüfen", 1)
	tests := []struct {
		name string
		frag string
	}{
		{"cut inside a string", full[:25]},
		{"cut after a comma", full[:strings.Index(full, `"tier"`)]},
		{"cut after a colon", full[:strings.Index(full, `"input":`)+len(`"input":`)]},
		{"cut after a nested object", full[:strings.Index(full, `,"confidence"`)]},
		{"cut inside a multi-byte character", full[:strings.Index(full, "ü")+1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.write(decFile, lines(dec("iter-1-1", 1, 0))+tt.frag)
			e.sync()
			appendOnce(t, e.path(decFile), lines(dec("iter-1-3", 1, 2)))
			rep := e.sync()
			if rep.Decisions != 1 {
				t.Errorf("sync after the append indexed %d decisions; want 1 (iter-1-3, line 3)", rep.Decisions)
			}
			if _, ok, _ := e.store.Decision(e.ctx, "iter-1-3"); !ok {
				t.Errorf("iter-1-3, appended after the fragment %q, is not indexed", tt.frag)
			}
			if got, want := problemSummary(rep.Problems), decFile+":2 warning torn"; got != want {
				t.Errorf("problems = %q; want %q", got, want)
			}
			v := e.verify()
			if got, want := findingsOf(v), decFile+":2 warning torn"; got != want || !v.OK() {
				t.Errorf("verify = %q, OK() %v; want %q, true", got, v.OK(), want)
			}
			if f := v.Files[0]; f.Records != 2 || f.Indexed != 2 || f.Rejected != 0 || f.Unsynced != 0 {
				t.Errorf("verify Files[0] = %+v; want 2 records indexed, nothing rejected or unsynced", f)
			}
			c, err := e.store.Counts(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if c.Rejected != 0 || c.Warnings != 1 {
				t.Errorf("Counts = %+v; want no rejected line and 1 warning", c)
			}
		})
	}
}

func TestSyncRewritten(t *testing.T) {
	base := []string{
		dec("iter-1-1", 1, 0),
		dec("iter-1-2", 1, 1),
		retroDec("iter-1-3", 1, 2, "iter-1-1", OutcomeCorrect),
		dec("iter-1-4", 1, 3),
	}
	baseText := lines(base...)
	tests := []struct {
		name      string
		mutate    func(t *testing.T, e *testEnv)
		firstLine int
	}{
		{"edit a past line", func(t *testing.T, e *testEnv) {
			e.write(decFile, strings.Replace(baseText, "input of iter-1-2", "input of iter-1-2, edited", 1))
		}, 2},
		{"edit a past line keeping its size", func(t *testing.T, e *testEnv) {
			e.write(decFile, strings.Replace(baseText, `"id":"iter-1-3","iteration":1`, `"id":"iter-1-3","iteration":2`, 1))
		}, 3},
		{"delete a line", func(t *testing.T, e *testEnv) {
			e.write(decFile, lines(base[0], base[2], base[3]))
		}, 2},
		{"insert a line", func(t *testing.T, e *testEnv) {
			e.write(decFile, lines(base[0], dec("iter-0-9", 0, 0), base[1], base[2], base[3]))
		}, 2},
		{"truncate mid-line", func(t *testing.T, e *testEnv) {
			if err := os.Truncate(e.path(decFile), int64(len(lines(base[:2]...))+30)); err != nil {
				t.Fatal(err)
			}
		}, 3},
		{"truncate to a line end and append", func(t *testing.T, e *testEnv) {
			e.write(decFile, lines(base[0], base[1], dec("iter-9-1", 9, 9)))
		}, 3},
		{"replace the file", func(t *testing.T, e *testEnv) {
			tmp := e.path(decFile) + ".new"
			if err := os.WriteFile(tmp, []byte(lines(dec("iter-5-1", 5, 0), dec("iter-5-2", 5, 1))), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, e.path(decFile)); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"delete the file", func(t *testing.T, e *testEnv) {
			if err := os.Remove(e.path(decFile)); err != nil {
				t.Fatal(err)
			}
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.write(decFile, baseText)
			e.sync()
			tt.mutate(t, e)

			rep := e.sync()
			if len(rep.Rewritten) != 1 {
				t.Fatalf("Rewritten = %q; want one", problemSummary(rep.Rewritten))
			}
			if p := rep.Rewritten[0]; p.File != decFile || p.Line != tt.firstLine || p.Severity != SevError {
				t.Errorf("Rewritten = %+v; want an error naming %s:%d", p, decFile, tt.firstLine)
			}
			if !strings.Contains(rep.Rewritten[0].Message, fmt.Sprintf("first differing line %d", tt.firstLine)) {
				t.Errorf("Rewritten message = %q; want it to name line %d", rep.Rewritten[0].Message, tt.firstLine)
			}
			if len(rep.Recovered) != 1 {
				t.Fatalf("Recovered = %q; want one file", rep.Recovered)
			}
			if ok, _ := filepath.Match(".claude/orbit-recovered-*.jsonl", rep.Recovered[0]); !ok {
				t.Errorf("recovery file = %s; want .claude/orbit-recovered-*.jsonl", rep.Recovered[0])
			}
			if got, want := e.read(rep.Recovered[0]), lines(base[tt.firstLine-1:]...); got != want {
				t.Errorf("recovery file holds\n%s\nwant the records from line %d on\n%s", got, tt.firstLine, want)
			}
			if !strings.Contains(rep.Rewritten[0].Message, rep.Recovered[0]) {
				t.Errorf("Rewritten message = %q; want it to name %s", rep.Rewritten[0].Message, rep.Recovered[0])
			}

			got := e.snapshot()
			if rep := e.sync(); len(rep.Rewritten) != 0 || rep.Decisions != 0 {
				t.Errorf("sync after the rebuild = %d decisions, rewritten %q; want nothing", rep.Decisions, problemSummary(rep.Rewritten))
			}
			e.rebuild()
			e.sync()
			if fresh := e.snapshot(); !reflect.DeepEqual(got, fresh) {
				t.Errorf("index after the rewrite differs from a fresh index of the file:\n%s", diffSnapshots(got, fresh))
			}
		})
	}
}

// TestSyncRewrittenFarBack: sync reads only the last bytes of what it read
// before, so a change far back that leaves the file's size as it was (an
// edit of the same length, two lines swapped) would hide from a check of
// those bytes. An append always grows a file in place: a file that did not
// grow, or is another inode, is compared line by line with the index. A
// change that sync cannot see on its own (an edit then an append) is found
// by verify, which marks the file so that the next sync rebuilds it too.
func TestSyncRewrittenFarBack(t *testing.T) {
	var base []string
	for i := range 40 {
		base = append(base, dec(fmt.Sprintf("iter-1-%d", i+1), 1, i))
	}
	baseText := lines(base...)
	if len(lines(base[2:]...)) <= tailWindow {
		t.Fatalf("journal too small: line 2 must be more than %d bytes before the end", tailWindow)
	}
	// Same length: the 1 of iteration becomes a 7.
	edited := strings.Replace(baseText, `"id":"iter-1-2","iteration":1`, `"id":"iter-1-2","iteration":7`, 1)
	swapped := lines(append([]string{base[0], base[1], base[3], base[2]}, base[4:]...)...)
	if len(edited) != len(baseText) || len(swapped) != len(baseText) {
		t.Fatal("the edits change the file's size")
	}
	replace := func(t *testing.T, e *testEnv, text string) {
		tmp := e.path(decFile) + ".new"
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, e.path(decFile)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		mutate func(t *testing.T, e *testEnv)
		// verifyFirst runs verify before the sync: it must name firstLine.
		verifyFirst bool
		// firstLine is the first differing line, 0 when nothing changed.
		firstLine int
	}{
		{name: "edit a line keeping its size", mutate: func(t *testing.T, e *testEnv) { e.rewrite(decFile, edited) }, firstLine: 2},
		{name: "swap two lines of the same size", mutate: func(t *testing.T, e *testEnv) { e.rewrite(decFile, swapped) }, firstLine: 3},
		{name: "edit a line keeping its size, then verify", mutate: func(t *testing.T, e *testEnv) { e.rewrite(decFile, edited) }, verifyFirst: true, firstLine: 2},
		{name: "edit a line and append one, in a new file", mutate: func(t *testing.T, e *testEnv) {
			replace(t, e, edited+lines(dec("iter-2-1", 2, 50)))
		}, firstLine: 2},
		{name: "edit a line and append one, then verify", mutate: func(t *testing.T, e *testEnv) {
			e.write(decFile, edited)
			e.appendRaw(decFile, lines(dec("iter-2-1", 2, 50)))
		}, verifyFirst: true, firstLine: 2},
		{name: "edit a line and put its modification time back, then verify", mutate: func(t *testing.T, e *testEnv) {
			fi, err := os.Stat(e.path(decFile))
			if err != nil {
				t.Fatal(err)
			}
			e.write(decFile, edited)
			if err := os.Chtimes(e.path(decFile), fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}, verifyFirst: true, firstLine: 2},
		{name: "touch", mutate: func(t *testing.T, e *testEnv) {
			if err := os.Chtimes(e.path(decFile), fixedNow, fixedNow); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "replace with an identical copy", mutate: func(t *testing.T, e *testEnv) { replace(t, e, baseText) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.write(decFile, baseText)
			e.sync()
			before := e.snapshot()
			tt.mutate(t, e)
			if tt.verifyFirst {
				v := e.verify()
				if v.OK() || len(v.Findings) != 1 || v.Findings[0].Code != "rewritten" || v.Findings[0].Line != tt.firstLine {
					t.Fatalf("verify = %q; want line %d rewritten", findingsOf(v), tt.firstLine)
				}
			}

			rep := e.sync()
			if tt.firstLine == 0 {
				if len(rep.Rewritten) != 0 || len(rep.Recovered) != 0 || rep.Decisions != 0 {
					t.Errorf("sync = %d decisions, rewritten %q, recovered %q; want nothing (the records are intact)", rep.Decisions, problemSummary(rep.Rewritten), rep.Recovered)
				}
				if after := e.snapshot(); !reflect.DeepEqual(before, after) {
					t.Errorf("the index changed:\n%s", diffSnapshots(before, after))
				}
			} else {
				if len(rep.Rewritten) != 1 || rep.Rewritten[0].Line != tt.firstLine || !strings.Contains(rep.Rewritten[0].Message, fmt.Sprintf("first differing line %d", tt.firstLine)) {
					t.Fatalf("Rewritten = %q; want line %d", problemSummary(rep.Rewritten), tt.firstLine)
				}
				if len(rep.Recovered) != 1 {
					t.Fatalf("Recovered = %q; want one file", rep.Recovered)
				}
				if got, want := e.read(rep.Recovered[0]), lines(base[tt.firstLine-1:]...); got != want {
					t.Errorf("recovery file holds\n%s\nwant the records from line %d on\n%s", got, tt.firstLine, want)
				}
			}
			if v := e.verify(); !v.OK() || len(v.Findings) != 0 {
				t.Errorf("verify after the sync = %q; want nothing", findingsOf(v))
			}
			if rep := e.sync(); !reflect.DeepEqual(rep, SyncReport{}) {
				t.Errorf("sync after that = %+v; want an empty report", rep)
			}
			got := e.snapshot()
			e.rebuild()
			e.sync()
			if fresh := e.snapshot(); !reflect.DeepEqual(got, fresh) {
				t.Errorf("index after the sync differs from a fresh index of the file:\n%s", diffSnapshots(got, fresh))
			}
		})
	}
}

// TestSyncAfterVerifyOfUndoneEdit: verify marks a file whose past changed;
// if the change is undone before the next sync, that sync compares the file,
// finds it intact and rebuilds nothing.
func TestSyncAfterVerifyOfUndoneEdit(t *testing.T) {
	e := newTestEnv(t)
	var ls []string
	for i := range 40 {
		ls = append(ls, dec(fmt.Sprintf("iter-1-%d", i+1), 1, i))
	}
	text := lines(ls...)
	e.write(decFile, text)
	e.sync()
	before := e.snapshot()
	e.rewrite(decFile, strings.Replace(text, `"id":"iter-1-2","iteration":1`, `"id":"iter-1-2","iteration":7`, 1))
	if v := e.verify(); v.OK() || findingsOf(v) != decFile+":2 error rewritten" {
		t.Fatalf("verify = %q; want line 2 rewritten", findingsOf(v))
	}
	e.rewrite(decFile, text)
	if rep := e.sync(); len(rep.Rewritten) != 0 || len(rep.Recovered) != 0 || rep.Decisions != 0 {
		t.Errorf("sync = %d decisions, rewritten %q, recovered %q; want nothing", rep.Decisions, problemSummary(rep.Rewritten), rep.Recovered)
	}
	if after := e.snapshot(); !reflect.DeepEqual(before, after) {
		t.Errorf("the index changed:\n%s", diffSnapshots(before, after))
	}
	if v := e.verify(); !v.OK() || len(v.Findings) != 0 {
		t.Errorf("verify = %q; want nothing", findingsOf(v))
	}
	if rep := e.sync(); !reflect.DeepEqual(rep, SyncReport{}) {
		t.Errorf("sync after that = %+v; want an empty report (the file is up to date)", rep)
	}
}

// TestSyncGrownFileReadsNewBytesOnly pins the hook path's cost: when a file
// grew, sync reads only the bytes after its offset and the few before it,
// so a change further back goes unseen by sync alone (verify finds it; see
// TestSyncRewrittenFarBack).
func TestSyncGrownFileReadsNewBytesOnly(t *testing.T) {
	e := newTestEnv(t)
	var ls []string
	for i := range 40 {
		ls = append(ls, dec(fmt.Sprintf("iter-1-%d", i+1), 1, i))
	}
	e.write(decFile, lines(ls...))
	e.sync()
	e.write(decFile, strings.Replace(e.read(decFile), `"id":"iter-1-2","iteration":1`, `"id":"iter-1-2","iteration":7`, 1))
	e.appendRaw(decFile, lines(dec("iter-2-1", 2, 50)))
	if rep := e.sync(); rep.Decisions != 1 || len(rep.Rewritten) != 0 {
		t.Errorf("sync = %d decisions, rewritten %q; want the appended record only", rep.Decisions, problemSummary(rep.Rewritten))
	}
}

// buildJournal writes a journal with every kind of line in several steps,
// syncing after each.
func buildJournal(t *testing.T, e *testEnv) {
	t.Helper()
	var ds []string
	for i := range 30 {
		id := fmt.Sprintf("iter-%d-%d", i/5+1, i%5+1)
		if i >= 6 && i%3 == 0 {
			prev := fmt.Sprintf("iter-%d-%d", (i-6)/5+1, (i-6)%5+1)
			ds = append(ds, retroDec(id, i/5+1, i*2, prev, []string{OutcomeCorrect, OutcomeIncorrect}[i%2]))
			continue
		}
		ds = append(ds, dec(id, i/5+1, i*2))
	}
	pretty := strings.Replace(readTestdata(t, "doc-example.pretty.decision-record.json"), "iter-7-1", "iter-pretty", 1)
	steps := []struct{ file, text string }{
		{decFile, "\xef\xbb\xbf" + lines(ds[:8]...)},
		{decFile, lines(ds[8:12]...) + "\n" + `{"id":"torn` + "\n" + strings.ReplaceAll(lines(ds[12:15]...), "\n", "\r\n")},
		{retroFile, lines(retroLine(5, "iter-1-1", OutcomeIncorrect), retroLine(6, "iter-1-2", "MAYBE"), `{"decision_id":"iter-1-3","outcome":"CORRECT"}`)},
		{decFile, pretty + lines(ds[15:25]...) + lines(ds[3]) + strings.TrimSuffix(readTestdata(t, "doc-example.ceo-loop-decisions.jsonl"), "\n") + "\n"},
		{retroFile, lines(retroLine(40, "iter-2-1", OutcomeCorrect), retroLine(70, "iter-1-1", OutcomeCorrect))},
		{decFile, lines(ds[25:]...) + `{"id":"iter-99-1","iteration":99,`},
	}
	for _, s := range steps {
		e.appendRaw(s.file, s.text)
		e.sync()
	}
}

func TestSyncRebuildGivesIdenticalAnswers(t *testing.T) {
	e := newTestEnv(t)
	buildJournal(t, e)
	before := e.snapshot()
	if before.Counts.Decisions != 32 || before.Counts.Correct == 0 || before.Counts.Incorrect == 0 || before.Counts.Rejected == 0 {
		t.Fatalf("Counts = %+v; want 32 decisions and some of every kind", before.Counts)
	}
	beforeFiles, err := e.store.Files(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.rebuild()
	e.sync()
	after := e.snapshot()
	if !reflect.DeepEqual(before, after) {
		t.Errorf("rebuilt index differs from the incremental one:\n%s", diffSnapshots(before, after))
	}
	afterFiles, err := e.store.Files(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range beforeFiles {
		b, a := beforeFiles[i], afterFiles[i]
		if b.Path != a.Path || b.SyncedOffset != a.SyncedOffset || b.SyncedLines != a.SyncedLines || b.TornLine != a.TornLine || b.TailHash != a.TailHash || b.LastTSNS != a.LastTSNS {
			t.Errorf("file state after rebuild = %+v; want %+v", a, b)
		}
	}
}

func TestSyncOutcomeBeforeDecision(t *testing.T) {
	e := newTestEnv(t)
	e.write(decFile, lines(dec("iter-1-1", 1, 0)))
	e.write(retroFile, lines(retroLine(30, "iter-2-1", OutcomeIncorrect)))
	rep := e.sync()
	if rep.Events != 1 || len(rep.Problems) != 1 {
		t.Fatalf("sync = %d events, problems %q; want 1 event and one warning", rep.Events, problemSummary(rep.Problems))
	}
	if p := rep.Problems[0]; p.Code != CodeUnknownID || p.Severity != SevWarning || p.File != retroFile || p.Line != 1 || p.RecordID != "iter-2-1" {
		t.Errorf("problem = %+v; want an unknown-decision warning at %s:1 for iter-2-1", p, retroFile)
	}

	e.appendRaw(decFile, lines(dec("iter-2-1", 2, 10)))
	if rep := e.sync(); rep.Decisions != 1 {
		t.Fatalf("sync = %d decisions; want 1", rep.Decisions)
	}
	if got := e.outcome("iter-2-1"); got != OutcomeIncorrect {
		t.Errorf("outcome of iter-2-1 = %s; want %s, recorded before it arrived", got, OutcomeIncorrect)
	}

}

// TestSyncOrphanWarningsFollowTheFiles: the index is derived, so the warning
// that an outcome names no decision must depend on the files, not on the
// order in which syncs saw them. A fresh index of the same files must give
// the same findings and counts.
func TestSyncOrphanWarningsFollowTheFiles(t *testing.T) {
	tests := []struct {
		name  string
		steps []func(e *testEnv)
	}{
		{"outcome synced before its decision", []func(e *testEnv){
			func(e *testEnv) {
				e.write(decFile, lines(dec("iter-1-1", 1, 0)))
				e.write(retroFile, lines(retroLine(30, "iter-2-1", OutcomeIncorrect)))
			},
			func(e *testEnv) { e.appendRaw(decFile, lines(dec("iter-2-1", 2, 10))) },
		}},
		{"decision of an outcome removed by a rewrite", []func(e *testEnv){
			func(e *testEnv) {
				e.write(decFile, lines(dec("iter-1-1", 1, 0), dec("iter-2-1", 2, 10)))
				e.write(retroFile, lines(retroLine(30, "iter-2-1", OutcomeIncorrect)))
			},
			func(e *testEnv) { e.write(decFile, lines(dec("iter-1-1", 1, 0))) },
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			for _, step := range tt.steps {
				step(e)
				e.sync()
			}
			before := e.snapshot()
			e.rebuild()
			e.sync()
			if after := e.snapshot(); !reflect.DeepEqual(before, after) {
				t.Errorf("index built sync by sync differs from a fresh index of the same files:\n%s", diffSnapshots(before, after))
			}
		})
	}
}

func TestSyncRetrogradeFieldNamesUnknownDecision(t *testing.T) {
	e := newTestEnv(t)
	e.write(decFile, lines(retroDec("iter-2-1", 2, 0, "iter-1-9", OutcomeCorrect)))
	rep := e.sync()
	if len(rep.Problems) != 1 {
		t.Fatalf("problems = %q; want one", problemSummary(rep.Problems))
	}
	if p := rep.Problems[0]; p.Code != CodeUnknownID || p.Line != 1 || !strings.Contains(p.Message, `retrograde.previous_id "iter-1-9"`) {
		t.Errorf("problem = %+v; want an unknown-decision warning naming retrograde.previous_id \"iter-1-9\"", p)
	}
}

// TestSyncManyBatches syncs more records than one transaction takes.
func TestSyncManyBatches(t *testing.T) {
	e := newTestEnv(t)
	var b strings.Builder
	n := batchRecords + 50
	for i := range n {
		fmt.Fprintf(&b, `{"id":"d%d","iteration":1,"ts":"2026-03-08T10:00:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"x","decision":"APPROVED"}`+"\n", i)
	}
	b.WriteString(retroDec("last", 2, 0, "d0", OutcomeCorrect) + "\n")
	e.write(decFile, b.String())
	rep := e.sync()
	if rep.Decisions != n+1 || rep.Events != 1 || len(rep.Problems) != 0 {
		t.Fatalf("sync = %d decisions, %d events, problems %q; want %d, 1, none", rep.Decisions, rep.Events, problemSummary(rep.Problems), n+1)
	}
	if got := e.outcome("d0"); got != OutcomeCorrect {
		t.Errorf("outcome of d0 = %s; want %s", got, OutcomeCorrect)
	}
	if rep := e.sync(); !reflect.DeepEqual(rep, SyncReport{}) {
		t.Errorf("second sync = %+v; want an empty report", rep)
	}
}

// TestSyncConcurrentIndexes: processes that each append a decision and sync
// it, at the same time, into one index, index every decision once.
func TestSyncConcurrentIndexes(t *testing.T) {
	const workers, n = 4, 25
	e := newTestEnv(t)
	errs := make(chan error, workers)
	for w := range workers {
		store, err := db.Open(e.ctx, e.proj.DB, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		ix := NewIndex(store, e.proj).Following(defaultFiles()...)
		go func() {
			errs <- func() error {
				for i := range n {
					a, err := OpenAppender(e.root, e.path(decFile))
					if err != nil {
						return err
					}
					err = a.Append([]byte(lines(dec(fmt.Sprintf("w%d-%d", w, i), i, i))))
					if cerr := a.Close(); err == nil {
						err = cerr
					}
					if err != nil {
						return err
					}
					rep, err := ix.Sync(e.ctx, SyncOptions{})
					if err != nil {
						return err
					}
					if len(rep.Problems) != 0 || len(rep.Rewritten) != 0 {
						return fmt.Errorf("sync found %s, rewritten %s", problemSummary(rep.Problems), problemSummary(rep.Rewritten))
					}
				}
				return nil
			}()
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	c, err := e.store.Counts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (db.Counts{Decisions: workers * n}); c != want {
		t.Errorf("Counts = %+v; want %+v", c, want)
	}
	if rep := e.sync(); !reflect.DeepEqual(rep, SyncReport{}) {
		t.Errorf("final sync = %+v; want nothing left", rep)
	}
}

// TestSyncRewriteKeepsOtherFiles: rebuilding one file keeps what the other
// files say, and the outcomes that follow from both.
func TestSyncRewriteKeepsOtherFiles(t *testing.T) {
	e := newTestEnv(t)
	e.write(decFile, lines(dec("iter-1-1", 1, 0), dec("iter-1-2", 1, 1), retroDec("iter-1-3", 1, 2, "iter-1-1", OutcomeCorrect)))
	e.write(retroFile, lines(retroLine(30, "iter-1-1", OutcomeIncorrect), retroLine(31, "iter-1-2", OutcomeCorrect)))
	e.sync()
	e.write(decFile, lines(dec("iter-1-1", 1, 0), strings.Replace(dec("iter-1-2", 1, 1), "low risk", "no risk", 1), retroDec("iter-1-3", 1, 40, "iter-1-1", OutcomeCorrect)))
	rep := e.sync()
	if len(rep.Rewritten) != 1 || rep.Rewritten[0].Line != 2 {
		t.Fatalf("Rewritten = %q; want line 2", problemSummary(rep.Rewritten))
	}
	// The retrograde field now comes at minute 40, after the retro line.
	if got := e.outcome("iter-1-1"); got != OutcomeCorrect {
		t.Errorf("outcome of iter-1-1 = %s; want %s", got, OutcomeCorrect)
	}
	if got := e.outcome("iter-1-2"); got != OutcomeCorrect {
		t.Errorf("outcome of iter-1-2 = %s; want %s (from the retrograde journal)", got, OutcomeCorrect)
	}
	before := e.snapshot()
	if before.Counts.Events != 3 {
		t.Errorf("Counts.Events = %d; want 3", before.Counts.Events)
	}
	e.rebuild()
	e.sync()
	if after := e.snapshot(); !reflect.DeepEqual(before, after) {
		t.Errorf("index after the rewrite differs from a fresh index:\n%s", diffSnapshots(before, after))
	}
}
