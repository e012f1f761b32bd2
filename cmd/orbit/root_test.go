package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// commandPaths lists every command of the tree, as the arguments that reach
// it ("" for the root).
func commandPaths(cmd *cobra.Command, prefix []string) [][]string {
	out := [][]string{prefix}
	for _, c := range cmd.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		out = append(out, commandPaths(c, append(append([]string(nil), prefix...), c.Name()))...)
	}
	return out
}

func TestHelpHasExamples(t *testing.T) {
	paths := commandPaths(newCmdRoot(NewFactory(&IOStreams{})), nil)
	if len(paths) < 11 {
		t.Fatalf("found %d commands; want at least 11 (root, init, import, export, log, sync, rebuild, verify, migrate, migrate status, migrate up, demo)", len(paths))
	}
	for _, path := range paths {
		name := strings.Join(append([]string{"orbit"}, path...), " ")
		t.Run(name, func(t *testing.T) {
			res := orbit(t, env{}, append(path, "--help")...)
			if res.code != exitOK {
				t.Fatalf("%s --help: exit %d; want 0 (stderr %q)", name, res.code, res.stderr)
			}
			if !strings.Contains(res.stdout, "\nExamples:\n") {
				t.Errorf("%s --help has no Examples section:\n%s", name, res.stdout)
			}
			if !strings.Contains(res.stdout, "Usage:\n  "+name) {
				t.Errorf("%s --help does not show its usage line:\n%s", name, res.stdout)
			}
			if res.stderr != "" {
				t.Errorf("%s --help stderr = %q; want empty", name, res.stderr)
			}
		})
	}
}

// TestOutsideProject runs every command that needs a project in a directory
// that is not in one: one line on stderr naming the problem, a non-zero
// exit, and nothing created.
func TestOutsideProject(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	src := copyFixture(t, "journal.jsonl")
	outFile := filepath.Join(t.TempDir(), "x.jsonl")
	tests := []struct {
		name string
		args []string
	}{
		{name: "log", args: []string{"log"}},
		{name: "log json", args: []string{"log", "--json"}},
		{name: "export", args: []string{"export"}},
		{name: "export to file", args: []string{"export", "--out", outFile}},
		{name: "import", args: []string{"import", src}},
		{name: "sync", args: []string{"sync"}},
		{name: "rebuild", args: []string{"rebuild"}},
		{name: "verify", args: []string{"verify"}},
		{name: "migrate status", args: []string{"migrate", "status"}},
		{name: "migrate up", args: []string{"migrate", "up"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wd := filepath.Join(t.TempDir(), "not-a-project")
			if err := os.Mkdir(wd, 0o755); err != nil {
				t.Fatal(err)
			}
			res := orbit(t, env{wd: wd}, tt.args...)
			if res.code == exitOK {
				t.Fatalf("orbit %s outside a project: exit 0; want non-zero", strings.Join(tt.args, " "))
			}
			if res.code != exitError {
				t.Errorf("orbit %s outside a project: exit %d; want %d", strings.Join(tt.args, " "), res.code, exitError)
			}
			if got := lines(res.stderr); len(got) != 1 {
				t.Errorf("stderr has %d lines; want 1:\n%s", len(got), res.stderr)
			}
			for _, want := range []string{"orbit: not inside an orbit project", wd, "orbit init"} {
				if !strings.Contains(res.stderr, want) {
					t.Errorf("stderr %q does not contain %q", res.stderr, want)
				}
			}
			if res.stdout != "" {
				t.Errorf("stdout = %q; want empty", res.stdout)
			}
			entries, err := os.ReadDir(wd)
			if err != nil || len(entries) != 0 {
				t.Errorf("the working directory changed: %d entries (%v)", len(entries), err)
			}
		})
	}
}

// TestProjectDiscovery checks the ways a command finds its project.
func TestProjectDiscovery(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	p := projectWith(t, "journal.jsonl")
	sub := p.path("src/deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	file := p.path("README")
	p.write("README", "x")
	tests := []struct {
		name     string
		env      env
		args     []string
		wantCode int
		wantErr  string // stderr ("" for none)
	}{
		{name: "--root", args: []string{"--root", p.root, "log", "--limit", "1"}},
		{name: "ORBIT_ROOT", env: env{vars: map[string]string{"ORBIT_ROOT": p.root}}, args: []string{"log", "--limit", "1"}},
		{name: "working directory in a subdirectory", env: env{wd: sub}, args: []string{"log", "--limit", "1"}},
		{name: "--root beats ORBIT_ROOT", env: env{vars: map[string]string{"ORBIT_ROOT": "/nonexistent"}}, args: []string{"--root", p.root, "log", "--limit", "1"}},
		{name: "--root is a file", args: []string{"--root", file, "log"}, wantCode: exitError,
			wantErr: "orbit: --root " + file + ": not a directory\n"},
		{name: "--root does not exist", args: []string{"--root", p.path("nope"), "log"}, wantCode: exitError,
			wantErr: "orbit: --root " + p.path("nope") + ": not a directory\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := orbit(t, tt.env, tt.args...)
			if res.code != tt.wantCode {
				t.Fatalf("exit %d; want %d (stderr %q)", res.code, tt.wantCode, res.stderr)
			}
			if res.stderr != tt.wantErr {
				t.Errorf("stderr = %q; want %q", res.stderr, tt.wantErr)
			}
			if tt.wantCode == exitOK && !strings.HasPrefix(res.stdout, "iter-3-2\t") {
				t.Errorf("stdout = %q; want the newest decision of the project", res.stdout)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	tests := []struct {
		name     string
		args     []string
		wantLine string // stderr before the pointer to --help
		wantHelp string // the command path named by the second line
	}{
		{name: "unknown command", args: []string{"lgo"}, wantLine: "orbit: unknown command \"lgo\" for \"orbit\"; did you mean log or loop?", wantHelp: "orbit"},
		{name: "unknown command, no suggestion", args: []string{"frobnicate"}, wantLine: `orbit: unknown command "frobnicate" for "orbit"`, wantHelp: "orbit"},
		{name: "unknown flag", args: []string{"log", "--verbose"}, wantLine: "orbit: unknown flag: --verbose", wantHelp: "orbit log"},
		{name: "extra argument", args: []string{"verify", "now"}, wantLine: `orbit: unexpected argument "now"`, wantHelp: "orbit verify"},
		{name: "import without a file", args: []string{"import"}, wantLine: "orbit: import needs at least one FILE", wantHelp: "orbit import"},
		{name: "negative limit", args: []string{"log", "--limit", "-3"}, wantLine: "orbit: --limit -3: must be 0 (all) or more", wantHelp: "orbit log"},
		{name: "unknown category", args: []string{"log", "--category", "bogus"},
			wantLine: `orbit: --category "bogus" is not allowed (allowed: feature, architecture, quality, scope, deploy)`, wantHelp: "orbit log"},
		{name: "unknown outcome", args: []string{"log", "--outcome", "WRONG"},
			wantLine: `orbit: --outcome "WRONG" is not allowed (allowed: CORRECT, INCORRECT, PENDING, N/A)`, wantHelp: "orbit log"},
		{name: "unknown JSON field", args: []string{"log", "--json=bogus"},
			wantLine: `orbit: invalid argument "bogus" for "--json" flag: unknown JSON field "bogus" (available: id, iteration, ts, tier, depth, category, input, decision, reason, next_action, verification, retrograde, confidence, requestor, context, request_id, outcome, outcome_ts, evidence, voided, void_reason, line)`,
			wantHelp: "orbit log"},
		{name: "unknown export format", args: []string{"export", "--format", "xml"},
			wantLine: `orbit: --format "xml" is not allowed (allowed: jsonl, csv, md)`, wantHelp: "orbit export"},
		{name: "unknown migrate subcommand argument", args: []string{"migrate", "status", "now"}, wantLine: `orbit: unexpected argument "now"`, wantHelp: "orbit migrate status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := p.run(tt.args...)
			if res.code != exitUsage {
				t.Errorf("orbit %s: exit %d; want %d", strings.Join(tt.args, " "), res.code, exitUsage)
			}
			want := tt.wantLine + "\nRun '" + tt.wantHelp + " --help' for usage.\n"
			if res.stderr != want {
				t.Errorf("orbit %s stderr = %q; want %q", strings.Join(tt.args, " "), res.stderr, want)
			}
			if res.stdout != "" {
				t.Errorf("orbit %s stdout = %q; want empty", strings.Join(tt.args, " "), res.stdout)
			}
		})
	}
}

// TestRuntimeErrorsAreNotUsage checks that an error from doing the work
// exits 1, whatever words the paths in its message happen to contain.
func TestRuntimeErrorsAreNotUsage(t *testing.T) {
	p := newProject(t)
	dir := t.TempDir()
	tests := []struct {
		name string
		file string
	}{
		{name: "missing file", file: filepath.Join(dir, "missing.jsonl")},
		{name: "missing file under a directory named 'received from ops'", file: filepath.Join(dir, "received from ops", "x.jsonl")},
		{name: "missing file named 'accepts 2.jsonl'", file: filepath.Join(dir, "accepts 2.jsonl")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := p.run("import", tt.file)
			if res.code != exitError {
				t.Errorf("orbit import %q: exit %d; want %d\nstderr:\n%s", tt.file, res.code, exitError, res.stderr)
			}
			if strings.Contains(res.stderr, "--help' for usage") {
				t.Errorf("orbit import %q: a missing file is reported as a usage mistake:\n%s", tt.file, res.stderr)
			}
			if !strings.Contains(res.stderr, tt.file) || !strings.Contains(res.stderr, "no such file or directory") {
				t.Errorf("stderr %q does not name the missing file", res.stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	res := orbit(t, env{}, "--version")
	if res.code != exitOK || !strings.HasPrefix(res.stdout, "orbit version ") {
		t.Errorf("orbit --version = exit %d, %q; want 0, \"orbit version ...\"", res.code, res.stdout)
	}
}

// TestHomeDirectory checks the home-directory rule through the CLI: Claude
// Code's own ~/.claude/ does not make $HOME a project; orbit's files in it
// do.
func TestHomeDirectory(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string // under $HOME
		wantCode int
	}{
		{name: "settings only", files: map[string]string{".claude/settings.json": "{}"}, wantCode: exitError},
		{name: "decision journal", files: map[string]string{".claude/settings.json": "{}", journalRel: string(readFixture(t, "journal.jsonl"))}, wantCode: exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			for rel, content := range tt.files {
				if err := os.WriteFile(filepath.Join(home, rel), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wd := filepath.Join(home, "src", "tool")
			if err := os.MkdirAll(wd, 0o755); err != nil {
				t.Fatal(err)
			}
			res := orbit(t, env{wd: wd}, "log", "-n", "1")
			if res.code != tt.wantCode {
				t.Fatalf("log under $HOME: exit %d; want %d (stderr %q)", res.code, tt.wantCode, res.stderr)
			}
			if tt.wantCode != exitOK {
				if !strings.Contains(res.stderr, "not inside an orbit project") {
					t.Errorf("stderr = %q; want it to say there is no project", res.stderr)
				}
				if _, err := os.Stat(filepath.Join(home, ".claude", "orbit.db")); err == nil {
					t.Errorf("log created an index in $HOME/.claude")
				}
			} else if !strings.HasPrefix(res.stdout, "iter-3-2\t") {
				t.Errorf("stdout = %q; want the newest decision of the home journal", res.stdout)
			}
		})
	}
}

// TestUnknownSubcommandEverywhere walks the whole command tree: under every
// command that groups subcommands, an unknown one is a usage error (exit
// 2) with nothing on stdout, and a near miss of each subcommand names it
// ("did you mean"). So does `orbit help` with such a path. Registered as a
// hook, a typo that printed help and exited 0 would be unparseable output
// and a silently dead loop (issue 15, point 4).
func TestUnknownSubcommandEverywhere(t *testing.T) {
	var groups []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasSubCommands() {
			groups = append(groups, c)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newCmdRoot(NewFactory(&IOStreams{})))
	if len(groups) < 6 { // root, knowledge, loop, hook, report, migrate, completion
		t.Fatalf("found %d command groups; want at least 6", len(groups))
	}
	check := func(t *testing.T, args []string, wantSuggestion string) {
		t.Helper()
		res := orbit(t, env{}, args...)
		if res.code != exitUsage {
			t.Errorf("orbit %s: exit %d; want %d", strings.Join(args, " "), res.code, exitUsage)
		}
		if res.stdout != "" {
			t.Errorf("orbit %s: stdout %q; want nothing", strings.Join(args, " "), res.stdout)
		}
		if !strings.Contains(res.stderr, "unknown command") {
			t.Errorf("orbit %s: stderr %q; want it to say unknown command", strings.Join(args, " "), res.stderr)
		}
		if wantSuggestion != "" && !strings.Contains(res.stderr, "did you mean "+wantSuggestion) && !strings.Contains(res.stderr, " or "+wantSuggestion) {
			t.Errorf("orbit %s: stderr %q; want did you mean %s", strings.Join(args, " "), res.stderr, wantSuggestion)
		}
	}
	for _, g := range groups {
		path := strings.Fields(g.CommandPath())[1:]
		t.Run(g.CommandPath(), func(t *testing.T) {
			check(t, append(append([]string(nil), path...), "zzqxw"), "")
			check(t, append([]string{"help"}, append(append([]string(nil), path...), "zzqxw")...), "")
			for _, sub := range g.Commands() {
				if sub.Hidden || sub.Name() == "help" || len(sub.Name()) < 4 {
					continue
				}
				// Drop the second letter: one edit away.
				typo := sub.Name()[:1] + sub.Name()[2:]
				check(t, append(append([]string(nil), path...), typo), sub.Name())
			}
		})
	}
	// The cases the issue reported.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"hook", "stp"}, "stop"},
		{[]string{"loop", "lst"}, "list"},
		{[]string{"report", "progres"}, "progress"},
		{[]string{"migrate", "stats"}, "status"},
		{[]string{"knowledge", "lst"}, "list"},
	} {
		check(t, tt.args, tt.want)
	}
	// A group run bare still shows its help, and a known help topic too.
	for _, args := range [][]string{{"loop"}, {"help", "loop", "stop"}} {
		if res := orbit(t, env{}, args...); res.code != exitOK || !strings.Contains(res.stdout, "Usage:") {
			t.Errorf("orbit %s: exit %d, stdout %q; want its help, exit 0", strings.Join(args, " "), res.code, res.stdout)
		}
	}
}
