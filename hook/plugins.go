package hook

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
)

// Claude Code plugins register hooks of their own: a plugin enabled in the
// settings (enabledPlugins, "name@marketplace": true) and installed under
// ~/.claude/plugins (installed_plugins.json gives its installPath) runs the
// hooks of its hooks/hooks.json, or of the file its .claude-plugin/plugin.json
// names. Cavekit's loop is such a plugin: its Stop hook blocks like orbit's,
// and two blocking Stop hooks race (each blocks the stop and re-feeds its own prompt).

// PluginStopHooks returns a warning for each Stop hook of a plugin enabled
// for the project at root: in its .claude/settings.json and
// settings.local.json, or in home's .claude/settings.json (home "" skips the
// user's settings and installed plugins, and so finds none).
func PluginStopHooks(root, home string) []string {
	var warnings []string
	for _, p := range pluginHooks(root, home) {
		for _, cmd := range p.commands["Stop"] {
			if IsOrbitHook(cmd, "stop") {
				continue
			}
			warnings = append(warnings, fmt.Sprintf("plugin %s registers a Stop hook %q: two blocking Stop hooks race (each blocks the stop and re-feeds its own prompt), so disable the plugin's loop or orbit's hooks in this project", p.name, cmd))
		}
	}
	return warnings
}

// plugin is an enabled, installed plugin and its hooks' commands by event.
type plugin struct {
	name     string
	commands map[string][]string
}

// pluginHooks lists the plugins enabled for the project (in name order)
// that are installed, with their hook commands.
func pluginHooks(root, home string) []plugin {
	if home == "" {
		return nil
	}
	enabled := map[string]bool{}
	// User settings first: the project's, then its local ones, override.
	for _, f := range []struct{ root, path string }{{"", filepath.Join(home, ".claude", "settings.json")},
		{root, filepath.Join(root, SettingsFile)}, {root, filepath.Join(root, LocalSettingsFile)}} {
		data, err := ReadSettings(f.root, f.path)
		if err != nil || len(data) == 0 {
			continue
		}
		var s struct {
			EnabledPlugins map[string]json.RawMessage `json:"enabledPlugins"`
		}
		if json.Unmarshal(data, &s) != nil {
			continue
		}
		for k, v := range s.EnabledPlugins {
			var on bool
			enabled[k] = json.Unmarshal(v, &on) == nil && on
		}
	}
	installed := installedPlugins(home)
	var keys []string
	for k, on := range enabled {
		if on {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []plugin
	for _, k := range keys {
		if dir, ok := installed[k]; ok {
			out = append(out, plugin{name: k, commands: pluginCommands(dir)})
		}
	}
	return out
}

// installedPlugins maps each installed plugin (name@marketplace) to its
// directory, from ~/.claude/plugins/installed_plugins.json (a map of
// objects, or of arrays of them, one per scope).
func installedPlugins(home string) map[string]string {
	out := map[string]string{}
	data, err := ReadSettings("", filepath.Join(home, ".claude", "plugins", "installed_plugins.json"))
	if err != nil || len(data) == 0 {
		return out
	}
	var f struct {
		Plugins map[string]json.RawMessage `json:"plugins"`
	}
	if json.Unmarshal(data, &f) != nil {
		return out
	}
	type entry struct {
		InstallPath string `json:"installPath"`
	}
	for k, raw := range f.Plugins {
		var one entry
		var many []entry
		switch {
		case json.Unmarshal(raw, &one) == nil && one.InstallPath != "":
			out[k] = one.InstallPath
		case json.Unmarshal(raw, &many) == nil && len(many) > 0:
			out[k] = many[0].InstallPath
		}
	}
	return out
}

// pluginCommands lists the commands of a plugin's hooks, by event.
func pluginCommands(dir string) map[string][]string {
	var hooks json.RawMessage
	path := filepath.Join(dir, "hooks", "hooks.json")
	if data, err := ReadSettings("", filepath.Join(dir, ".claude-plugin", "plugin.json")); err == nil && len(data) > 0 {
		var m struct {
			Hooks json.RawMessage `json:"hooks"`
		}
		if json.Unmarshal(data, &m) == nil && len(m.Hooks) > 0 {
			var rel string
			if json.Unmarshal(m.Hooks, &rel) == nil {
				path = filepath.Join(dir, filepath.FromSlash(rel))
			} else {
				hooks = m.Hooks
			}
		}
	}
	if hooks == nil {
		data, err := ReadSettings("", path)
		if err != nil || len(data) == 0 {
			return nil
		}
		var f struct {
			Hooks json.RawMessage `json:"hooks"`
		}
		if json.Unmarshal(data, &f) != nil {
			return nil
		}
		hooks = f.Hooks
	}
	var events map[string][]matcherGroup
	if json.Unmarshal(hooks, &events) != nil {
		return nil
	}
	cmds := map[string][]string{}
	for ev, groups := range events {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h.Type == "command" {
					cmds[ev] = append(cmds[ev], h.Command)
				}
			}
		}
	}
	return cmds
}
