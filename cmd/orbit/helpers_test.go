package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/internal/golden"
)

// testNow is the clock every command test runs with.
var testNow = time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)

// result is what one orbit invocation printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

// env is the world a test invocation sees.
type env struct {
	tty  bool              // stdout is a terminal
	wd   string            // what Getwd returns
	vars map[string]string // environment; everything else is ""
}

// orbit runs the CLI in-process with fake streams.
func orbit(tb testing.TB, e env, args ...string) result {
	tb.Helper()
	var out, errOut bytes.Buffer
	f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, OutTTY: e.tty})
	f.Now = func() time.Time { return testNow }
	f.Getenv = func(k string) string { return e.vars[k] }
	wd := e.wd
	if wd == "" {
		// Never the test process's directory: a test that forgets --root
		// must not find a project by accident.
		wd = tb.TempDir()
	}
	f.Getwd = func() (string, error) { return wd, nil }
	code := run(context.Background(), f, args)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// testProject is a temporary project (a directory holding .claude/).
type testProject struct {
	tb   testing.TB
	root string
}

// newProject creates an empty project: a temporary directory with .claude/.
func newProject(tb testing.TB) *testProject {
	tb.Helper()
	root := tb.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".claude"), 0o755); err != nil {
		tb.Fatal(err)
	}
	return &testProject{tb: tb, root: root}
}

// projectWith creates a project whose decision journal holds the fixture
// journal.
func projectWith(tb testing.TB, fixture string) *testProject {
	tb.Helper()
	p := newProject(tb)
	p.write(journalRel, string(readFixture(tb, fixture)))
	return p
}

const journalRel = ".claude/ceo-loop-decisions.jsonl"

// run runs orbit on the project with stdout piped.
func (p *testProject) run(args ...string) result {
	p.tb.Helper()
	return orbit(p.tb, env{}, append([]string{"--root", p.root}, args...)...)
}

// runTTY runs orbit on the project with stdout on a terminal.
func (p *testProject) runTTY(args ...string) result {
	p.tb.Helper()
	return orbit(p.tb, env{tty: true}, append([]string{"--root", p.root}, args...)...)
}

// mustRun runs orbit piped and fails the test unless it exits 0.
func (p *testProject) mustRun(args ...string) result {
	p.tb.Helper()
	res := p.run(args...)
	if res.code != exitOK {
		p.tb.Fatalf("orbit %s: exit %d; want 0\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
	}
	return res
}

func (p *testProject) path(rel string) string { return filepath.Join(p.root, filepath.FromSlash(rel)) }

func (p *testProject) write(rel, content string) {
	p.tb.Helper()
	if err := os.WriteFile(p.path(rel), []byte(content), 0o644); err != nil {
		p.tb.Fatal(err)
	}
}

func (p *testProject) read(rel string) string {
	p.tb.Helper()
	b, err := os.ReadFile(p.path(rel))
	if err != nil {
		p.tb.Fatal(err)
	}
	return string(b)
}

// appendRaw appends bytes to a file the way other tools do (O_APPEND, one
// write).
func (p *testProject) appendRaw(rel, s string) {
	p.tb.Helper()
	fh, err := os.OpenFile(p.path(rel), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		p.tb.Fatal(err)
	}
	if _, err := fh.WriteString(s); err != nil {
		p.tb.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		p.tb.Fatal(err)
	}
}

// fixturePath is the path of a file under testdata/cmd.
func fixturePath(name string) string {
	return filepath.Join("..", "..", "testdata", "cmd", name)
}

func readFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(fixturePath(name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// copyFixture copies a fixture into a temporary directory and returns its
// absolute path, so that messages naming it are predictable.
func copyFixture(tb testing.TB, name string) string {
	tb.Helper()
	dst := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(dst, readFixture(tb, name), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dst
}

// goldenCmd compares got with testdata/cmd/name (-update rewrites it).
func goldenCmd(tb testing.TB, name, got string) {
	tb.Helper()
	golden.Check(tb, fixturePath(name), []byte(got))
}

// objectKeys returns the keys of a JSON object in the order written.
func objectKeys(tb testing.TB, raw []byte) []string {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		tb.Fatalf("not a JSON object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			tb.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			tb.Fatal(err)
		}
	}
	return keys
}

// lines splits output into lines, without the final empty one.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// firstColumn returns the first tab-separated field of each line.
func firstColumn(s string) []string {
	var out []string
	for _, l := range lines(s) {
		out = append(out, strings.SplitN(l, "\t", 2)[0])
	}
	return out
}
