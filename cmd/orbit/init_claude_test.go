package main

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/hook"
)

// orbitHooksOnly is the settings file init --claude writes from nothing
// (the test binary is a go-build temporary, so hooks run "orbit").
const orbitHooksOnly = `{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "orbit hook stop",
            "timeout": 30
          }
        ]
      }
    ],
    "SubagentStop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "orbit hook subagent-stop",
            "timeout": 30
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "orbit hook session-start",
            "timeout": 30
          }
        ]
      }
    ]
  }
}
`

// projectSettings has a bit of everything a real project's settings file
// holds: permissions, env, a PreToolUse hook, and another loop's blocking
// Stop hook.
const projectSettings = `{
  "permissions": {
    "allow": ["Bash(npm run lint)", "Bash(npm run test:*)"],
    "deny": ["Read(./.env)"]
  },
  "env": {"CLAUDE_CODE_ENABLE_TELEMETRY": "0", "RATIO": 1.50},
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Write|Edit",
        "hooks": [{"type": "command", "command": "python3 .claude/hooks/guard.py", "timeout": 10}]
      }
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "bash hooks/ralph-stop.sh"}]}
    ]
  },
  "includeCoAuthoredBy": false
}
`

const raceWarning = `warning: .claude/settings.json: hooks.Stop also runs "bash hooks/ralph-stop.sh": two blocking Stop hooks race (each blocks the stop and re-feeds its own prompt), so remove it if it drives a loop` + "\n"

// ignoreAdded is the summary line of .claude/.gitignore made by init --claude.
const ignoreAdded = "  created  .claude/.gitignore: ignored orbit's derived files (/orbit.db* /orbit-locks/ /orbit-loop.lock /orbit-hook.log /ceo-loop-progress.md.orbit-backup-* /ceo-loop-state.json.malformed-*)\n"

func TestInitClaudeCreatesSettings(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	res := orbit(t, env{}, "--root", root, "init", "--claude")
	if res.code != exitOK {
		t.Fatalf("init --claude: exit %d, stderr %q", res.code, res.stderr)
	}
	// One line per file, no diff (the diff is --dry-run's).
	want := "orbit project in " + root + "\n" +
		"  created  .claude/\n" +
		identityLine(t, root, "created") +
		"  created  .claude/ceo-loop-decisions.jsonl\n" +
		"  created  .claude/orbit.db (schema v" + schemaVersion + ", 0 decisions indexed)\n" +
		"  created  .claude/settings.json: added orbit's Stop, SubagentStop and SessionStart hooks (orbit hook …, timeout 30s)\n" +
		ignoreAdded
	if res.stdout != want {
		t.Errorf("stdout =\n%s\nwant\n%s", res.stdout, want)
	}
	if res.stderr != "" {
		t.Errorf("stderr = %q; want empty", res.stderr)
	}
	p := &testProject{tb: t, root: root}
	if got := p.read(hook.SettingsFile); got != orbitHooksOnly {
		t.Errorf("settings.json =\n%s\nwant\n%s", got, orbitHooksOnly)
	}
}

// TestInitClaudeMerges: every other setting and hook keeps its value, the
// other loop's Stop hook is warned about, and a second run changes nothing.
func TestInitClaudeMerges(t *testing.T) {
	t.Parallel()
	p := projectWith(t, "journal.jsonl")
	p.write(hook.SettingsFile, projectSettings)
	res := p.mustRun("init", "--claude")
	if res.stderr != raceWarning {
		t.Errorf("stderr = %q; want %q", res.stderr, raceWarning)
	}
	if !strings.Contains(res.stdout, "  updated  .claude/settings.json: added orbit's Stop, SubagentStop and SessionStart hooks (orbit hook …, timeout 30s)\n") || strings.Contains(res.stdout, "+++") {
		t.Errorf("stdout lacks the summary line, or shows a diff:\n%s", res.stdout)
	}
	var before, after map[string]any
	if err := json.Unmarshal([]byte(projectSettings), &before); err != nil {
		t.Fatal(err)
	}
	got := p.read(hook.SettingsFile)
	if err := json.Unmarshal([]byte(got), &after); err != nil {
		t.Fatalf("settings.json after init --claude: %v\n%s", err, got)
	}
	for _, k := range []string{"permissions", "env", "includeCoAuthoredBy"} {
		if !reflect.DeepEqual(after[k], before[k]) {
			t.Errorf("%s = %v; want %v", k, after[k], before[k])
		}
	}
	if !strings.Contains(got, `"RATIO": 1.50`) {
		t.Errorf("number 1.50 rewritten:\n%s", got)
	}
	ah, bh := after["hooks"].(map[string]any), before["hooks"].(map[string]any)
	if !reflect.DeepEqual(ah["PreToolUse"], bh["PreToolUse"]) {
		t.Errorf("hooks.PreToolUse = %v; want %v", ah["PreToolUse"], bh["PreToolUse"])
	}
	stop := ah["Stop"].([]any)
	orbitGroup := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "orbit hook stop", "timeout": float64(30)}}}
	if len(stop) != 2 || !reflect.DeepEqual(stop[0], bh["Stop"].([]any)[0]) || !reflect.DeepEqual(stop[1], orbitGroup) {
		t.Errorf("hooks.Stop = %v; want the bash hook kept, then orbit's", stop)
	}
	if keys := objectKeys(t, []byte(got)); !slices.Equal(keys, []string{"permissions", "env", "hooks", "includeCoAuthoredBy"}) {
		t.Errorf("top-level keys = %q; want the file's order", keys)
	}

	// Idempotent.
	listing := dirListing(t, p.root)
	res = p.mustRun("init", "--claude")
	if !strings.HasSuffix(res.stdout, "  exists   .claude/settings.json: orbit's Stop, SubagentStop and SessionStart hooks registered\n  exists   .claude/.gitignore: orbit's derived files ignored\n") {
		t.Errorf("second run stdout = %q; want it to end with the settings file as it is", res.stdout)
	}
	if strings.Contains(res.stdout, "+++") || strings.Contains(res.stdout, "updated") {
		t.Errorf("second run printed a change:\n%s", res.stdout)
	}
	if p.read(hook.SettingsFile) != got {
		t.Errorf("second run rewrote settings.json")
	}
	if after := dirListing(t, p.root); !slices.Equal(after, listing) {
		t.Errorf("second run changed the tree: %q; want %q", after, listing)
	}
}

func TestInitClaudeDryRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		settings string // "" for none (and no .claude/ either)
		stderr   string
	}{
		{name: "no project yet", stderr: "dry run: nothing written\n"},
		{name: "existing settings", settings: projectSettings, stderr: raceWarning + "dry run: nothing written\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &testProject{tb: t, root: t.TempDir()}
			if tt.settings != "" {
				os.Mkdir(p.path(".claude"), 0o755)
				p.write(hook.SettingsFile, tt.settings)
			}
			before := dirListing(t, p.root)
			res := p.run("init", "--claude", "--dry-run")
			if res.code != exitOK || res.stderr != tt.stderr {
				t.Errorf("exit %d, stderr %q; want 0, %q", res.code, res.stderr, tt.stderr)
			}
			if !strings.HasPrefix(res.stdout, "--- .claude/settings.json\n+++ .claude/settings.json (added orbit's Stop, SubagentStop and SessionStart hooks (orbit hook …, timeout 30s))\n") ||
				!strings.Contains(res.stdout, "+++ .claude/.gitignore (ignored orbit's derived files") ||
				!strings.Contains(res.stdout, "\n+            \"command\": \"orbit hook stop\",\n") {
				t.Errorf("stdout is not the diff:\n%s", res.stdout)
			}
			if tt.settings != "" {
				if p.read(hook.SettingsFile) != tt.settings {
					t.Errorf("--dry-run changed settings.json")
				}
			}
			if after := dirListing(t, p.root); !slices.Equal(after, before) {
				t.Errorf("--dry-run wrote files: %q; want %q", after, before)
			}
		})
	}
	res := orbit(t, env{}, "--root", t.TempDir(), "init", "--dry-run")
	if res.code != exitUsage || !strings.HasPrefix(res.stderr, "orbit: --dry-run goes with --claude\n") {
		t.Errorf("init --dry-run: exit %d, stderr %q; want a usage error", res.code, res.stderr)
	}
}

func TestInitClaudeMalformedSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, settings, wantErr string
	}{
		{name: "truncated", settings: "{\n  \"hooks\": {\n", wantErr: ":3:1: "},
		{name: "hooks not an object", settings: `{"hooks": []}`, wantErr: `: "hooks" must be an object`},
		{name: "Stop not an array", settings: `{"hooks": {"Stop": "bash x.sh"}}`, wantErr: `: hooks.Stop must be an array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProject(t)
			p.write(hook.SettingsFile, tt.settings)
			res := p.run("init", "--claude")
			want := "orbit: init --claude: " + p.path(hook.SettingsFile) + tt.wantErr
			if res.code != exitError || !strings.HasPrefix(res.stderr, want) {
				t.Errorf("exit %d, stderr %q; want exit %d and an error starting %q", res.code, res.stderr, exitError, want)
			}
			if got := p.read(hook.SettingsFile); got != tt.settings {
				t.Errorf("settings.json rewritten: %q", got)
			}
		})
	}
}

// TestInitClaudeMalformedSettingsWritesNothing documents a bug: with a
// malformed settings.json, init --claude reports the error only after
// creating the journal and the index: the settings file should be checked
// before anything is written.
func TestInitClaudeMalformedSettingsWritesNothing(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(hook.SettingsFile, "{\n  \"hooks\": {\n")
	before := dirListing(t, p.root)
	res := p.run("init", "--claude")
	if res.code != exitError {
		t.Fatalf("exit %d; want %d", res.code, exitError)
	}
	if after := dirListing(t, p.root); !slices.Equal(after, before) {
		t.Errorf("init --claude with a malformed settings.json wrote %q; want nothing (%q)", after, before)
	}
}

// orbitMCPOnly is the .mcp.json init --claude --mcp writes from nothing.
const orbitMCPOnly = `{
  "mcpServers": {
    "orbit": {
      "command": "orbit",
      "args": [
        "mcp"
      ]
    }
  }
}
`

// TestInitClaudeMCP: --mcp registers orbit's server in .mcp.json beside the
// servers already there, prints the change, and is idempotent.
func TestInitClaudeMCP(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(hook.MCPFile, `{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}}}`+"\n")
	res := p.mustRun("init", "--claude", "--mcp")
	for _, want := range []string{
		"  created  .claude/settings.json: added orbit's Stop, SubagentStop and SessionStart hooks (orbit hook …, timeout 30s)\n",
		"  updated  .mcp.json: added mcpServers.orbit: orbit mcp\n",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("init --claude --mcp stdout lacks %q:\n%s", want, res.stdout)
		}
	}
	var cfg struct {
		Servers map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	got := p.read(hook.MCPFile)
	if err := json.Unmarshal([]byte(got), &cfg); err != nil {
		t.Fatal(err)
	}
	if fs, o := cfg.Servers["fs"], cfg.Servers["orbit"]; fs.Command != "npx" || len(fs.Args) != 3 || o.Command != "orbit" || !slices.Equal(o.Args, []string{"mcp"}) {
		t.Errorf(".mcp.json = %s; want fs kept and orbit added", got)
	}
	res = p.mustRun("init", "--claude", "--mcp")
	if !strings.HasSuffix(res.stdout, "  exists   .mcp.json: orbit's MCP server registered\n") || strings.Contains(res.stdout, "updated") {
		t.Errorf("second run stdout = %q; want nothing changed", res.stdout)
	}
	if p.read(hook.MCPFile) != got {
		t.Errorf("second run rewrote .mcp.json")
	}

	// From nothing, with --dry-run first.
	q := &testProject{tb: t, root: t.TempDir()}
	res = q.run("init", "--claude", "--mcp", "--dry-run")
	if res.code != exitOK || !strings.Contains(res.stdout, "+++ .mcp.json (added mcpServers.orbit: orbit mcp)\n") || res.stderr != "dry run: nothing written\n" {
		t.Errorf("init --claude --mcp --dry-run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if q.exists(hook.MCPFile) || q.exists(".claude") {
		t.Errorf("--dry-run wrote files")
	}
	q.mustRun("init", "--claude", "--mcp")
	if got := q.read(hook.MCPFile); got != orbitMCPOnly {
		t.Errorf(".mcp.json from nothing =\n%s\nwant\n%s", got, orbitMCPOnly)
	}

	// The name taken by another server: a warning, the file left alone.
	r := newProject(t)
	taken := `{"mcpServers":{"orbit":{"command":"node","args":["srv.js"]}}}`
	r.write(hook.MCPFile, taken)
	res = r.mustRun("init", "--claude", "--mcp")
	if !strings.Contains(res.stderr, `warning: mcpServers.orbit already runs "node srv.js" (not "orbit mcp"); left as it is, and orbit's server is not registered`) ||
		strings.Contains(res.stdout, ".mcp.json") || r.read(hook.MCPFile) != taken {
		t.Errorf("init with mcpServers.orbit taken: stdout %q stderr %q; want a warning and the file left alone", res.stdout, res.stderr)
	}
}

// TestInitClaudeMCPRefused: --mcp needs --claude, and a .mcp.json orbit
// cannot merge into stops init before anything is written.
func TestInitClaudeMCPRefused(t *testing.T) {
	t.Parallel()
	res := orbit(t, env{}, "--root", t.TempDir(), "init", "--mcp")
	if res.code != exitUsage || !strings.HasPrefix(res.stderr, "orbit: --mcp goes with --claude\n") {
		t.Errorf("init --mcp: exit %d, stderr %q; want a usage error", res.code, res.stderr)
	}
	p := &testProject{tb: t, root: t.TempDir()}
	p.write(hook.MCPFile, `{"mcpServers": [1]}`)
	before := dirListing(t, p.root)
	res = p.run("init", "--claude", "--mcp")
	want := "orbit: init --claude: " + p.path(hook.MCPFile) + `: "mcpServers" must be an object, not [1]` + "\n"
	if res.code != exitError || res.stderr != want {
		t.Errorf("exit %d, stderr %q; want %d, %q", res.code, res.stderr, exitError, want)
	}
	if after := dirListing(t, p.root); !slices.Equal(after, before) {
		t.Errorf("init wrote %q; want nothing (%q)", after, before)
	}
}
