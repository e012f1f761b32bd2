package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/hook"
)

// Issue 15, point 12: adopting orbit in a project whose ORBIT CEO loop
// already runs. Each test fails on init --claude as it was: a second Stop
// entry beside settings.local.json's, the loop's own Stop hook left racing
// orbit's, no .gitignore, a diff on every run, no way back.

// ceoSettings is a project's settings.json as the ORBIT CEO loop leaves it:
// its ceo-loop-stop.sh Stop hook, and the user's other settings.
const ceoSettings = `{
  "permissions": {
    "allow": ["Bash(npm run lint)"]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Write|Edit",
        "hooks": [{"type": "command", "command": "python3 .claude/hooks/guard.py", "timeout": 10}]
      }
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR\"/hooks/scripts/ceo-loop-stop.sh"}]}
    ]
  }
}
`

// TestInitClaudeCEOHook: the loop's own Stop hook is refused with the
// command to run (nothing written); --replace-ceo-hook puts orbit's in its
// place, so one Stop hook drives the loop; --uninstall puts it back, byte
// for byte, and takes out every file init --claude added.
func TestInitClaudeCEOHook(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(hook.SettingsFile, ceoSettings)
	before := dirListing(t, p.root)

	res := p.run("init", "--claude")
	want := `orbit: init --claude: .claude/settings.json:13: hooks.Stop runs "bash \"$CLAUDE_PROJECT_DIR\"/hooks/scripts/ceo-loop-stop.sh", the ORBIT CEO loop's own Stop hook, which orbit hook stop replaces`
	if res.code != exitError || !strings.HasPrefix(res.stderr, want) || !strings.Contains(res.stderr, "`orbit init --claude --replace-ceo-hook` replaces it") || res.stdout != "" {
		t.Errorf("init --claude beside ceo-loop-stop.sh: exit %d, stdout %q, stderr %q; want exit 1 and %q… with the command to run", res.code, res.stdout, res.stderr, want)
	}
	if after := dirListing(t, p.root); !slices.Equal(after, before) || p.read(hook.SettingsFile) != ceoSettings {
		t.Errorf("the refused init wrote %q; want nothing (%q)", after, before)
	}

	res = p.mustRun("init", "--claude", "--replace-ceo-hook")
	for _, w := range []string{
		`  updated  .claude/settings.json: replaced "bash \"$CLAUDE_PROJECT_DIR\"/hooks/scripts/ceo-loop-stop.sh" on Stop by orbit hook stop (--uninstall puts it back); added orbit's SubagentStop and SessionStart hooks (orbit hook …, timeout 30s)` + "\n",
		"  created  .claude/orbit-replaced-hooks.json: 1 replaced hook kept for --uninstall\n",
		ignoreAdded,
	} {
		if !strings.Contains(res.stdout, w) {
			t.Errorf("init --claude --replace-ceo-hook stdout lacks %q:\n%s", w, res.stdout)
		}
	}
	got := p.read(hook.SettingsFile)
	if !strings.Contains(got, "\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"orbit hook stop\", \"timeout\": 30}]}\n    ],\n    \"SubagentStop\"") ||
		strings.Contains(got, "ceo-loop-stop.sh") || strings.Count(got, "hook stop") != 1 {
		t.Errorf("settings.json after --replace-ceo-hook: want orbit's Stop hook in the loop's place, and only it:\n%s", got)
	}
	if !strings.HasPrefix(got, ceoSettings[:strings.Index(ceoSettings, `      {"hooks": [{"type": "command", "command": "bash`)]) {
		t.Errorf("settings.json before the Stop hook changed:\n%s", got)
	}

	res = p.mustRun("init", "--claude", "--uninstall")
	wantOut := `  updated  .claude/settings.json: put back "bash \"$CLAUDE_PROJECT_DIR\"/hooks/scripts/ceo-loop-stop.sh" on Stop; removed orbit's 2 hooks` + "\n" +
		"  removed  .claude/orbit-replaced-hooks.json: the hooks put back\n" +
		"  removed  .claude/.gitignore: removed orbit's 7 lines\n"
	if res.stdout != wantOut {
		t.Errorf("--uninstall stdout =\n%s\nwant\n%s", res.stdout, wantOut)
	}
	if got := p.read(hook.SettingsFile); got != ceoSettings {
		t.Errorf("settings.json after --uninstall =\n%s\nwant it as the user wrote it:\n%s", got, ceoSettings)
	}
	for _, rel := range []string{hook.ReplacedFile, hook.GitignoreFile} {
		if p.exists(rel) {
			t.Errorf("%s left after --uninstall", rel)
		}
	}
	// The journal and the index are the loop's, not init --claude's.
	if !p.exists(journalRel) {
		t.Errorf("--uninstall removed the journal")
	}
	res = p.mustRun("init", "--claude", "--uninstall")
	if !strings.HasPrefix(res.stdout, "nothing of orbit's in") {
		t.Errorf("a second --uninstall: %q; want nothing to do", res.stdout)
	}
}

// TestInitClaudeLocal: --local registers the hooks in settings.local.json;
// a Stop hook registered in either file gets no second entry.
func TestInitClaudeLocal(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.mustRun("init", "--claude", "--local")
	if p.exists(hook.SettingsFile) {
		t.Errorf("--local wrote settings.json")
	}
	if got := p.read(hook.LocalSettingsFile); got != orbitHooksOnly {
		t.Errorf("settings.local.json =\n%s\nwant\n%s", got, orbitHooksOnly)
	}
	// The file orbit created is yours alone: git ignores it.
	if got := p.read(hook.GitignoreFile); !strings.HasSuffix(got, "\n/settings.local.json\n") {
		t.Errorf(".gitignore after --local =\n%s\nwant settings.local.json ignored", got)
	}
	res := p.mustRun("init", "--claude")
	if p.exists(hook.SettingsFile) || !strings.Contains(res.stdout, "  exists   .claude/settings.local.json: orbit's Stop, SubagentStop and SessionStart hooks registered\n") {
		t.Errorf("init --claude after --local added hooks to settings.json (a second Stop entry):\n%s", res.stdout)
	}

	// orbit's Stop hook in settings.json (an older orbit's init): --local
	// adds the others only.
	q := newProject(t)
	q.write(hook.SettingsFile, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "orbit hook stop"}]}]}}`)
	q.mustRun("init", "--claude", "--local")
	local := q.read(hook.LocalSettingsFile)
	if strings.Contains(local, "hook stop") || !strings.Contains(local, "orbit hook subagent-stop") || !strings.Contains(local, "orbit hook session-start") {
		t.Errorf("settings.local.json =\n%s\nwant orbit's SubagentStop and SessionStart hooks, not a second Stop", local)
	}
	// --uninstall takes them out of both files; a file that held nothing
	// else goes.
	q.mustRun("init", "--claude", "--uninstall")
	if q.exists(hook.LocalSettingsFile) || q.exists(hook.SettingsFile) || q.exists(hook.GitignoreFile) {
		t.Errorf("after --uninstall: settings.local.json exists %v, settings.json %v, .gitignore %v; want all gone (they held orbit's lines only)", q.exists(hook.LocalSettingsFile), q.exists(hook.SettingsFile), q.exists(hook.GitignoreFile))
	}
}

// TestInitClaudeGitignore: orbit's derived files join the user's
// .claude/.gitignore after their lines (a pattern already there is not
// repeated), and --uninstall takes out exactly those.
func TestInitClaudeGitignore(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	user := "# mine\n/orbit-hook.log\nscratch/\n"
	p.write(hook.GitignoreFile, user)
	res := p.mustRun("init", "--claude")
	if !strings.Contains(res.stdout, "  updated  .claude/.gitignore: ignored orbit's derived files (/orbit.db* /orbit-locks/ /orbit-loop.lock /ceo-loop-progress.md.orbit-backup-* /ceo-loop-state.json.malformed-*)\n") {
		t.Errorf("stdout lacks the .gitignore line:\n%s", res.stdout)
	}
	got := p.read(hook.GitignoreFile)
	if !strings.HasPrefix(got, user) || strings.Count(got, "/orbit-hook.log") != 1 || !strings.Contains(got, "\n/orbit.db*\n") {
		t.Errorf(".gitignore =\n%s\nwant the user's lines, then orbit's without a repeat", got)
	}
	p.mustRun("init", "--claude", "--uninstall")
	if got := p.read(hook.GitignoreFile); got != user {
		t.Errorf(".gitignore after --uninstall = %q; want %q", got, user)
	}
}

// TestInitClaudeUninstallMCP: --uninstall takes orbit's MCP server out of
// .mcp.json and leaves the user's servers as written.
func TestInitClaudeUninstallMCP(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	mcp := `{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}}}` + "\n"
	p.write(hook.MCPFile, mcp)
	p.write(hook.SettingsFile, projectSettings)
	p.mustRun("init", "--claude", "--mcp")
	res := p.mustRun("init", "--claude", "--uninstall", "--dry-run")
	if !strings.Contains(res.stdout, "+++ .mcp.json (removed mcpServers.orbit (orbit mcp))\n") || res.stderr != "dry run: nothing written\n" {
		t.Errorf("--uninstall --dry-run: stdout\n%s\nstderr %q; want the diffs", res.stdout, res.stderr)
	}
	p.mustRun("init", "--claude", "--uninstall")
	if got := p.read(hook.MCPFile); got != mcp {
		t.Errorf(".mcp.json after --uninstall = %q; want %q", got, mcp)
	}
	if got := p.read(hook.SettingsFile); got != projectSettings {
		t.Errorf("settings.json after --uninstall =\n%s\nwant\n%s", got, projectSettings)
	}
}

// TestLoopStartWarnsUndriven: orbit loop start says so when no Stop hook
// would drive the loop, and not when orbit's or the loop's own is there.
func TestLoopStartWarnsUndriven(t *testing.T) {
	t.Parallel()
	const warning = "orbit: warning: no Stop hook drives the loop"
	tests := []struct {
		name  string
		setup func(p *testProject)
		warn  bool
	}{
		{"no settings", func(p *testProject) {}, true},
		{"other hooks only", func(p *testProject) {
			p.write(hook.SettingsFile, `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "orbit hook session-start"}]}]}}`)
		}, true},
		{"orbit's in settings.local.json", func(p *testProject) { p.mustRun("init", "--claude", "--local") }, false},
		{"the loop's ceo-loop-stop.sh", func(p *testProject) { p.write(hook.SettingsFile, ceoSettings) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			tt.setup(p)
			res := p.mustRun("loop", "start")
			if got := strings.Contains(res.stderr, warning); got != tt.warn {
				t.Errorf("loop start stderr = %q; want the warning %v", res.stderr, tt.warn)
			}
		})
	}
	p := newProject(t)
	p.mustRun("init", "--claude")
	if res := p.mustRun("loop", "start", "--hook-event", "SubagentStop"); strings.Contains(res.stderr, "warning") {
		t.Errorf("loop start --hook-event SubagentStop with orbit's SubagentStop hook: %q", res.stderr)
	}
}
