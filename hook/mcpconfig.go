package hook

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orbit-loop/orbit/loop"
)

// MCPFile is Claude Code's project MCP configuration (checked in, shared by
// everyone who opens the project).
const MCPFile = ".mcp.json"

// MCPServerName is the name orbit registers its MCP server under; Claude
// Code then calls its tools mcp__orbit__<tool>.
const MCPServerName = "orbit"

// mcpServer is one entry of .mcp.json's mcpServers.
type mcpServer struct {
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// InstallMCP merges orbit's MCP server ({"command": bin, "args": ["mcp"]})
// into the bytes of .mcp.json under the name "orbit", keeping every other
// server and field as it is. It returns the new bytes (the old ones when an
// entry already runs orbit's server, under any name), what it changed, and
// warnings (a server named "orbit" that runs something else is left alone).
func InstallMCP(path string, old []byte, bin string) (out []byte, changes, warnings []string, err error) {
	var cfg *loop.State
	if len(old) == 0 {
		cfg = &loop.State{Path: path}
	} else if cfg, err = loop.ParseObject(path, "MCP configuration", old); err != nil {
		return nil, nil, nil, err
	}
	raw, ok := cfg.Raw("mcpServers")
	hasServers := ok && string(raw) != "null"
	if hasServers && (len(raw) == 0 || raw[0] != '{') {
		return nil, nil, nil, fmt.Errorf("%s: \"mcpServers\" must be an object, not %s", path, cutJSON(raw))
	}
	name, _, err := RegisteredMCP(old)
	if err != nil {
		return nil, nil, nil, err
	}
	if name != "" {
		return old, nil, nil, nil
	}
	if raw, taken := cfg.RawAt("mcpServers", MCPServerName); taken {
		what := cutJSON(raw)
		var other mcpServer
		if json.Unmarshal(raw, &other) == nil && other.Command != "" {
			what = fmt.Sprintf("%q", strings.Join(append([]string{other.Command}, other.Args...), " "))
		}
		warnings = append(warnings, fmt.Sprintf("mcpServers.%s already runs %s (not %q); left as it is, and orbit's server is not registered", MCPServerName, what, bin+" mcp"))
		return old, nil, warnings, nil
	}
	if !hasServers {
		if err := cfg.Set("mcpServers", map[string]any{}); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := cfg.SetAt([]string{"mcpServers", MCPServerName}, mcpServer{Command: bin, Args: []string{"mcp"}}); err != nil {
		return nil, nil, nil, err
	}
	return cfg.Bytes(), []string{fmt.Sprintf("added mcpServers.%s: %s mcp", MCPServerName, bin)}, nil, nil
}

// RegisteredMCP returns the name under which .mcp.json's bytes register
// orbit's MCP server, and the command that runs it ("" and "" when none
// does). Empty bytes (no file) register nothing.
func RegisteredMCP(data []byte) (name, command string, err error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return "", "", nil
	}
	var cfg struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return "", "", err
	}
	// The conventional name first, then the others in a stable order.
	names := make([]string, 0, len(cfg.Servers))
	for n := range cfg.Servers {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if (a == MCPServerName) != (b == MCPServerName) {
			if a == MCPServerName {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, n := range names {
		var s mcpServer
		if json.Unmarshal(cfg.Servers[n], &s) != nil {
			continue
		}
		if s.Type != "" && s.Type != "stdio" {
			continue
		}
		if IsOrbitMCP(s.Command, s.Args) {
			return n, strings.Join(append([]string{s.Command}, s.Args...), " "), nil
		}
	}
	return "", "", nil
}

// IsOrbitMCP reports whether an MCP server entry runs orbit's server: a
// binary whose name is orbit's (see IsOrbitHook) with the arguments "mcp",
// or the whole command in one string ("orbit mcp").
func IsOrbitMCP(command string, args []string) bool {
	f := append(strings.Fields(command), args...)
	if len(f) < 2 || f[len(f)-1] != "mcp" {
		return false
	}
	return isOrbitBinary(f[0])
}

func isOrbitBinary(bin string) bool {
	base := filepath.Base(bin)
	return base == "orbit" || strings.HasPrefix(base, "orbit-") || strings.HasPrefix(base, "orbit_") || strings.HasPrefix(base, "orbit.")
}
