package hook_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/orbit-loop/orbit/hook"
)

func writeFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// TestPluginStopHooks: a Stop hook a plugin registers (Cavekit's loop is
// one) races orbit's like one in the settings (issue 18); it is found
// through enabledPlugins and installed_plugins.json.
func TestPluginStopHooks(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	cavekit := filepath.Join(home, ".claude", "plugins", "cache", "cavekit", "cavekit", "3.1.0")
	other := filepath.Join(home, ".claude", "plugins", "cache", "tools", "fmt", "1.0.0")
	inline := filepath.Join(home, ".claude", "plugins", "cache", "x", "inline", "1.0.0")
	writeFile(t, filepath.Join(home, ".claude", "plugins", "installed_plugins.json"), `{"version": 2, "plugins": {
  "cavekit@cavekit": [{"scope": "user", "installPath": "`+cavekit+`", "version": "3.1.0"}],
  "fmt@tools": [{"scope": "project", "installPath": "`+other+`"}],
  "inline@x": {"installPath": "`+inline+`"}}}`)
	writeFile(t, filepath.Join(cavekit, "hooks", "hooks.json"), `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/stop-hook.sh"}]}],
  "PostToolUse": [{"hooks": [{"type": "command", "command": "track.sh"}]}]}}`)
	writeFile(t, filepath.Join(other, "hooks", "hooks.json"), `{"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "fmt.sh"}]}]}}`)
	writeFile(t, filepath.Join(inline, ".claude-plugin", "plugin.json"), `{"name": "inline", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "loop.sh"}]}]}}`)
	// Enabled for the user; the project turns inline off.
	writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"enabledPlugins": {"cavekit@cavekit": true, "fmt@tools": true, "inline@x": true}}`)
	writeFile(t, filepath.Join(root, ".claude", "settings.json"), `{"enabledPlugins": {"inline@x": false}}`)
	got := hook.PluginStopHooks(root, home)
	want := []string{`plugin cavekit@cavekit registers a Stop hook "${CLAUDE_PLUGIN_ROOT}/scripts/stop-hook.sh": two blocking Stop hooks race (each blocks the stop and re-feeds its own prompt), so disable the plugin's loop or orbit's hooks in this project`}
	if !slices.Equal(got, want) {
		t.Errorf("PluginStopHooks = %q; want %q", got, want)
	}
	// The local settings turn it back on.
	writeFile(t, filepath.Join(root, ".claude", "settings.local.json"), `{"enabledPlugins": {"inline@x": true}}`)
	if got := hook.PluginStopHooks(root, home); len(got) != 2 {
		t.Errorf("with inline@x enabled locally: %q; want two", got)
	}
	if got := hook.PluginStopHooks(root, ""); got != nil {
		t.Errorf("without a home: %q; want nothing looked at", got)
	}
}
