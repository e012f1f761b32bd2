package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/hook"
	"github.com/orbit-loop/orbit/project"
)

// TestAdoptRunningLoop is issue 15's "done means", with the real orbit
// binary: a project whose ORBIT CEO loop ran before orbit (testdata/adopt,
// from the loop's own documentation examples: counters 47/2 at iteration 7,
// an agent-written progress file with notes, a queue with one bad item, the
// loop's ceo-loop-stop.sh, a monorepo package with its own .claude/) goes
// through init --claude, ten iterations of the Stop hook run from the
// package (decisions recorded by orbit decide and by plain appends of JSON
// lines, one invalid), a stop and a restart. No counter, progress line or
// queue item is lost, every rejection reaches the prompt, iterations never
// restart, and no Stop is silent.
func TestAdoptRunningLoop(t *testing.T) {
	t.Parallel()
	bin := buildOrbit(t)
	root := t.TempDir()
	copyAdoptProject(t, filepath.Join("..", "..", "testdata", "adopt"), root)
	pkg := filepath.Join(root, "packages", "web")
	home := t.TempDir()
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	origProgress := read(project.ProgressFile)
	origQueue := read(project.PendingFile)
	// run runs orbit in dir with stdin; env adds to a bare environment.
	run := func(dir, stdin string, env []string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, env...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("orbit %s: %v", strings.Join(args, " "), err)
		}
		return out.String(), errOut.String(), code
	}
	must := func(dir string, want int, args ...string) string {
		t.Helper()
		out, errOut, code := run(dir, "", nil, args...)
		if code != want {
			t.Fatalf("orbit %s in %s: exit %d; want %d\n%s%s", strings.Join(args, " "), dir, code, want, out, errOut)
		}
		return out
	}

	// init --claude: refused beside the loop's own Stop hook, then replaces it.
	if _, errOut, code := run(root, "", nil, "init", "--claude"); code != exitError || !strings.Contains(errOut, "--replace-ceo-hook") {
		t.Fatalf("init --claude beside ceo-loop-stop.sh: exit %d, %q; want the command to run", code, errOut)
	}
	must(root, exitOK, "init", "--claude", "--replace-ceo-hook")
	settings := read(hook.SettingsFile)
	if strings.Contains(settings, "ceo-loop-stop.sh") || strings.Count(settings, "hook stop\"") != 1 || !strings.Contains(settings, `"Bash(npm test)"`) {
		t.Fatalf("settings.json after init: want orbit's Stop hook in the loop's place, the rest kept:\n%s", settings)
	}
	if _, err := os.Stat(filepath.Join(pkg, ".claude", "orbit.db")); err == nil {
		t.Fatalf("init created an index in the package")
	}

	journal := filepath.Join(root, filepath.FromSlash(project.DecisionsFile))
	appendLine := func(line string) {
		f, err := os.OpenFile(journal, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	lineCount := func() int { return strings.Count(read(project.DecisionsFile), "\n") }
	iterationOf := func() int64 {
		var st struct {
			Iteration int64 `json:"iteration"`
		}
		if err := json.Unmarshal([]byte(read(project.StateFile)), &st); err != nil {
			t.Fatal(err)
		}
		return st.Iteration
	}

	var rejectedAt string // file:line of the invalid line, once appended
	sawRejection, sawBadItem := false, false
	last := iterationOf()
	for i := range 10 {
		it := last
		switch i {
		case 0:
			must(pkg, exitOK, "decide", "--title", "Add ESLint auto-fix to CI", "--category", "quality", "--impact", "low", "--reversible")
		case 1:
			// One bad item decides nothing of its own and blocks nothing.
			out, errOut, code := run(pkg, "", nil, "decide", "--queue")
			if code != exitFindings || !strings.Contains(out, "Add ESLint rule eqeqeq") || !strings.Contains(out, "Fix the README typo") ||
				!strings.Contains(out, "1 invalid item left as written") || !strings.Contains(errOut, "req-004") {
				t.Errorf("decide --queue: exit %d\n%s%s\nwant exit 3, the two trivial items decided, req-004 named", code, out, errOut)
			}
		case 2:
			// The agent without Bash: a JSON line written with its Write tool.
			appendLine(fmt.Sprintf(`{"id":"iter-%d-9","iteration":%d,"ts":"2026-11-30T10:00:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"Pin prettier to 3.3","decision":"APPROVED","reason":"formatting only","next_action":"commit","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"},"confidence":0.9}`, it, it))
			appendLine(fmt.Sprintf(`{"id":"iter-%d-10","iteration":%d,"ts":"2026-11-30T10:01:00Z","tier":"auto_approve","depth":"trivial","category":"qualty","input":"Pin eslint","decision":"APPROVED","reason":"r","next_action":"n","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"}}`, it, it))
			rejectedAt = fmt.Sprintf("%s:%d: category \"qualty\"", project.DecisionsFile, lineCount())
		case 3:
			must(pkg, exitOK, "decide", "--request", "req-001", "--decision", "APPROVED", "--reason", "polling latency hurts; reversible", "--next-action", "prototype behind a flag")
		case 4:
			must(pkg, exitOK, "retro", "iter-7-2", "CORRECT", "--evidence", "CI green")
		case 5:
			must(pkg, exitOK, "retro", fmt.Sprintf("iter-%d-9", it-3), "INCORRECT", "--evidence", "prettier 3.3 broke the build")
		case 6:
			// The agent keeps writing its notes.
			f, err := os.OpenFile(filepath.Join(root, filepath.FromSlash(project.ProgressFile)), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(f, "- iter-%d: WebSocket prototype landed behind a flag\n", it)
			f.Close()
		default:
			must(pkg, exitOK, "decide", "--title", fmt.Sprintf("Document iteration %d", it), "--category", "quality", "--impact", "low", "--reversible")
		}

		var env []string
		if i%2 == 1 {
			env = []string{"CLAUDE_PROJECT_DIR=" + root}
		}
		in := fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"Stop","last_assistant_message":"iteration %d done"}`, pkg, it)
		out, errOut, code := run(pkg, in, env, "hook", "stop")
		var o hook.Output
		if code != 0 || json.Unmarshal([]byte(out), &o) != nil {
			t.Fatalf("Stop %d: exit %d, stdout %q, stderr %q; want exit 0 and JSON", i+1, code, out, errOut)
		}
		if o.Decision != "block" || o.Reason == "" {
			t.Fatalf("Stop %d (iteration %d): %+v; want the loop driven (block with the next prompt)", i+1, it, o)
		}
		now := iterationOf()
		if now != it+1 || !strings.Contains(o.Reason, fmt.Sprintf("ORBIT loop — iteration %d of 20", now)) {
			t.Errorf("Stop %d: state iteration %d, prompt %q…; want iteration %d", i+1, now, firstLine(o.Reason), it+1)
		}
		last = now
		if rejectedAt != "" && strings.Contains(o.Reason, rejectedAt) && strings.Contains(o.SystemMessage, rejectedAt) {
			sawRejection = true
		}
		if strings.Contains(o.Reason, "req-004") {
			sawBadItem = true
		}
		// Adopted counters appear in every prompt.
		if !strings.Contains(o.Reason, "47/49 from before orbit") {
			t.Errorf("Stop %d: the prompt does not state the adopted counters:\n%s", i+1, o.Reason)
		}
	}
	if !sawRejection {
		t.Errorf("the invalid line (%s) never reached the prompt and the systemMessage", rejectedAt)
	}
	if !sawBadItem {
		t.Errorf("the bad queue item req-004 never reached the prompt")
	}
	if _, err := os.Stat(filepath.Join(pkg, ".claude", "orbit.db")); err == nil {
		t.Errorf("the hooks created an index in the package")
	}

	// Counters: the 47/2 before orbit, plus the outcomes recorded since.
	var st struct {
		Correct   int64 `json:"correct_decisions"`
		Incorrect int64 `json:"incorrect_decisions"`
		Started   string
	}
	json.Unmarshal([]byte(read(project.StateFile)), &st)
	if st.Correct != 48 || st.Incorrect != 3 {
		t.Errorf("state counters %d/%d; want 48/3 (47/2 adopted, +1 CORRECT, +1 INCORRECT)", st.Correct, st.Incorrect)
	}

	// A stop and a restart: iterations go on, nothing unverified hidden.
	must(root, exitOK, "loop", "stop")
	start := must(root, exitOK, "loop", "start")
	if !strings.Contains(start, fmt.Sprintf("iteration %d of", last+1)) {
		t.Errorf("loop start after iteration %d: %q; want it to go on from there", last, start)
	}
	out := must(pkg, exitOK, "decide", "--title", "Bump the lockfile", "--category", "quality", "--impact", "low", "--reversible", "--json=id")
	var d struct{ ID string }
	if json.Unmarshal([]byte(out), &d); d.ID != fmt.Sprintf("iter-%d-1", last+1) {
		t.Errorf("the first decision after the restart: %s; want iter-%d-1", out, last+1)
	}
	if stale := must(root, exitOK, "stale", "--json"); !strings.Contains(stale, `"iter-7-1"`) {
		t.Errorf("orbit stale after the restart hides the old loop's unverified decisions:\n%s", stale)
	}
	out, errOut, code := run(pkg, fmt.Sprintf(`{"session_id":"s2","cwd":%q,"last_assistant_message":"go"}`, pkg), nil, "hook", "stop")
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Errorf("the Stop after the restart: exit %d, stdout %q, stderr %q; want the loop driven", code, out, errOut)
	}

	// No line of the agent's progress file lost.
	progress := read(project.ProgressFile)
	for _, l := range strings.Split(strings.TrimSpace(origProgress), "\n") {
		if !strings.Contains(progress, l+"\n") {
			t.Errorf("progress file lost the agent's line %q:\n%s", l, progress)
		}
	}
	if !regexp.MustCompile(`(?m)^- iter-1[0-9]: WebSocket prototype landed behind a flag$`).MatchString(progress) {
		t.Errorf("progress file lost the note the agent wrote during the loop:\n%s", progress)
	}
	// No queue item lost: each is decided (in the journal) or still queued.
	var items []struct {
		ID string `json:"id"`
	}
	json.Unmarshal([]byte(origQueue), &items)
	queue, journalText := read(project.PendingFile), read(project.DecisionsFile)
	for _, it := range items {
		if !strings.Contains(queue, `"`+it.ID+`"`) && !strings.Contains(journalText, `"request_id":"`+it.ID+`"`) {
			t.Errorf("queue item %s lost: neither queued nor decided", it.ID)
		}
	}
	if !strings.Contains(queue, `"category": "qualty"`) {
		t.Errorf("the bad queue item was not kept as written:\n%s", queue)
	}
	// The journal's first line is the loop's, as it was.
	if first := strings.SplitN(journalText, "\n", 2)[0]; !strings.HasPrefix(first, `{"id":"iter-7-1","iteration":7,"ts":"ISO-8601"`) {
		t.Errorf("the journal's first line changed: %q", first)
	}
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }

// buildOrbit builds the orbit binary into a temporary directory.
func buildOrbit(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "orbit")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// copyAdoptProject copies testdata/adopt to dst, its claude/ directories
// becoming .claude/.
func copyAdoptProject(tb testing.TB, src, dst string) {
	tb.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "README.md" {
			return nil
		}
		parts := strings.Split(rel, string(filepath.Separator))
		for i, s := range parts {
			if s == "claude" {
				parts[i] = ".claude"
			}
		}
		to := filepath.Join(dst, filepath.Join(parts...))
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		tb.Fatal(err)
	}
}
