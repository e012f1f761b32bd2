package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestVoid: a decision recorded by mistake is voided by a line of the
// retrograde journal; its own line stays; it drops out of trust, stale and
// precedent; show and log say it is voided and why; a fresh index of the
// same files gives the same answers; --undo puts it back.
func TestVoid(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	journalBefore := p.read(journalRel)
	reads := [][]string{
		{"trust", "--json=accuracy,decisions,last20,calibration"},
		{"stale", "--iterations", "0", "--json=id"},
		{"precedent", "--json=id,outcome,voided", "gRPC REST tasks"},
		{"show", "--json", "iter-1-2"},
		{"log", "--json=id,outcome,voided,void_reason", "--limit", "0"},
	}
	answers := func() []string {
		t.Helper()
		out := make([]string, len(reads))
		for i, args := range reads {
			out[i] = p.mustRun(args...).stdout
		}
		return out
	}

	// Refused: no evidence, no such decision. Nothing is written.
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"void", "iter-1-2"}, exitUsage, "--evidence is required: a void says why the decision was recorded by mistake"},
		{[]string{"void", "iter-1-2", "--evidence", " "}, exitUsage, "--evidence is required"},
		{[]string{"void", "iter-9-9", "--evidence", "x"}, exitUsage, `no decision "iter-9-9" in the journal`},
		{[]string{"void"}, exitUsage, "a decision id"},
	} {
		res := p.run(tt.args...)
		if res.code != tt.code || !strings.Contains(res.stderr, tt.want) {
			t.Errorf("orbit %s: exit %d, %q; want %d and %q", strings.Join(tt.args, " "), res.code, res.stderr, tt.code, tt.want)
		}
	}
	if _, err := os.Stat(p.path(retroRel)); !os.IsNotExist(err) {
		t.Fatalf("a refused void wrote %s", retroRel)
	}
	res := p.mustRun("void", "iter-1-2", "--evidence", "a dry run", "--dry-run")
	if !strings.HasPrefix(res.stdout, "iter-1-2: would be voided\n") {
		t.Errorf("void --dry-run = %q", res.stdout)
	}
	if _, err := os.Stat(p.path(retroRel)); !os.IsNotExist(err) {
		t.Fatalf("void --dry-run wrote %s", retroRel)
	}

	// iter-1-2 (INCORRECT) and iter-2-2 (stale, PENDING) voided.
	res = p.mustRun("void", "iter-1-2", "--evidence", "recorded twice by a retried hook")
	if !strings.HasPrefix(res.stdout, "iter-1-2: voided (.claude/ceo-loop-retrograde.jsonl:1)\nAccuracy: 2/2 = 100.0%") {
		t.Errorf("void = %q; want the line it wrote and trust without iter-1-2's INCORRECT", res.stdout)
	}
	p.mustRun("void", "iter-2-2", "--evidence", "a test request")
	if got := p.read(journalRel); got != journalBefore {
		t.Errorf("voiding changed the decision journal")
	}
	lines := nonEmptyLines(p.read(retroRel))
	if len(lines) != 2 || !strings.Contains(lines[0], `"decision_id":"iter-1-2","void":true,"evidence":"recorded twice by a retried hook"}`) {
		t.Fatalf("retrograde journal = %q; want one void line per decision", lines)
	}
	got := answers()
	var tr struct {
		Accuracy  float64
		Decisions int
	}
	json.Unmarshal([]byte(got[0]), &tr)
	if tr.Accuracy != 1 || tr.Decisions != 4 {
		t.Errorf("trust after voids = %s; want accuracy 1 (2/2) over 4 decisions", got[0])
	}
	if strings.TrimSpace(got[1]) != "[]" {
		t.Errorf("stale after voiding iter-2-2 = %s; want []", got[1])
	}
	if strings.Contains(got[2], "iter-1-2") {
		t.Errorf("precedent lists the voided iter-1-2: %s", got[2])
	}
	var shown struct {
		Voided     bool
		VoidReason string `json:"void_reason"`
		Outcome    string
		Voids      []struct{ Evidence string }
	}
	json.Unmarshal([]byte(got[3]), &shown)
	if !shown.Voided || shown.VoidReason != "recorded twice by a retried hook" || shown.Outcome != "INCORRECT" || len(shown.Voids) != 1 {
		t.Errorf("show --json iter-1-2 = %s; want voided, why, its outcome kept, one void event", got[3])
	}
	if !strings.Contains(got[4], `"id": "iter-1-2",
    "outcome": "INCORRECT",
    "voided": true,
    "void_reason": "recorded twice by a retried hook"`) {
		t.Errorf("log --json = %s; want iter-1-2 voided with its reason", got[4])
	}
	text := p.mustRun("show", "iter-1-2").stdout
	if !strings.Contains(text, "  voided:      recorded twice by a retried hook (recorded by mistake: out of trust, precedents and stale)\n") ||
		!strings.Contains(text, "Voids (1 event):\n") {
		t.Errorf("show iter-1-2 =\n%s\nwant it voided, why, and the void event", text)
	}
	if row := p.mustRun("log", "--grep", "gRPC").stdout; !strings.Contains(row, "\tVOIDED\t") {
		t.Errorf("log row of iter-1-2 = %q; want its outcome shown as VOIDED", row)
	}

	// The index is derived: rebuilt from the files, the same answers.
	p.mustRun("rebuild")
	if again := answers(); strings.Join(again, "") != strings.Join(got, "") {
		t.Errorf("after rebuild:\n%s\nwant what the incremental index answered:\n%s", strings.Join(again, ""), strings.Join(got, ""))
	}
	p.mustRun("verify")

	// Voided again: nothing to write. Taken back: counted again.
	res = p.mustRun("void", "iter-1-2", "--evidence", "again")
	if !strings.Contains(res.stderr, "iter-1-2 is already voided (recorded twice by a retried hook); nothing written") || len(nonEmptyLines(p.read(retroRel))) != 2 {
		t.Errorf("void of a voided decision: %q, %d lines; want a warning and no line", res.stderr, len(nonEmptyLines(p.read(retroRel))))
	}
	res = p.mustRun("void", "iter-1-2", "--undo", "--evidence", "voided the wrong decision", "--json=void,written,was_voided")
	if !strings.Contains(res.stdout, `"void": false,
  "written": true,
  "was_voided": true`) {
		t.Errorf("void --undo --json = %s", res.stdout)
	}
	json.Unmarshal([]byte(p.mustRun(reads[0]...).stdout), &tr)
	if tr.Decisions != 5 || tr.Accuracy > 0.67 || tr.Accuracy < 0.66 {
		t.Errorf("trust after --undo = %+v; want 2/3 over 5 decisions", tr)
	}
}

func nonEmptyLines(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\n' })
}
