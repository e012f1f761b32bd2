package journal

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func (e *testEnv) verify() VerifyReport {
	e.tb.Helper()
	rep, err := e.ix.Verify(e.ctx)
	if err != nil {
		e.tb.Fatalf("Verify: %v", err)
	}
	return rep
}

func findingsOf(rep VerifyReport) string {
	var out []string
	for _, p := range rep.Findings {
		out = append(out, fmt.Sprintf("%s:%d %s %s", p.File, p.Line, p.Severity, p.Code))
	}
	return strings.Join(out, "; ")
}

func TestVerify(t *testing.T) {
	journal := lines(dec("iter-1-1", 1, 0), retroDec("iter-1-2", 1, 1, "iter-1-1", OutcomeCorrect), "", dec("iter-1-3", 1, 2)) +
		strings.TrimSuffix(readTestdata(t, "doc-example.ceo-loop-decisions.jsonl"), "\n") + "\n"
	const tsWarning = decFile + ":5 warning ts-not-rfc3339"
	tests := []struct {
		name     string
		after    func(t *testing.T, e *testEnv) // after the sync
		ok       bool
		findings string
		check    func(t *testing.T, rep VerifyReport)
	}{
		{
			name:     "clean journal",
			ok:       true,
			findings: tsWarning,
			check: func(t *testing.T, rep VerifyReport) {
				if len(rep.Files) != 2 {
					t.Fatalf("Files = %+v; want the decision and retrograde journals", rep.Files)
				}
				if f := rep.Files[0]; f.Path != decFile || f.Records != 4 || f.Indexed != 4 || f.Rejected != 0 || f.Unsynced != 0 {
					t.Errorf("Files[0] = %+v; want 4 records indexed, none rejected or unsynced", f)
				}
			},
		},
		{
			name: "rejected lines",
			after: func(t *testing.T, e *testEnv) {
				e.appendRaw(decFile, lines(`{"id":"iter-1-4","tier":"nope"}`, dec("iter-1-1", 1, 3)))
				e.sync()
			},
			ok:       false,
			findings: tsWarning + "; " + decFile + ":6 error missing-field; " + decFile + ":7 error duplicate-id",
			check: func(t *testing.T, rep VerifyReport) {
				if f := rep.Files[0]; f.Records != 4 || f.Indexed != 4 || f.Rejected != 2 {
					t.Errorf("Files[0] = %+v; want 4 records indexed, 2 rejected", f)
				}
			},
		},
		{
			name:     "torn fragment",
			after:    func(t *testing.T, e *testEnv) { e.appendRaw(decFile, `{"id":"iter-1-5","itera`) },
			ok:       true,
			findings: decFile + ":6 warning torn; " + tsWarning,
		},
		{
			// A write cut short, then a record: a warning, not a
			// rejected line, and the journal and index agree.
			name: "torn fragment before a record",
			after: func(t *testing.T, e *testEnv) {
				e.appendRaw(decFile, `{"id":"iter-1-5","input":"Schl`+"\xc3\n"+lines(dec("iter-1-6", 1, 6)))
				e.sync()
			},
			ok:       true,
			findings: tsWarning + "; " + decFile + ":6 warning torn",
			check: func(t *testing.T, rep VerifyReport) {
				if f := rep.Files[0]; f.Records != 5 || f.Indexed != 5 || f.Rejected != 0 || f.Unsynced != 0 {
					t.Errorf("Files[0] = %+v; want 5 records indexed, nothing rejected or unsynced", f)
				}
			},
		},
		{
			name: "torn fragment not synced yet",
			after: func(t *testing.T, e *testEnv) {
				e.appendRaw(decFile, `{"id":"iter-1-5","retrograde":{"outcome":"N/A"}`+"\n"+lines(dec("iter-1-6", 1, 6)))
			},
			ok:       true,
			findings: decFile + ":6 warning unsynced; " + tsWarning,
			check: func(t *testing.T, rep VerifyReport) {
				if f := rep.Files[0]; f.Records != 5 || f.Indexed != 4 || f.Unsynced != 2 {
					t.Errorf("Files[0] = %+v; want 5 records, 4 indexed, 2 lines unsynced", f)
				}
			},
		},
		{
			name: "lines not synced yet",
			after: func(t *testing.T, e *testEnv) {
				e.appendRaw(decFile, lines(dec("iter-2-1", 2, 5), "", `{"id":"bad"}`, dec("iter-2-2", 2, 6)))
			},
			ok:       true,
			findings: decFile + ":6 warning unsynced; " + tsWarning,
			check: func(t *testing.T, rep VerifyReport) {
				if f := rep.Files[0]; f.Unsynced != 3 || f.Records != 7 || f.Indexed != 4 {
					t.Errorf("Files[0] = %+v; want 3 unsynced lines, 7 records, 4 indexed", f)
				}
				if msg := rep.Findings[0].Message; !strings.Contains(msg, "3 lines") {
					t.Errorf("unsynced message = %q; want it to count 3 lines", msg)
				}
			},
		},
		{
			name: "edited past line",
			after: func(t *testing.T, e *testEnv) {
				e.write(decFile, strings.Replace(e.read(decFile), "input of iter-1-3", "input of iter-1-3!", 1))
			},
			ok:       false,
			findings: decFile + ":4 error rewritten; " + tsWarning,
			check: func(t *testing.T, rep VerifyReport) {
				if msg := rep.Findings[0].Message; !strings.Contains(msg, "line 4 changed") || !strings.Contains(msg, `record "iter-1-3"`) {
					t.Errorf("message = %q; want it to name line 4 and record iter-1-3", msg)
				}
			},
		},
		{
			name: "edited rejected line",
			after: func(t *testing.T, e *testEnv) {
				e.appendRaw(decFile, lines(`{"id":"iter-1-4","tier":"nope"}`))
				e.sync()
				e.write(decFile, strings.Replace(e.read(decFile), `"tier":"nope"`, `"tier":"nah"`, 1))
			},
			ok:       false,
			findings: decFile + ":6 error rewritten; " + tsWarning + "; " + decFile + ":6 error missing-field",
		},
		{
			name: "deleted line",
			after: func(t *testing.T, e *testEnv) {
				e.write(decFile, strings.Replace(e.read(decFile), dec("iter-1-1", 1, 0)+"\n", "", 1))
			},
			ok:       false,
			findings: decFile + ":1 error rewritten; " + tsWarning,
		},
		{
			name: "truncated file",
			after: func(t *testing.T, e *testEnv) {
				if err := os.Truncate(e.path(decFile), int64(len(lines(dec("iter-1-1", 1, 0))))+10); err != nil {
					t.Fatal(err)
				}
			},
			ok:       false,
			findings: decFile + ":2 error rewritten; " + tsWarning,
		},
		{
			name: "deleted file",
			after: func(t *testing.T, e *testEnv) {
				if err := os.Remove(e.path(decFile)); err != nil {
					t.Fatal(err)
				}
			},
			ok:       false,
			findings: decFile + ":1 error missing; " + tsWarning,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.write(decFile, journal)
			e.sync()
			if tt.after != nil {
				tt.after(t, e)
			}
			rep := e.verify()
			if got := findingsOf(rep); got != tt.findings {
				t.Errorf("findings =\n%s\nwant\n%s", strings.ReplaceAll(got, "; ", "\n"), strings.ReplaceAll(tt.findings, "; ", "\n"))
			}
			if rep.OK() != tt.ok {
				t.Errorf("OK() = %v; want %v", rep.OK(), tt.ok)
			}
			if tt.check != nil {
				tt.check(t, rep)
			}
		})
	}
}

// TestVerifyEditBeyondTailWindow: sync checks only the bytes just before its
// offset; verify reads everything and finds an edit far back.
func TestVerifyEditBeyondTailWindow(t *testing.T) {
	e := newTestEnv(t)
	var ls []string
	for i := range 40 {
		ls = append(ls, dec(fmt.Sprintf("iter-1-%d", i+1), 1, i))
	}
	e.write(decFile, lines(ls...))
	e.sync()
	if len(lines(ls[1:]...)) <= tailWindow {
		t.Fatalf("journal too small: the edit must be more than %d bytes before the end", tailWindow)
	}
	e.write(decFile, strings.Replace(e.read(decFile), `"decision":"APPROVED"`, `"decision":"REJECTED"`, 1))
	rep := e.verify()
	if rep.OK() || len(rep.Findings) != 1 || rep.Findings[0].Line != 1 || rep.Findings[0].Code != "rewritten" {
		t.Errorf("findings = %q; want line 1 rewritten", findingsOf(rep))
	}
	// Verify changes nothing: a second run finds the same.
	if again := e.verify(); findingsOf(again) != findingsOf(rep) {
		t.Errorf("second Verify = %q; want %q", findingsOf(again), findingsOf(rep))
	}
}

func TestVerifyMultiLineRecordCutShort(t *testing.T) {
	e := newTestEnv(t)
	pretty := readTestdata(t, "doc-example.pretty.decision-record.json")
	cut := pretty[:strings.Index(pretty, `  "decision"`)]
	e.write(decFile, lines(dec("iter-1-1", 1, 0))+cut)
	e.sync()
	rep := e.verify()
	if got, want := findingsOf(rep), decFile+":2 warning torn"; got != want {
		t.Errorf("findings = %q; want %q (a record being written, not lines to sync)", got, want)
	}
	if f := rep.Files[0]; f.Unsynced != 0 {
		t.Errorf("Files[0].Unsynced = %d; want 0", f.Unsynced)
	}
	if !rep.OK() {
		t.Error("OK() = false; want true")
	}
}

func TestVerifyRetroJournal(t *testing.T) {
	e := newTestEnv(t)
	e.write(decFile, lines(dec("iter-1-1", 1, 0)))
	e.write(retroFile, lines(retroLine(5, "iter-1-1", OutcomeCorrect), retroLine(6, "iter-1-1", OutcomeCorrect)))
	e.sync()
	rep := e.verify()
	if !rep.OK() || len(rep.Findings) != 0 {
		t.Errorf("findings = %q; want none", findingsOf(rep))
	}
	e.appendRaw(retroFile, lines(`{"decision_id":"iter-1-1","outcome":"MAYBE"}`, retroLine(7, "iter-1-1", OutcomeIncorrect)))
	e.sync()
	rep = e.verify()
	if rep.OK() || findingsOf(rep) != retroFile+":3 error unknown-value" {
		t.Errorf("findings = %q; want the rejected line 3", findingsOf(rep))
	}
	if f := rep.Files[1]; f.Path != retroFile || f.Records != 3 || f.Indexed != 3 || f.Rejected != 1 {
		t.Errorf("Files[1] = %+v; want 3 records indexed, 1 rejected", f)
	}
	e.write(retroFile, strings.Replace(e.read(retroFile), "INCORRECT", "CORRECT", 1))
	if rep := e.verify(); rep.OK() || !strings.Contains(findingsOf(rep), retroFile+":4 error rewritten") {
		t.Errorf("findings after an edit = %q; want line 4 rewritten", findingsOf(rep))
	}
}

func TestVerifyNeverSynced(t *testing.T) {
	e := newTestEnv(t)
	e.write(decFile, lines(dec("iter-1-1", 1, 0), dec("iter-1-2", 1, 1)))
	rep := e.verify()
	if got, want := findingsOf(rep), decFile+":1 warning unsynced"; got != want {
		t.Errorf("findings = %q; want %q", got, want)
	}
	if f := rep.Files[0]; f.Unsynced != 2 || f.Indexed != 0 {
		t.Errorf("Files[0] = %+v; want 2 unsynced", f)
	}
	if files, _ := e.store.Files(e.ctx); len(files) != 0 {
		t.Errorf("Verify changed the index: Files = %+v", files)
	}
}
