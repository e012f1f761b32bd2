package hook_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/hook"
)

const settingsPath = "/p/.claude/settings.json"

// orbitOnly is the settings file Install writes from nothing.
const orbitOnly = `{
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

// busySettings has a bit of everything a real project's settings file
// holds, a PreToolUse hook, and the bash Stop hook orbit replaces.
const busySettings = `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(npm run lint)", "Read(~/.zshrc)"],
    "deny": ["Read(./.env)", "Read(./secrets/**)"]
  },
  "env": {"FOO": "bar", "N": "1e3"},
  "model": "claude-sonnet-4-5",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 .claude/hooks/check.py", "timeout": 5}]}
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "bash hooks/scripts/ceo-loop-stop.sh"}]}
    ]
  },
  "cleanupPeriodDays": 20
}
`

func TestInstall(t *testing.T) {
	t.Parallel()
	added := []string{"added hooks.Stop: orbit hook stop (timeout 30s)", "added hooks.SubagentStop: orbit hook subagent-stop (timeout 30s)", "added hooks.SessionStart: orbit hook session-start (timeout 30s)"}
	race := `hooks.Stop also runs "bash hooks/scripts/ceo-loop-stop.sh": two blocking Stop hooks race (each blocks the stop and re-feeds its own prompt), so remove it if it drives a loop (the ceo-loop-stop.sh orbit replaces does)`
	tests := []struct {
		name         string
		old          string
		want         string // "" when only the checks below apply
		same         bool   // the bytes come back unchanged
		wantChanges  []string
		wantWarnings []string
	}{
		{name: "no settings file", old: "", want: orbitOnly, wantChanges: added},
		// The file's bytes are kept: no final newline added, a one-line
		// file stays on one line.
		{name: "empty object", old: "{}", want: strings.TrimSuffix(orbitOnly, "\n"), wantChanges: added},
		{name: "hooks null", old: `{"hooks": null}`, want: `{"hooks": {"Stop": [{"hooks":[{"type":"command","command":"orbit hook stop","timeout":30}]}], "SubagentStop": [{"hooks":[{"type":"command","command":"orbit hook subagent-stop","timeout":30}]}], "SessionStart": [{"hooks":[{"type":"command","command":"orbit hook session-start","timeout":30}]}]}}`, wantChanges: added},
		{name: "already registered", old: orbitOnly, same: true},
		{
			name:        "only Stop registered",
			old:         `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"orbit hook stop","timeout":30}]}]}}`,
			want:        `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"orbit hook stop","timeout":30}]}],"SubagentStop":[{"hooks":[{"type":"command","command":"orbit hook subagent-stop","timeout":30}]}],"SessionStart":[{"hooks":[{"type":"command","command":"orbit hook session-start","timeout":30}]}]}}`,
			wantChanges: added[1:],
		},
		{
			name:         "registered from another path",
			old:          `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/local/bin/orbit hook stop"}]}],"SubagentStop":[{"hooks":[{"type":"command","command":"orbit hook subagent-stop"}]}],"SessionStart":[{"hooks":[{"type":"command","command":"orbit hook session-start"}]}]}}`,
			same:         true,
			wantWarnings: []string{`hooks.Stop already runs "/usr/local/bin/orbit hook stop" (not "orbit hook stop"); left as it is`},
		},
		{name: "busy settings with the bash Stop hook", old: busySettings, wantChanges: added, wantWarnings: []string{race}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changes, warnings, err := hook.Install(settingsPath, []byte(tt.old), "orbit")
			if err != nil {
				t.Fatalf("Install(%q) error = %v", tt.old, err)
			}
			if !slices.Equal(changes, tt.wantChanges) {
				t.Errorf("Install changes = %q; want %q", changes, tt.wantChanges)
			}
			if !slices.Equal(warnings, tt.wantWarnings) {
				t.Errorf("Install warnings = %q; want %q", warnings, tt.wantWarnings)
			}
			if tt.same && string(out) != tt.old {
				t.Errorf("Install rewrote settings that needed nothing:\n%s\nwant them as they were:\n%s", out, tt.old)
			}
			if tt.want != "" && string(out) != tt.want {
				t.Errorf("Install = \n%s\nwant\n%s", out, tt.want)
			}
			if !json.Valid(out) {
				t.Fatalf("Install wrote invalid JSON:\n%s", out)
			}
			// Installing again changes nothing.
			again, changes, _, err := hook.Install(settingsPath, out, "orbit")
			if err != nil || len(changes) > 0 || string(again) != string(out) {
				t.Errorf("second Install = %d bytes, changes %q, %v; want the same bytes and no change", len(again), changes, err)
			}
		})
	}
}

// TestInstallKeepsEverythingElse: every setting other than hooks.Stop and
// hooks.SubagentStop comes back with the same value, and the Stop hooks
// already there stay first.
func TestInstallKeepsEverythingElse(t *testing.T) {
	t.Parallel()
	out, _, _, err := hook.Install(settingsPath, []byte(busySettings), "orbit")
	if err != nil {
		t.Fatal(err)
	}
	var before, after map[string]any
	if err := json.Unmarshal([]byte(busySettings), &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &after); err != nil {
		t.Fatal(err)
	}
	for k, v := range before {
		if k == "hooks" {
			continue
		}
		if !reflect.DeepEqual(after[k], v) {
			t.Errorf("setting %q = %v after Install; want %v", k, after[k], v)
		}
	}
	if len(after) != len(before) {
		t.Errorf("Install left %d top-level settings; want %d", len(after), len(before))
	}
	bh, ah := before["hooks"].(map[string]any), after["hooks"].(map[string]any)
	if !reflect.DeepEqual(ah["PreToolUse"], bh["PreToolUse"]) {
		t.Errorf("hooks.PreToolUse = %v; want %v", ah["PreToolUse"], bh["PreToolUse"])
	}
	stop := ah["Stop"].([]any)
	if len(stop) != 2 || !reflect.DeepEqual(stop[0], bh["Stop"].([]any)[0]) {
		t.Errorf("hooks.Stop = %v; want the bash hook first, then orbit's", stop)
	}
	// Key order is the file's: orbit's keys only add.
	var keys []string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	dec.Token()
	for dec.More() {
		tok, _ := dec.Token()
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	if want := []string{"$schema", "permissions", "env", "model", "hooks", "cleanupPeriodDays"}; !slices.Equal(keys, want) {
		t.Errorf("top-level keys = %q; want %q", keys, want)
	}
}

func TestInstallErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		old  string
		want []string // substrings of the error
	}{
		{name: "trailing comma", old: "{\n  \"model\": \"x\",\n}\n", want: []string{settingsPath + ":3:1:"}},
		// BUG: loop.ParseState reports one column too far when the
		// offending byte is the last of the file (no final newline).
		{name: "trailing comma, no final newline", old: "{\n  \"model\": \"x\",\n}", want: []string{settingsPath + ":3:1:"}},
		{name: "an array", old: `[]`, want: []string{settingsPath}},
		{name: "hooks is a number", old: `{"hooks": 3}`, want: []string{settingsPath, `"hooks" must be an object`}},
		{name: "Stop is an object", old: `{"hooks": {"Stop": {}}}`, want: []string{settingsPath, "hooks.Stop must be an array"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changes, _, err := hook.Install(settingsPath, []byte(tt.old), "orbit")
			if err == nil {
				t.Fatalf("Install(%q) = %s, %q; want an error", tt.old, out, changes)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Install(%q) error = %q; want it to contain %q", tt.old, err, w)
				}
			}
		})
	}
}

// TestInstallErrorWording documents a bug: settings.json errors come from
// loop.ParseState and call Claude Code's settings file an "invalid state
// file" (the ORBIT loop's state file is another file).
func TestInstallErrorWording(t *testing.T) {
	t.Parallel()
	for _, old := range []string{"{\n  \"model\": \"x\",\n}\n", `[]`, `{"hooks": 3}`} {
		_, _, _, err := hook.Install(settingsPath, []byte(old), "orbit")
		if err == nil || strings.Contains(err.Error(), "state file") {
			t.Errorf("Install(%q) error = %v; want an error about the settings file, not a state file", old, err)
		}
	}
}

func TestIsOrbitHook(t *testing.T) {
	t.Parallel()
	tests := []struct {
		command, sub string
		want         bool
	}{
		{"orbit hook stop", "stop", true},
		{"/usr/local/bin/orbit hook stop", "stop", true},
		{"orbit --root /p hook stop", "stop", true},
		{"orbit hook subagent-stop", "subagent-stop", true},
		{"orbit hook stop", "subagent-stop", false},
		{"bash hooks/scripts/ceo-loop-stop.sh", "stop", false},
		{"orbit", "stop", false},
		{"", "stop", false},
		{"orbital hook stop", "stop", false},
	}
	for _, tt := range tests {
		if got := hook.IsOrbitHook(tt.command, tt.sub); got != tt.want {
			t.Errorf("IsOrbitHook(%q, %q) = %t; want %t", tt.command, tt.sub, got, tt.want)
		}
	}
}

func TestRegisteredCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, data, event, sub, want string
	}{
		{"registered", orbitOnly, "Stop", "stop", "orbit hook stop"},
		{"subagent", orbitOnly, "SubagentStop", "subagent-stop", "orbit hook subagent-stop"},
		{"bash hook only", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"bash ceo-loop-stop.sh"}]}]}}`, "Stop", "stop", ""},
		{"no hooks", `{}`, "Stop", "stop", ""},
	}
	for _, tt := range tests {
		got, err := hook.RegisteredCommand([]byte(tt.data), tt.event, tt.sub)
		if err != nil || got != tt.want {
			t.Errorf("%s: RegisteredCommand(%s) = %q, %v; want %q", tt.name, tt.event, got, err, tt.want)
		}
	}
	if _, err := hook.RegisteredCommand([]byte("{"), "Stop", "stop"); err == nil {
		t.Errorf("RegisteredCommand(%q) succeeded; want an error", "{")
	}
}
