//go:build reliability

package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// badCase is one entry of testdata/bad/manifest.json.
type badCase struct {
	Name  string `json:"name"`
	About string `json:"about"`
	// Fixture is a file in testdata/bad, or gen:KIND for one made at run
	// time (10 MB lines, directories, symlink loops, unreadable files).
	Fixture string `json:"fixture"`
	// Into says where the fixture goes: "decisions" or "retro" (appended to
	// that journal, or replacing it for gen: kinds), "queue" (the pending
	// file), "import" (a file whose path replaces {fixture} in Args),
	// "stdin", or "" for none.
	Into string     `json:"into"`
	Args []string   `json:"args"`
	Pre  [][]string `json:"pre"`
	Exit int        `json:"exit"`
	// Message must appear in what the command prints.
	Message string `json:"message"`
	// Appends is how many lines the command may append to the decision
	// journal, Outcomes to the outcome journal; Adds is how many decisions
	// the index gains from lines the fixture itself appended.
	Appends  int `json:"appends"`
	Outcomes int `json:"outcomes"`
	Adds     int `json:"adds"`
	// Stored is a text some decision must hold verbatim afterwards.
	Stored string `json:"stored"`
	// MayWrite lists files the command may change besides the journals.
	MayWrite []string `json:"may_write"`
}

const badDir = moduleRoot + "/testdata/bad"

// derived are files orbit may create on any command: the index and locks.
func derived(name string) bool {
	return strings.HasPrefix(name, "orbit.db") || strings.HasSuffix(name, ".lock") || strings.HasSuffix(name, ".flock")
}

// hostileInput runs every case of testdata/bad/manifest.json against a
// project of 30 decisions and 3 outcomes: the exit status, one clear message
// naming the file and line or the flag, nothing written on error, nothing
// already stored changed.
func hostileInput(t *testing.T) {
	r := newRow(t, "5", "Hostile input",
		"the corpus in `testdata/bad/` (manifest.json): invalid JSON, wrong types, unknown enum values, missing fields, duplicate ids, 10 MB lines, NUL bytes, invalid UTF-8, CRLF, BOM, empty files, directories, symlink loops, unreadable files, in the journals, the queue, imports, stdin and hook input; SQL and FTS5 syntax in every text flag")
	data, err := os.ReadFile(filepath.Join(badDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []badCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("testdata/bad/manifest.json: %v", err)
	}
	if len(cases) < 40 {
		r.fail(t, "the corpus has %d cases; want at least 40", len(cases))
	}

	// Every case runs in a copy of this project, in a directory that
	// another user may enter (the unreadable cases run as nobody when the
	// suite runs as root, who reads everything).
	top, err := os.MkdirTemp("", "orbit-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	os.Chmod(top, 0o755)
	base := newProject(t, filepath.Join(top, "base"))
	writeJournal(t, base, 30, 3, 5)
	base.must("sync")
	want, _, err := base.answers()
	if err != nil {
		t.Fatal(err)
	}
	baseLog := logObjects(t, want.Log)

	failed, changed := 0, 0
	for i, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			dir := filepath.Join(top, fmt.Sprintf("case-%03d", i))
			p := cloneProject(t, base, dir)
			p.must("sync")
			cr := corpusRow{Name: c.Name, WantExit: c.Exit, Message: c.Message}
			problems := runBadCase(t, p, c, want, baseLog, &cr)
			if problems.changedStored {
				changed++
			}
			cr.Failures = problems.list
			if len(problems.list) > 0 {
				failed++
				for _, f := range problems.list {
					t.Errorf("%s: %s", c.Name, f)
				}
			}
			results.Lock()
			results.corpus = append(results.corpus, cr)
			results.Unlock()
		})
	}
	r.Times = fmt.Sprintf("%d cases", len(cases))
	r.Kept = fmt.Sprintf("30 decisions and 3 outcomes stored before each case; %d of %d cases as the manifest says", len(cases)-failed, len(cases))
	r.Lost = changed
	if failed > 0 {
		results.Lock()
		r.failed = true
		r.Failures = append(r.Failures, fmt.Sprintf("%d of %d cases failed; see the case-by-case table", failed, len(cases)))
		results.Unlock()
	}
}

type caseProblems struct {
	list          []string
	changedStored bool
}

func (cp *caseProblems) add(format string, args ...any) {
	cp.list = append(cp.list, fmt.Sprintf(format, args...))
}

// runBadCase places the fixture, runs the command and checks everything the
// issue asks of a bad input.
func runBadCase(t *testing.T, p *project, c badCase, want answers, baseLog map[string]map[string]any, cr *corpusRow) (cp caseProblems) {
	// Shown relative to the project (or the repository, for fixtures).
	absBad, _ := filepath.Abs(badDir)
	tidy := strings.NewReplacer(p.Root+"/", "", absBad+"/", "testdata/bad/").Replace
	defer func() {
		for i, l := range cp.list {
			cp.list[i] = tidy(l)
		}
	}()
	target := map[string]string{"decisions": decisionsFile, "retro": retroFile, "queue": pendingFile}[c.Into]
	var stdin []byte
	var original []byte
	hadOriginal := false
	if target != "" {
		var err error
		original, err = os.ReadFile(p.path(target))
		hadOriginal = err == nil
	}
	restore := func() {}
	args := append([]string(nil), c.Args...)
	asUser := uint32(0)

	fixture := func() []byte {
		if kind, ok := strings.CutPrefix(c.Fixture, "gen:"); ok {
			return generated(t, kind)
		}
		b, err := os.ReadFile(filepath.Join(badDir, c.Fixture))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	kind, gen := strings.CutPrefix(c.Fixture, "gen:")
	damage := gen && (kind == "directory" || kind == "symlink-loop" || kind == "unreadable" || kind == "missing")
	switch {
	case c.Into == "import":
		path, _ := filepath.Abs(filepath.Join(badDir, c.Fixture))
		if gen {
			names := map[string]string{"directory": "a-directory.jsonl", "symlink-loop": "loop.jsonl", "unreadable": "unreadable.jsonl",
				"missing": "missing.jsonl", "10mb-journal-line": "10mb-line.jsonl"}
			path = filepath.Join(p.Root, "in", names[kind])
			os.MkdirAll(filepath.Dir(path), 0o755)
			switch kind {
			case "directory":
				os.Mkdir(path, 0o755)
			case "symlink-loop":
				os.Symlink(filepath.Base(path), path)
			case "unreadable":
				os.WriteFile(path, mustRead(t, filepath.Join(badDir, "journal-crlf.jsonl")), 0o644)
				asUser = makeUnreadable(t, p, path)
			case "missing":
			default:
				os.WriteFile(path, fixture(), 0o644)
			}
		}
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "{fixture}", path)
		}
	case c.Into == "stdin":
		stdin = fixture()
	case target != "" && damage:
		abs := p.path(target)
		switch kind {
		case "directory":
			os.Remove(abs)
			os.Mkdir(abs, 0o755)
		case "symlink-loop":
			os.Remove(abs)
			os.Symlink(filepath.Base(abs), abs)
		case "unreadable":
			if !hadOriginal {
				os.WriteFile(abs, []byte("[]\n"), 0o644)
			}
			asUser = makeUnreadable(t, p, abs)
		}
		restore = func() {
			os.RemoveAll(abs)
			if hadOriginal {
				os.WriteFile(abs, original, 0o644)
			}
		}
	case target == pendingFile:
		os.WriteFile(p.path(target), fixture(), 0o644)
	case target != "":
		f, err := os.OpenFile(p.path(target), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(fixture())
		f.Close()
	}
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "{xff}", "\xff")
	}
	cr.Command = tidy("orbit " + quoteArgs(args))
	if c.Into == "stdin" {
		cr.Command += " < " + c.Fixture
	}

	// What the files hold before the command: nothing may change on error.
	before := snapshot(p)
	for _, pre := range c.Pre {
		if res := p.run(pre...); res.Code != 0 {
			cp.add("setup `orbit %s` failed: %s", quoteArgs(pre), res)
		}
	}
	res := p.runWith(runOpts{stdin: stdin, asUser: asUser}, args...)
	cr.GotExit = res.Code
	out := res.Stdout + res.Stderr
	if said := lineWith(out, c.Message); c.Message != "" && said != "" {
		cr.Message = excerpt(tidy(strings.TrimSpace(said)), 200)
	} else if c.Message == "" {
		cr.Message = "(exit 0, no message needed)"
	}
	if res.Code != c.Exit {
		cp.add("exit %d; want %d (stderr %q)", res.Code, c.Exit, excerpt(res.Stderr, 300))
	}
	if c.Message != "" && !strings.Contains(out, c.Message) {
		cp.add("no message containing %q; got %q", c.Message, excerpt(strings.TrimSpace(out), 300))
	}
	for _, bad := range []string{"panic:", "goroutine ", "runtime error"} {
		if strings.Contains(out, bad) {
			cp.add("printed %q: %s", bad, excerpt(out, 300))
		}
	}
	if n := len(out); n > 64<<10 {
		cp.add("printed %d bytes; a message must not echo its input", n)
	}
	if res.Code == 1 || res.Code == 2 {
		if n := strings.Count("\n"+res.Stderr, "\norbit: "); n != 1 {
			cp.add("printed %d error lines; want one: %q", n, excerpt(res.Stderr, 300))
		}
	}
	if len(c.Args) > 0 && c.Args[0] == "hook" && strings.TrimSpace(res.Stdout) != "" && !json.Valid([]byte(res.Stdout)) {
		cp.add("hook output is not JSON: %q", excerpt(res.Stdout, 200))
	}

	// Nothing written beyond what the case allows.
	after := snapshot(p)
	checkWrites(&cp, c, before, after)
	restore()

	// Nothing already stored changed.
	got, _, err := p.answers()
	if err != nil {
		cp.add("reports afterwards: %v", err)
		cp.changedStored = true
		return cp
	}
	gotLog := logObjects(t, got.Log)
	for id, w := range baseLog {
		g, ok := gotLog[id]
		if !ok {
			cp.add("stored decision %s is gone from orbit log", id)
			cp.changedStored = true
			continue
		}
		if c.Outcomes > 0 {
			// An outcome recorded changes what orbit derives from the
			// events: the current outcome, its time and evidence.
			g, w = without(g, "outcome", "outcome_ts", "evidence"), without(w, "outcome", "outcome_ts", "evidence")
		}
		if !reflect.DeepEqual(g, w) {
			cp.add("stored decision %s changed: %v, was %v", id, g, w)
			cp.changedStored = true
		}
	}
	if n, wantN := len(gotLog), len(baseLog)+c.Appends+c.Adds; n != wantN {
		cp.add("orbit log lists %d decisions; want %d", n, wantN)
	}
	if c.Appends == 0 && c.Adds == 0 && c.Outcomes == 0 {
		if d := got.diff(want); len(d) > 0 {
			cp.add("reports changed: %s", strings.Join(d, "; "))
		}
	}
	if c.Stored != "" && !holds(gotLog, c.Stored) {
		cp.add("no decision holds %q verbatim", c.Stored)
	}
	return cp
}

// files is what a project's .claude directory holds, by name.
type files map[string][]byte

// snapshot reads the project's .claude directory (regular files only;
// others are recorded by their mode).
func snapshot(p *project) files {
	fs := files{}
	entries, _ := os.ReadDir(p.path(".claude"))
	for _, e := range entries {
		path := p.path(".claude/" + e.Name())
		if e.Type().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				b = []byte("unreadable: " + err.Error())
			}
			fs[e.Name()] = b
		} else {
			fs[e.Name()] = []byte("mode " + e.Type().String())
		}
	}
	return fs
}

func checkWrites(cp *caseProblems, c badCase, before, after files) {
	allowed := map[string]bool{}
	for _, m := range c.MayWrite {
		allowed[filepath.Base(m)] = true
	}
	growth := map[string]int{filepath.Base(decisionsFile): c.Appends, filepath.Base(retroFile): c.Outcomes}
	for name, a := range after {
		b, existed := before[name]
		switch {
		case derived(name) || allowed[name]:
		case !existed:
			cp.add("wrote a new file .claude/%s", name)
		case growth[name] > 0:
			if !bytes.HasPrefix(a, b) {
				cp.add(".claude/%s: bytes already there changed", name)
				continue
			}
			added := strings.Split(strings.TrimSuffix(string(a[len(b):]), "\n"), "\n")
			if len(a) == len(b) {
				added = nil
			}
			if len(added) != growth[name] {
				cp.add(".claude/%s: %d lines appended; want %d", name, len(added), growth[name])
			}
			for _, l := range added {
				if !json.Valid([]byte(l)) {
					cp.add(".claude/%s: appended a line that is not JSON: %q", name, excerpt(l, 120))
				}
			}
		case !bytes.Equal(a, b):
			cp.add("changed .claude/%s (%d bytes, was %d)", name, len(a), len(b))
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok && !derived(name) {
			cp.add("removed .claude/%s", name)
		}
	}
}

// logObjects parses `orbit log --json` into its objects by id.
func logObjects(t *testing.T, log string) map[string]map[string]any {
	t.Helper()
	var es []map[string]any
	if err := json.Unmarshal([]byte(log), &es); err != nil {
		t.Fatalf("orbit log --json: %v", err)
	}
	m := map[string]map[string]any{}
	for _, e := range es {
		id, _ := e["id"].(string)
		m[id] = e
	}
	return m
}

func without(m map[string]any, keys ...string) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		if !slices.Contains(keys, k) {
			c[k] = v
		}
	}
	return c
}

// holds reports whether some decision has a field equal to s.
func holds(log map[string]map[string]any, s string) bool {
	for _, e := range log {
		for _, v := range e {
			if v == s {
				return true
			}
		}
	}
	return false
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// makeUnreadable takes every permission off path. Root reads anything, so
// when the suite runs as root it opens the project to everyone and returns
// the uid to run orbit as (nobody).
func makeUnreadable(t *testing.T, p *project, path string) uint32 {
	t.Helper()
	var uid uint32
	if os.Geteuid() == 0 {
		uid = 65534
		p.Trusted = true
		filepath.WalkDir(p.Root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Type()&fs.ModeSymlink == 0 {
				mode := os.FileMode(0o666)
				if d.IsDir() {
					mode = 0o777
				}
				os.Chmod(path, mode)
			}
			return nil
		})
	}
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	return uid
}

// generated returns a fixture too big or too strange to keep in git.
func generated(t *testing.T, kind string) []byte {
	t.Helper()
	rec := func(title string) map[string]any {
		return map[string]any{"id": "bad-big", "iteration": 9, "ts": "2026-04-01T10:00:00Z", "tier": "auto_approve", "depth": "trivial",
			"category": "quality", "input": title, "decision": "APPROVED", "reason": "r", "next_action": "", "verification": "PENDING",
			"retrograde": map[string]any{"previous_id": nil, "outcome": "N/A"}}
	}
	req := func(title string) map[string]any {
		return map[string]any{"id": "req-big", "title": title, "category": "quality", "impact": "low", "reversible": true}
	}
	var v any
	switch kind {
	case "10mb-journal-line":
		v = rec(strings.Repeat("x", 10<<20))
	case "10mb-queue-title":
		v = []any{req(strings.Repeat("x", 10<<20))}
	case "1mb-stdin-title":
		v = req(strings.Repeat("x", 1<<20-200))
	default:
		t.Fatalf("unknown generated fixture %q", kind)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}
