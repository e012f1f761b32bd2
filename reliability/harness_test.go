//go:build reliability

package reliability

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/synth"
)

// The files of a project, relative to its root.
const (
	decisionsFile = ".claude/ceo-loop-decisions.jsonl"
	retroFile     = ".claude/ceo-loop-retrograde.jsonl"
	pendingFile   = ".claude/ceo-decisions-pending.json"
	stateFile     = ".claude/ceo-loop-state.json"
	indexFile     = ".claude/orbit.db"
)

// project is an orbit project in a temporary directory.
type project struct {
	tb   testing.TB
	Root string
	// Trusted: the project was opened to every user (to run orbit in it as
	// another user), which orbit refuses unless trusted; every run in it
	// trusts it (ORBIT_SAFE_DIRECTORY), the refusal itself being the
	// security section's attack.
	Trusted bool
}

// newProject makes an empty project under dir: a .claude directory with
// an empty decision journal, as orbit init leaves it (a .claude alone is
// Claude Code's, not a project).
func newProject(tb testing.TB, dir string) *project {
	tb.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, decisionsFile), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return &project{tb: tb, Root: dir}
}

func (p *project) path(rel string) string { return filepath.Join(p.Root, rel) }

// result is what one orbit process did.
type result struct {
	Args   []string
	Stdout string
	Stderr string
	// Code is the exit status; -1 when the process was killed by a signal.
	Code   int
	Killed bool
	Dur    time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("orbit %s: exit %d\nstdout: %s\nstderr: %s", quoteArgs(r.Args), r.Code, excerpt(r.Stdout, 400), excerpt(r.Stderr, 400))
}

// quoteArgs renders args as a shell would need them.
func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?;&|<>()[]{}!#~") {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			q[i] = a
		}
	}
	return strings.Join(q, " ")
}

// excerpt keeps the start of s for a message.
func excerpt(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > n {
		return s[:n] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

// runOpts tune one run.
type runOpts struct {
	stdin []byte
	// asUser runs the process as this uid/gid (0: as the test). The
	// project is then another user's, which orbit refuses unless trusted:
	// such runs trust it (ORBIT_SAFE_DIRECTORY), as Trusted projects.
	asUser uint32
	// env is added to the process's environment.
	env []string
	// kill, if set, receives the process once it has started.
	started func(*os.Process)
}

// run runs orbit in the project's root with args and waits for it.
func (p *project) run(args ...string) result {
	return p.runWith(runOpts{}, args...)
}

func (p *project) runWith(o runOpts, args ...string) result {
	p.tb.Helper()
	cmd := exec.Command(orbitBin, args...)
	cmd.Dir = p.Root
	cmd.Env = append(envWithout(), o.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if o.stdin != nil {
		cmd.Stdin = bytes.NewReader(o.stdin)
	}
	if o.asUser != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: o.asUser, Gid: o.asUser}}
	}
	if o.asUser != 0 || p.Trusted {
		cmd.Env = append(cmd.Env, "ORBIT_SAFE_DIRECTORY="+p.Root)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		p.tb.Fatalf("start orbit %s: %v", quoteArgs(args), err)
	}
	if o.started != nil {
		o.started(cmd.Process)
	}
	err := cmd.Wait()
	r := result{Args: args, Stdout: stdout.String(), Stderr: stderr.String(), Dur: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Killed, r.Code = true, -1
		}
	default:
		p.tb.Fatalf("orbit %s: %v", quoteArgs(args), err)
	}
	return r
}

// must runs orbit and fails the test unless it exits 0.
func (p *project) must(args ...string) result {
	p.tb.Helper()
	r := p.run(args...)
	if r.Code != 0 {
		p.tb.Fatalf("%s", r)
	}
	return r
}

// answers are what the reports say: every decision with its current
// outcome, the trust report, and the journal as exported.
type answers struct {
	Log, Trust, Export string
}

// reportCommands are the commands whose output must not change when the
// index is lost or rebuilt.
var reportCommands = [][]string{
	{"log", "--limit", "0", "--json"},
	{"trust", "--json"},
	{"export"},
}

// answers runs the report commands in the given order (all three when order
// is nil); any exit but 0 is returned as an error with its output.
func (p *project) answers(order ...int) (answers, []result, error) {
	if order == nil {
		order = []int{0, 1, 2}
	}
	var a answers
	var rs []result
	for _, i := range order {
		r := p.run(reportCommands[i]...)
		rs = append(rs, r)
		if r.Code != 0 {
			return a, rs, fmt.Errorf("%s", r)
		}
		switch i {
		case 0:
			a.Log = r.Stdout
		case 1:
			a.Trust = r.Stdout
		case 2:
			a.Export = r.Stdout
		}
	}
	return a, rs, nil
}

// diff names the reports that differ.
func (a answers) diff(b answers) []string {
	var d []string
	if a.Log != b.Log {
		d = append(d, "orbit log --limit 0 --json: "+firstDiff(a.Log, b.Log))
	}
	if a.Trust != b.Trust {
		d = append(d, "orbit trust --json: "+firstDiff(a.Trust, b.Trust))
	}
	if a.Export != b.Export {
		d = append(d, "orbit export: "+firstDiff(a.Export, b.Export))
	}
	return d
}

// firstDiff describes where two outputs first differ, by line.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: %q, want %q (%d vs %d lines)", i+1, excerpt(x, 120), excerpt(y, 120), len(al), len(bl))
		}
	}
	return "same lines"
}

// logEntry is one decision of `orbit log --json`.
type logEntry struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
	Input   string `json:"input"`
}

// loggedIDs returns the ids `orbit log --limit 0 --json` lists.
func (p *project) loggedIDs() (map[string]logEntry, error) {
	r := p.run("log", "--limit", "0", "--json")
	if r.Code != 0 {
		return nil, fmt.Errorf("%s", r)
	}
	var es []logEntry
	if err := json.Unmarshal([]byte(r.Stdout), &es); err != nil {
		return nil, fmt.Errorf("orbit log --json: %v", err)
	}
	m := make(map[string]logEntry, len(es))
	for _, e := range es {
		m[e.ID] = e
	}
	return m, nil
}

// indexCounts is `orbit sync --json`'s view of the index.
type indexCounts struct {
	Decisions int `json:"decisions"`
	Events    int `json:"outcome_events"`
	Rejected  int `json:"rejected_lines"`
	Warnings  int `json:"warnings"`
}

func (p *project) indexCounts() (indexCounts, error) {
	r := p.run("sync", "--json")
	if r.Code != 0 {
		return indexCounts{}, fmt.Errorf("%s", r)
	}
	var v struct {
		Index indexCounts `json:"index"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
		return indexCounts{}, fmt.Errorf("orbit sync --json: %v", err)
	}
	return v.Index, nil
}

// verifyReport is `orbit verify --json`.
type verifyReport struct {
	OK    bool `json:"ok"`
	Files []struct {
		Path     string `json:"path"`
		Records  int    `json:"records"`
		Indexed  int    `json:"indexed"`
		Rejected int    `json:"rejected"`
		Unsynced int    `json:"unsynced"`
	} `json:"files"`
	Findings []struct {
		File     string `json:"file"`
		Line     int    `json:"line"`
		Severity string `json:"severity"`
		Code     string `json:"code"`
		Message  string `json:"message"`
	} `json:"findings"`
}

func (p *project) verify() (verifyReport, result, error) {
	r := p.run("verify", "--json", "--all")
	var v verifyReport
	if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
		return v, r, fmt.Errorf("orbit verify --json: %v\n%s", err, r)
	}
	return v, r, nil
}

// line is one physical line of a journal.
type line struct {
	N    int
	Text string
	// Terminated is false for a last line without its newline.
	Terminated bool
}

// readLines splits a file into its physical lines.
func readLines(path string) ([]line, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ls []line
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			ls = append(ls, line{N: n, Text: string(data)})
			break
		}
		ls = append(ls, line{N: n, Text: string(data[:i]), Terminated: true})
		data = data[i+1:]
	}
	return ls, nil
}

// record is the part of a journal line the suite looks at.
type record struct {
	ID         string `json:"id"`
	DecisionID string `json:"decision_id"`
	Outcome    string `json:"outcome"`
	Evidence   string `json:"evidence"`
}

// ackRE finds the id in a decision block.
var ackRE = regexp.MustCompile(`(?m)^\[CEO-LOOP\] Decision on: .*\n├─ Id: (iter-\d+-\d+) `)

// ackedID returns the id a successful `orbit decide` acknowledged, or "".
func ackedID(r result) string {
	if r.Code != 0 {
		return ""
	}
	if m := ackRE.FindStringSubmatch(r.Stdout); m != nil {
		return m[1]
	}
	var v struct {
		Decision struct {
			ID string `json:"id"`
		} `json:"decision"`
		Written bool `json:"written"`
	}
	if json.Unmarshal([]byte(r.Stdout), &v) == nil && v.Written {
		return v.Decision.ID
	}
	return ""
}

// writeJournal writes a synthetic journal of n decisions (about 30% of them
// later judged in another decision line's retrograde field) and an outcome
// journal of m lines judging some of them.
func writeJournal(tb testing.TB, p *project, n, m int, seed uint64) {
	tb.Helper()
	var b bytes.Buffer
	if err := synth.Generate(&b, synth.Options{Decisions: n, Seed: seed}); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p.path(decisionsFile), b.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var r record
		if json.Unmarshal([]byte(l), &r) == nil {
			ids = append(ids, r.ID)
		}
	}
	var rb bytes.Buffer
	at := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	for i := 0; i < m; i++ {
		out := "CORRECT"
		if i%4 == 3 {
			out = "INCORRECT"
		}
		fmt.Fprintf(&rb, `{"ts":%q,"decision_id":%q,"outcome":%q,"evidence":"check %d"}`+"\n",
			at.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), ids[(i*37)%len(ids)], out, i)
	}
	if m > 0 {
		if err := os.WriteFile(p.path(retroFile), rb.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// copyTree copies a directory (regular files, directories and symlinks).
func copyTree(tb testing.TB, src, dst string) {
	tb.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		}
		return copyFile(path, to)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// cloneProject copies a project's files into a new directory under dir.
func cloneProject(tb testing.TB, p *project, dir string) *project {
	tb.Helper()
	copyTree(tb, p.Root, dir)
	return &project{tb: tb, Root: dir}
}

// freshAnswers are the answers of a project holding only these journal
// files, indexed from nothing: what any report must say about them.
func freshAnswers(tb testing.TB, p *project) answers {
	tb.Helper()
	q := newProject(tb, tb.TempDir())
	for _, f := range []string{decisionsFile, retroFile} {
		if fileExists(p.path(f)) {
			if err := copyFile(p.path(f), q.path(f)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	a, _, err := q.answers()
	if err != nil {
		tb.Fatalf("answers of a fresh index: %v", err)
	}
	return a
}
