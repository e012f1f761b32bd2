package hook_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/hook"
)

// TestSetupCEOHookElsewhere: the ORBIT CEO loop's Stop hook in
// settings.local.json while orbit's is in settings.json is removed (not
// replaced: that would be a second orbit Stop hook), and --uninstall puts
// it back in its file.
func TestSetupCEOHookElsewhere(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(rel, s string) {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(b)
	}
	shared := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "orbit hook stop", "timeout": 30}]}]}}` + "\n"
	local := `{"model": "opus", "hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "bash ~/forge/hooks/scripts/ceo-loop-stop.sh"}]}]}}` + "\n"
	write(hook.SettingsFile, shared)
	write(hook.LocalSettingsFile, local)

	opts := hook.SetupOptions{Root: root, Bin: "orbit"}
	var ceoErr *hook.CEOHookError
	if _, err := hook.PlanInstall(opts, ""); err == nil || !strings.HasPrefix(err.Error(), ".claude/settings.local.json:1: hooks.Stop runs") {
		t.Fatalf("PlanInstall = %v; want the loop's hook refused, named by file:line", err)
	} else if ce, ok := err.(*hook.CEOHookError); !ok {
		t.Fatalf("PlanInstall error %T; want %T", err, ceoErr)
	} else if ce.Command != "bash ~/forge/hooks/scripts/ceo-loop-stop.sh" {
		t.Errorf("CEOHookError.Command = %q", ce.Command)
	}
	opts.ReplaceCEOHook = true
	set, err := hook.PlanInstall(opts, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Apply(root); err != nil {
		t.Fatal(err)
	}
	if got := read(hook.LocalSettingsFile); got != `{"model": "opus"}`+"\n" {
		t.Errorf("settings.local.json = %q; want the loop's hook gone with what held it, the rest kept", got)
	}
	if got := read(hook.SettingsFile); strings.Count(got, "hook stop") != 1 {
		t.Errorf("settings.json = %s; want one Stop hook, orbit's", got)
	}

	set, err = hook.PlanUninstall(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Apply(root); err != nil {
		t.Fatal(err)
	}
	var back, orig any
	json.Unmarshal([]byte(local), &orig)
	if got := read(hook.LocalSettingsFile); json.Unmarshal([]byte(got), &back) != nil || !reflect.DeepEqual(back, orig) {
		t.Errorf("settings.local.json after uninstall = %q; want the loop's hook back", got)
	}
	if got := read(hook.SettingsFile); !strings.HasPrefix(got, "<") {
		t.Errorf("settings.json after uninstall = %q; want it gone (it held orbit's hooks only)", got)
	}
}

// TestDriver: which hook would drive the loop.
func TestDriver(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, ".claude"), 0o755)
	if got := hook.Driver(root, "", "Stop"); got != "" {
		t.Errorf("Driver with no settings = %q; want none", got)
	}
	os.WriteFile(filepath.Join(root, hook.LocalSettingsFile), []byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "bash x/ceo-loop-stop.sh"}]}]}}`), 0o644)
	if got := hook.Driver(root, "", "Stop"); !strings.HasSuffix(got, "settings.local.json: bash x/ceo-loop-stop.sh") {
		t.Errorf("Driver = %q; want the loop's own hook", got)
	}
	if got := hook.Driver(root, "", "SubagentStop"); got != "" {
		t.Errorf("Driver(SubagentStop) = %q; want none", got)
	}
}
