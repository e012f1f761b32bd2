package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/synth"
)

// damagedProject is a project of 3,000 decisions whose index has half its
// pages overwritten: SQLite opens it, and fails only when a query reaches
// one of them.
func damagedProject(t *testing.T, from, to int) (p *testProject, logBefore string) {
	t.Helper()
	var b bytes.Buffer
	if err := synth.Generate(&b, synth.Options{Decisions: 3000, Seed: 11}); err != nil {
		t.Fatal(err)
	}
	p = newProject(t)
	p.write(journalRel, b.String())
	logBefore = p.mustRun("log", "--limit", "3000").stdout
	dbPath := p.path(".claude/orbit.db")
	data, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 256<<10 {
		t.Fatalf("index is %d bytes; the test needs pages in its middle", len(data))
	}
	// The pages from from% to to% of the file: rows and index entries,
	// not the schema SQLite reads at open.
	for off := len(data) * from / 100 &^ (16<<10 - 1); off < len(data)*to/100; off += 16 << 10 {
		copy(data[off:], bytes.Repeat([]byte{0xA5, 0x5A, 0x00, 0xFF}, 16<<10/4))
	}
	if err := os.WriteFile(dbPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, logBefore
}

// A read on a damaged index rebuilds it and answers as before.
func TestDamagedIndexRead(t *testing.T) {
	p, before := damagedProject(t, 40, 60)
	res := p.run("log", "--limit", "3000")
	if res.code != exitOK {
		t.Fatalf("log on a damaged index: exit %d, stderr %s", res.code, res.stderr)
	}
	if res.stdout != before {
		t.Errorf("log on a damaged index differs from before the damage")
	}
	if !strings.Contains(res.stderr, "rebuilding it") {
		t.Errorf("stderr %q; want it to say the index is rebuilt", res.stderr)
	}
	if again := p.mustRun("log", "--limit", "3000"); again.stdout != before || again.stderr != "" {
		t.Errorf("log after the rebuild: stderr %q, same output %v", again.stderr, again.stdout == before)
	}
	p.mustRun("verify")
}

// A decision on a damaged index is recorded once: the command runs again
// on the rebuilt index, with the same stdin.
func TestDamagedIndexDecide(t *testing.T) {
	p, _ := damagedProject(t, 20, 100)
	linesBefore := strings.Count(p.read(journalRel), "\n")
	var out, errOut bytes.Buffer
	f := NewFactory(&IOStreams{In: strings.NewReader(`{"title":"Pin the linter","category":"quality","impact":"low","reversible":true}`), Out: &out, ErrOut: &errOut})
	f.Now = func() time.Time { return testNow }
	f.Getenv = func(string) string { return "" }
	f.Getwd = func() (string, error) { return p.root, nil }
	if code := run(t.Context(), f, []string{"--root", p.root, "decide", "--stdin", "--iteration", "999"}); code != exitOK {
		t.Fatalf("decide --stdin on a damaged index: exit %d, stderr %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "Pin the linter") {
		t.Errorf("decide printed %q; want the decision block", out.String())
	}
	if got := strings.Count(p.read(journalRel), "\n"); got != linesBefore+1 {
		t.Errorf("the journal grew by %d lines; want exactly 1", got-linesBefore)
	}
	if res := p.mustRun("log", "--limit", "5000"); strings.Count(res.stdout, "Pin the linter") != 1 {
		t.Errorf("the index holds the decision %d times; want once", strings.Count(res.stdout, "Pin the linter"))
	}
	if !strings.Contains(errOut.String(), "rebuilding it") {
		t.Errorf("stderr %q; want it to say the index is rebuilt", errOut.String())
	}
}

// When the command had already written when the damage showed, it is not
// run again (that would write twice): the index is rebuilt and the command
// succeeds with a note.
func TestDamagedIndexAfterAWrite(t *testing.T) {
	p, before := damagedProject(t, 40, 60)
	journalBefore := p.read(journalRel)
	var out, errOut bytes.Buffer
	f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	f.Now = func() time.Time { return testNow }
	f.Getenv = func(string) string { return "" }
	f.RootFlag = p.root
	cmd, err := recoverIndex(t.Context(), f, []string{"--root", p.root, "decide", "--title", "x"}, errors.New("list decisions: database disk image is malformed (11)"), true, &replayReader{r: strings.NewReader("")})
	if err != nil || cmd != nil {
		t.Fatalf("recoverIndex after a write = %v, %v; want nil, nil (the write stands)", cmd, err)
	}
	if p.read(journalRel) != journalBefore {
		t.Error("recoverIndex ran the command again")
	}
	if !strings.Contains(errOut.String(), "what this command wrote to the journal stands") {
		t.Errorf("stderr %q; want the note", errOut.String())
	}
	if res := p.mustRun("log", "--limit", "3000"); res.stdout != before || res.stderr != "" {
		t.Errorf("log after the rebuild: stderr %q, same output %v", res.stderr, res.stdout == before)
	}
}
