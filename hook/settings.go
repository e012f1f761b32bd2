package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

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
// hook stop, …) into the bytes of one settings file, keeping every other
// setting and hook as it is (PlanInstall does it for the project's files
// together). It returns the new bytes (the old ones when orbit's hooks are
// already there), what it changed, and warnings about other blocking Stop
// hooks (two blocking Stop hooks race).
func Install(path string, old []byte, bin string) (out []byte, changes, warnings []string, err error) {
	doc, err := parseSettings(path, old)
	if err != nil {
		return nil, nil, nil, err
	}
	c := classify(doc)
	for _, ev := range Events {
		want := bin + " hook " + ev.Sub
		if r, ok := c.orbit[ev.Event]; ok {
			if r.command != want {
				warnings = append(warnings, fmt.Sprintf("hooks.%s already runs %q (not %q); left as it is", ev.Event, r.command, want))
			}
			continue
		}
		if err := appendHook(doc, ev.Event, orbitEntry(bin, ev.Sub)); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		changes = append(changes, fmt.Sprintf("added hooks.%s: %s (timeout %ds)", ev.Event, want, Timeout))
	}
	for _, r := range append(c.ceo, c.others...) {
		warnings = append(warnings, fmt.Sprintf("hooks.Stop also runs %q: two blocking Stop hooks race (each blocks the stop and re-feeds its own prompt), so remove it if it drives a loop (the ceo-loop-stop.sh orbit replaces does)", r.command))
	}
	if len(changes) == 0 {
		return old, nil, warnings, nil
	}
	return doc.Bytes(), changes, warnings, nil
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
