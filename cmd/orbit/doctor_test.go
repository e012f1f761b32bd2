package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/hook"
)

// fakeOrbit is an executable file named orbit, for hooks to point at.
func fakeOrbit(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "bin", "orbit")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		tb.Fatal(err)
	}
	return bin
}

// registerHooks writes settings.json with orbit's hooks running bin.
func (p *testProject) registerHooks(bin string) {
	p.tb.Helper()
	out, _, _, err := hook.Install(p.path(hook.SettingsFile), nil, bin)
	if err != nil {
		p.tb.Fatal(err)
	}
	p.write(hook.SettingsFile, string(out))
}

// healthyProject is a loop project doctor finds nothing wrong with: the
// index in step, the loop active and held by a live session, orbit's hooks
// registered and pointing at a binary that exists.
func healthyProject(tb testing.TB) (*testProject, string) {
	tb.Helper()
	p := loopProject(tb)
	p.mustRun("sync")
	p.write(lockRel, `{"owner":"session:s1","pid":4242,"host":"box","acquired_at":"2026-03-09T11:50:00Z","heartbeat_at":"2026-03-09T11:59:30Z"}`)
	bin := fakeOrbit(tb)
	p.registerHooks(bin)
	return p, bin
}

type doctorCheck struct {
	Level   string `json:"level"`
	Subject string `json:"subject"`
	Finding string `json:"finding"`
	Fix     string `json:"fix"`
}

func (p *testProject) doctorJSON() ([]doctorCheck, result) {
	p.tb.Helper()
	res := p.run("doctor", "--json")
	var cs []doctorCheck
	if err := json.Unmarshal([]byte(res.stdout), &cs); err != nil {
		p.tb.Fatalf("doctor --json: %v\n%s", err, res.stdout)
	}
	return cs, res
}

func TestDoctorHealthy(t *testing.T) {
	t.Parallel()
	p, bin := healthyProject(t)
	res := p.run("doctor")
	if res.code != exitOK {
		t.Fatalf("doctor: exit %d; want 0\n%s%s", res.code, res.stdout, res.stderr)
	}
	want := []string{
		"ok\t.claude/ceo-loop-state.json\tloop active, iteration 5 of 20\t",
		"ok\t.claude/orbit-loop.lock\theld by session:s1, heartbeat 30s ago\t",
		"ok\t.claude/ceo-decisions-pending.json\t4 pending requests\t",
		"ok\t.claude/settings.json\tStop hook: " + bin + " hook stop\t",
		"ok\t.claude/settings.json\tSubagentStop hook: " + bin + " hook subagent-stop\t",
		"ok\t.claude/settings.json\tSessionStart hook: " + bin + " hook session-start\t",
		"ok\t.mcp.json\torbit's MCP server is not registered: agents record with the CLI, or a JSON line without Bash\t",
	}
	got := lines(res.stdout)
	if len(got) != len(want)+1 || !strings.HasPrefix(got[0], "ok\t.claude/ceo-loop-decisions.jsonl\t") {
		t.Fatalf("doctor =\n%s\nwant the journal line, then %q", res.stdout, want)
	}
	for i, w := range want {
		if got[i+1] != w {
			t.Errorf("doctor line %d = %q; want %q", i+2, got[i+1], w)
		}
	}
	if res.stderr != "" {
		t.Errorf("stderr = %q; want empty", res.stderr)
	}
}

func TestDoctorFindings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		setup    func(p *testProject)
		wantCode int
		want     []doctorCheck // Fix "" means any non-empty fix (none for an ok)
	}{
		{
			name:     "state past its cap",
			setup:    func(p *testProject) { p.write(stateRel, loopState(21, 20)) },
			wantCode: exitFindings,
			want:     []doctorCheck{{Level: "problem", Subject: stateRel, Finding: "iteration 21 is past its cap of 20", Fix: "`orbit loop stop`, or `orbit loop start --force` with a higher --max-iterations"}},
		},
		// BUG: this warning comes without a fix, though Doctor promises
		// one with each finding.
		{
			name: "time limit passed",
			setup: func(p *testProject) {
				p.write(stateRel, strings.Replace(loopState(5, 20), `"time_limit_minutes": 30`, `"time_limit_minutes": 5`, 1))
			},
			wantCode: exitOK,
			want:     []doctorCheck{{Level: "warning", Subject: stateRel, Finding: "the time limit passed 5m0s ago", Fix: "the next Stop hook tears the loop down; `orbit loop stop` does it now"}},
		},
		{
			name: "stale lock",
			setup: func(p *testProject) {
				p.write(lockRel, `{"owner":"session:s1","pid":4242,"host":"box","acquired_at":"2026-03-09T11:50:00Z","heartbeat_at":"2026-03-09T11:50:00Z"}`)
			},
			wantCode: exitOK,
			want: []doctorCheck{{Level: "warning", Subject: lockRel, Finding: "held by session:s1, whose heartbeat is 10m0s old (stale)",
				Fix: "a Stop hook from another session takes it over; `orbit loop stop` if nobody runs the loop"}},
		},
		{
			name:     "active loop nobody holds",
			setup:    func(p *testProject) { os.Remove(p.path(lockRel)) },
			wantCode: exitOK,
			want:     []doctorCheck{{Level: "warning", Subject: lockRel, Finding: "no session holds the active loop yet"}},
		},
		{
			name:     "unreadable lock",
			setup:    func(p *testProject) { p.write(lockRel, "{") },
			wantCode: exitFindings,
			want:     []doctorCheck{{Level: "problem", Subject: lockRel}},
		},
		{
			name: "malformed queue",
			setup: func(p *testProject) {
				p.write(pendingRel, `[{"title":"x","category":"feature","impact":"huge","reversible":true}]`)
			},
			wantCode: exitFindings,
			want: []doctorCheck{{Level: "problem", Subject: pendingRel, Finding: pendingRel + `: item 1: impact: "huge" is not allowed (allowed: low, medium, high)`,
				Fix: "fix the item: it stays in the queue untouched, and every other item is decided"}},
		},
		{
			// Issue 15, point 6: the upstream initial state's placeholder.
			name: "started_at placeholder",
			setup: func(p *testProject) {
				p.write(stateRel, strings.Replace(loopState(5, 20), `"2026-03-09T11:50:00Z"`, `"$STARTED"`, 1))
			},
			wantCode: exitFindings,
			want: []doctorCheck{{Level: "problem", Subject: stateRel, Finding: `started_at "$STARTED" is not a time (no first sight recorded yet: the next Stop or decision records one)`,
				Fix: "set started_at to when the loop began (RFC 3339), or `orbit loop start --force`"}},
		},
		{
			// Issue 15, point 1: counters from before orbit, then adopted.
			name: "counters from before orbit",
			setup: func(p *testProject) {
				p.write(stateRel, strings.Replace(loopState(5, 20), `"correct_decisions": 2`, `"correct_decisions": 47`, 1))
			},
			wantCode: exitOK,
			want:     []doctorCheck{{Level: "warning", Subject: stateRel, Finding: "counters: 47 correct, 1 incorrect, of which no outcome in the journal explains 45, 0: not yet adopted"}},
		},
		{
			name:     "queue that is not an array",
			setup:    func(p *testProject) { p.write(pendingRel, `{"title":"x"}`) },
			wantCode: exitFindings,
			want: []doctorCheck{{Level: "problem", Subject: pendingRel,
				Fix: "fix the file: nothing in it can be decided until it is a JSON array of requests"}},
		},
		{
			name:     "malformed state",
			setup:    func(p *testProject) { p.write(stateRel, "{\"active\": tru}\n") },
			wantCode: exitFindings,
			want:     []doctorCheck{{Level: "problem", Subject: stateRel, Fix: "fix the JSON, or `orbit loop stop` then `orbit loop start` to rewrite it"}},
		},
		{
			name:     "hooks pointing at a binary that does not exist",
			setup:    func(p *testProject) { p.registerHooks("/nonexistent/bin/orbit") },
			wantCode: exitFindings,
			want: []doctorCheck{
				{Level: "problem", Subject: hook.SettingsFile, Finding: `the Stop hook runs "/nonexistent/bin/orbit", which does not exist`, Fix: "install orbit on PATH, or `orbit init --claude` from the orbit you use"},
				{Level: "problem", Subject: hook.SettingsFile, Finding: `the SubagentStop hook runs "/nonexistent/bin/orbit", which does not exist`, Fix: "install orbit on PATH, or `orbit init --claude` from the orbit you use"},
			},
		},
		{
			name:     "no settings file",
			setup:    func(p *testProject) { os.Remove(p.path(hook.SettingsFile)) },
			wantCode: exitOK,
			want:     []doctorCheck{{Level: "warning", Subject: hook.SettingsFile, Finding: "absent: no hook drives the ORBIT loop", Fix: "`orbit init --claude` registers orbit's hooks"}},
		},
		{
			name:     "hooks not registered",
			setup:    func(p *testProject) { p.write(hook.SettingsFile, `{"permissions":{}}`) },
			wantCode: exitOK,
			want: []doctorCheck{
				{Level: "warning", Subject: hook.SettingsFile, Finding: "no Stop hook runs orbit", Fix: "`orbit init --claude` registers it"},
				{Level: "warning", Subject: hook.SettingsFile, Finding: "no SubagentStop hook runs orbit", Fix: "`orbit init --claude` registers it"},
			},
		},
		{
			name:     "malformed settings",
			setup:    func(p *testProject) { p.write(hook.SettingsFile, `{"hooks":`) },
			wantCode: exitFindings,
			want: []doctorCheck{{Level: "problem", Subject: hook.SettingsFile, Finding: "$ROOT/" + hook.SettingsFile + ":1:10: invalid settings file: EOF",
				Fix: "fix the JSON; `orbit init --claude` keeps the rest of the file"}},
		},
		{
			name: "another blocking Stop hook",
			setup: func(p *testProject) {
				s := strings.Replace(p.read(hook.SettingsFile), `"Stop": [`, `"Stop": [{"hooks": [{"type": "command", "command": "bash ralph.sh"}]},`, 1)
				p.write(hook.SettingsFile, s)
			},
			wantCode: exitOK,
			want: []doctorCheck{{Level: "warning", Subject: hook.SettingsFile,
				Finding: `hooks.Stop also runs "bash ralph.sh": two blocking Stop hooks race (each blocks the stop and re-feeds its own prompt), so remove it if it drives a loop`,
				Fix:     "remove the other blocking Stop hook"}},
		},
		{
			// Issue 15, point 12: the ORBIT CEO loop's own Stop hook beside
			// orbit's is a problem, with the command that replaces it.
			name: "the ORBIT CEO loop's Stop hook still registered",
			setup: func(p *testProject) {
				p.write(hook.LocalSettingsFile, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "bash hooks/scripts/ceo-loop-stop.sh"}]}]}}`)
			},
			wantCode: exitFindings,
			want: []doctorCheck{{Level: "problem", Subject: hook.LocalSettingsFile + ":1",
				Finding: `hooks.Stop still runs "bash hooks/scripts/ceo-loop-stop.sh", the ORBIT CEO loop's own Stop hook: with orbit's, two blocking Stop hooks race and both advance the iteration`,
				Fix:     "`orbit init --claude --replace-ceo-hook` replaces it by orbit's (`--uninstall` puts it back)"}},
		},
		{
			name: "the hook's last error",
			setup: func(p *testProject) {
				p.write(hookLogRel, "2026-03-09T11:00:00Z Stop session=s1 stop_hook_active=false error=\"boom\"\n")
			},
			wantCode: exitOK,
			want:     []doctorCheck{{Level: "warning", Subject: hookLogRel, Finding: `last error: 2026-03-09T11:00:00Z Stop session=s1 stop_hook_active=false error="boom"`}},
		},
		{
			name: "MCP server registered",
			setup: func(p *testProject) {
				p.write(hook.MCPFile, `{"mcpServers":{"gov":{"command":"`+fakeOrbit(p.tb)+`","args":["mcp"]}}}`)
			},
			wantCode: exitOK,
			want:     []doctorCheck{{Level: "ok", Subject: hook.MCPFile, Finding: `MCP server "gov": ` + "$BIN mcp"}},
		},
		{
			name: "MCP server pointing at a binary that does not exist",
			setup: func(p *testProject) {
				p.write(hook.MCPFile, `{"mcpServers":{"orbit":{"command":"/nonexistent/orbit","args":["mcp"]}}}`)
			},
			wantCode: exitFindings,
			want: []doctorCheck{{Level: "problem", Subject: hook.MCPFile, Finding: `MCP server "orbit" runs "/nonexistent/orbit", which does not exist`,
				Fix: "install orbit on PATH, or `orbit init --claude --mcp` from the orbit you use"}},
		},
		{
			name:     "malformed .mcp.json",
			setup:    func(p *testProject) { p.write(hook.MCPFile, `{"mcpServers":`) },
			wantCode: exitFindings,
			want: []doctorCheck{{Level: "problem", Subject: hook.MCPFile, Finding: "not valid JSON: unexpected end of JSON input",
				Fix: "fix the JSON; `orbit init --claude --mcp` keeps the rest of the file"}},
		},
		{
			name: "the name orbit taken in .mcp.json",
			setup: func(p *testProject) {
				p.write(hook.MCPFile, `{"mcpServers":{"orbit":{"command":"node","args":["srv.js"]}}}`)
			},
			wantCode: exitOK,
			want: []doctorCheck{{Level: "warning", Subject: hook.MCPFile,
				Finding: `mcpServers.orbit already runs "node srv.js" (not "orbit mcp"); left as it is, and orbit's server is not registered`}},
		},
		{
			name:     "journal missing",
			setup:    func(p *testProject) { os.Remove(p.path(journalRel)) },
			wantCode: exitFindings,
			want:     []doctorCheck{{Level: "problem", Subject: journalRel, Finding: "missing", Fix: "`orbit init` creates it"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pr, _ := healthyProject(t)
			tt.setup(pr)
			cs, res := pr.doctorJSON()
			if res.code != tt.wantCode {
				t.Errorf("doctor --json: exit %d; want %d\n%s", res.code, tt.wantCode, res.stdout)
			}
			for _, w := range tt.want {
				w.Finding = strings.ReplaceAll(w.Finding, "$ROOT", pr.root)
				if strings.Contains(w.Finding, "$BIN") {
					// The binary the setup registered: whatever the finding names.
					for _, c := range cs {
						if c.Subject == w.Subject && strings.HasSuffix(c.Finding, "/bin/orbit mcp") {
							w.Finding = c.Finding
						}
					}
				}
				found := false
				for _, c := range cs {
					fixed := w.Fix == "" && c.Fix != "" || c.Fix == w.Fix && w.Fix != ""
					if w.Level == "ok" {
						fixed = c.Fix == ""
					}
					if c.Level == w.Level && c.Subject == w.Subject && (w.Finding == "" || c.Finding == w.Finding) && fixed {
						found = true
					}
				}
				if !found {
					t.Errorf("doctor found %+v; want a check %+v (with a fix)", cs, w)
				}
			}
			for _, c := range cs {
				if c.Level != "ok" && c.Fix == "" {
					t.Errorf("%s finding without a fix: %+v", c.Level, c)
				}
			}
			// The table says the same, with the problem count on stderr.
			res = pr.run("doctor")
			if res.code != tt.wantCode {
				t.Errorf("doctor: exit %d; want %d", res.code, tt.wantCode)
			}
			if tt.wantCode == exitFindings && !strings.HasPrefix(res.stderr, "orbit: doctor: ") {
				t.Errorf("doctor stderr = %q; want the problem count", res.stderr)
			}
		})
	}
}

// TestDoctorOrbitWithAnotherName documents a bug: init --claude registers
// this binary's absolute path when it is not the orbit on PATH (a release
// download named orbit-linux-amd64, a build with -o), but IsOrbitHook only
// knows commands whose first word ends in "orbit": doctor then says no hook
// runs orbit, and calls orbit's own Stop hook another blocking hook that
// races.
func TestDoctorOrbitWithAnotherName(t *testing.T) {
	t.Parallel()
	pr, _ := healthyProject(t)
	bin := filepath.Join(filepath.Dir(fakeOrbit(t)), "orbit-linux-amd64")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	pr.registerHooks(bin)
	cs, res := pr.doctorJSON()
	if res.code != exitOK {
		t.Errorf("doctor: exit %d; want 0", res.code)
	}
	for _, c := range cs {
		if c.Subject == hook.SettingsFile && c.Level != "ok" {
			t.Errorf("doctor on hooks that init --claude wrote for %s: %+v; want them recognised", bin, c)
		}
	}
}

// TestDoctorPluginStopHook: a Stop hook an enabled plugin registers
// (Cavekit's) races orbit's, and doctor says so (issue 18).
func TestDoctorPluginStopHook(t *testing.T) {
	t.Parallel()
	p, _ := healthyProject(t)
	home := t.TempDir()
	dir := filepath.Join(home, ".claude", "plugins", "cache", "cavekit", "cavekit", "3.1.0")
	for path, content := range map[string]string{
		filepath.Join(home, ".claude", "plugins", "installed_plugins.json"): `{"version": 2, "plugins": {"cavekit@cavekit": [{"installPath": "` + dir + `"}]}}`,
		filepath.Join(dir, "hooks", "hooks.json"):                           `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "stop-hook.sh"}]}]}}`,
		filepath.Join(home, ".claude", "settings.json"):                     `{"enabledPlugins": {"cavekit@cavekit": true}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := orbit(t, env{vars: map[string]string{"HOME": home}}, "--root", p.root, "doctor")
	if !strings.Contains(res.stdout, "warning\t.claude/settings.json\tplugin cavekit@cavekit registers a Stop hook \"stop-hook.sh\": two blocking Stop hooks race") {
		t.Errorf("doctor does not see the plugin's Stop hook:\n%s%s", res.stdout, res.stderr)
	}
}
