package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
)

// SettingsFile is Claude Code's project settings file.
const SettingsFile = ".claude/settings.json"

// Events are the hook events orbit registers, with their subcommands.
var Events = []struct{ Event, Sub string }{{"Stop", "stop"}, {"SubagentStop", "subagent-stop"}, {"SessionStart", "session-start"}}

// Timeout is the seconds Claude Code gives orbit's hooks.
const Timeout = 30

type hookEntry struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
}

type matcherGroup struct {
	Matcher string      `json:"matcher,omitempty"`
	Hooks   []hookEntry `json:"hooks"`
}

// Install merges orbit's Stop, SubagentStop and SessionStart hooks (bin
// hook stop, …)
// into the settings file's bytes, keeping every other setting and hook as it
// is. It returns the new bytes (equal to the old when orbit's hooks are
// already there), what it changed, and warnings about other blocking Stop
// hooks (two blocking Stop hooks race).
func Install(path string, old []byte, bin string) (out []byte, changes, warnings []string, err error) {
	var st *loop.State
	if len(old) == 0 {
		st = &loop.State{Path: path}
	} else if st, err = loop.ParseObject(path, "settings file", old); err != nil {
		return nil, nil, nil, err
	}
	if raw, ok := st.Raw("hooks"); ok && string(raw) != "null" {
		if len(raw) == 0 || raw[0] != '{' {
			return nil, nil, nil, fmt.Errorf("%s: \"hooks\" must be an object, not %s", path, cutJSON(raw))
		}
	}
	for _, ev := range Events {
		want := bin + " hook " + ev.Sub
		var groups []json.RawMessage
		if raw, ok := st.RawAt("hooks", ev.Event); ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return nil, nil, nil, fmt.Errorf("%s: hooks.%s must be an array: %v", path, ev.Event, err)
			}
		}
		found := false
		for _, g := range groups {
			var mg matcherGroup
			if json.Unmarshal(g, &mg) != nil {
				continue
			}
			for _, h := range mg.Hooks {
				switch {
				case h.Command == want || IsOrbitHook(h.Command, ev.Sub):
					found = true
					if h.Command != want {
						warnings = append(warnings, fmt.Sprintf("hooks.%s already runs %q (not %q); left as it is", ev.Event, h.Command, want))
					}
				case ev.Event == "Stop" && h.Type == "command":
					warnings = append(warnings, fmt.Sprintf("hooks.Stop also runs %q: two blocking Stop hooks race (seed 003), so remove it if it drives a loop (the ceo-loop-stop.sh orbit replaces does)", h.Command))
				}
			}
		}
		if found {
			continue
		}
		g := matcherGroup{Hooks: []hookEntry{{Type: "command", Command: want, Timeout: Timeout}}}
		if raw, ok := st.Raw("hooks"); !ok || string(raw) == "null" {
			if err := st.Set("hooks", map[string]any{}); err != nil {
				return nil, nil, nil, err
			}
		}
		if raw, ok := st.RawAt("hooks", ev.Event); ok && string(raw) != "null" {
			err = st.AppendAt([]string{"hooks", ev.Event}, g)
		} else {
			err = st.SetAt([]string{"hooks", ev.Event}, []matcherGroup{g})
		}
		if err != nil {
			return nil, nil, nil, err
		}
		changes = append(changes, fmt.Sprintf("added hooks.%s: %s (timeout %ds)", ev.Event, want, Timeout))
	}
	if len(changes) == 0 {
		return old, nil, warnings, nil
	}
	return st.Bytes(), changes, warnings, nil
}

// IsOrbitHook reports whether a hook command runs orbit's hook sub: a
// binary whose name holds "orbit" (orbit, /usr/local/bin/orbit,
// orbit-linux-amd64), then "hook SUB".
func IsOrbitHook(command, sub string) bool {
	f := strings.Fields(command)
	if len(f) < 3 || f[len(f)-2] != "hook" || f[len(f)-1] != sub {
		return false
	}
	return isOrbitBinary(f[0])
}

func cutJSON(raw []byte) string {
	s := string(raw)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// RegisteredCommand returns the command of orbit's hook for an event in a
// settings file ("" when it is not registered).
func RegisteredCommand(data []byte, event, sub string) (string, error) {
	var s struct {
		Hooks map[string][]matcherGroup `json:"hooks"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return "", err
	}
	for _, g := range s.Hooks[event] {
		for _, h := range g.Hooks {
			if IsOrbitHook(h.Command, sub) {
				return h.Command, nil
			}
		}
	}
	return "", nil
}

// MaxSettingsBytes bounds a settings file orbit reads.
const MaxSettingsBytes = 4 << 20

// ReadSettings reads a settings file (absolute, or relative to the project
// root); a missing one is empty.
func ReadSettings(root, path string) ([]byte, error) {
	data, err := project.ReadFile(root, path, MaxSettingsBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return data, err
}
