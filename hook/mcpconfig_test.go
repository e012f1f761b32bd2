package hook_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/hook"
)

const mcpPath = "/p/.mcp.json"

// orbitMCPOnly is the .mcp.json InstallMCP writes from nothing.
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

func TestInstallMCP(t *testing.T) {
	t.Parallel()
	added := []string{"added mcpServers.orbit: orbit mcp"}
	tests := []struct {
		name         string
		old          string
		want         string // "" when only the checks below apply
		same         bool
		wantChanges  []string
		wantWarnings []string
		keeps        []string // substrings of old that must survive
	}{
		{name: "no file", old: "", want: orbitMCPOnly, wantChanges: added},
		// The file's bytes are kept: no final newline added, a one-line
		// file stays on one line.
		{name: "empty object", old: "{}", want: strings.TrimSuffix(orbitMCPOnly, "\n"), wantChanges: added},
		{name: "servers null", old: `{"mcpServers": null}`, want: `{"mcpServers": {"orbit": {"command":"orbit","args":["mcp"]}}}`, wantChanges: added},
		{name: "already registered", old: orbitMCPOnly, same: true},
		{name: "registered under another name", old: `{"mcpServers":{"gov":{"type":"stdio","command":"/usr/local/bin/orbit","args":["mcp"]}}}`, same: true},
		{
			name: "other servers and fields kept", wantChanges: added,
			old:  `{"$comment":"team servers","mcpServers":{"github":{"type":"http","url":"https://api.example/mcp","headers":{"Authorization":"Bearer ${GH}"}},"fs":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","."],"env":{"N":"1e3"}}}}`,
			want: `{"$comment":"team servers","mcpServers":{"github":{"type":"http","url":"https://api.example/mcp","headers":{"Authorization":"Bearer ${GH}"}},"fs":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","."],"env":{"N":"1e3"}},"orbit":{"command":"orbit","args":["mcp"]}}}`,
		},
		{
			name: "the name orbit taken by something else", same: true,
			old:          `{"mcpServers":{"orbit":{"command":"node","args":["orbit-server.js"]}}}`,
			wantWarnings: []string{`mcpServers.orbit already runs "node orbit-server.js" (not "orbit mcp"); left as it is, and orbit's server is not registered`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changes, warnings, err := hook.InstallMCP(mcpPath, []byte(tt.old), "orbit")
			if err != nil {
				t.Fatalf("InstallMCP(%q) error = %v", tt.old, err)
			}
			if !slices.Equal(changes, tt.wantChanges) {
				t.Errorf("changes = %q; want %q", changes, tt.wantChanges)
			}
			if !slices.Equal(warnings, tt.wantWarnings) {
				t.Errorf("warnings = %q; want %q", warnings, tt.wantWarnings)
			}
			if tt.same && string(out) != tt.old {
				t.Errorf("InstallMCP rewrote a file that needed nothing:\n%s", out)
			}
			if tt.want != "" && string(out) != tt.want {
				t.Errorf("InstallMCP =\n%s\nwant\n%s", out, tt.want)
			}
			for _, k := range tt.keeps {
				if !strings.Contains(string(out), k) {
					t.Errorf("InstallMCP lost %q:\n%s", k, out)
				}
			}
			if !json.Valid(out) && len(out) > 0 {
				t.Fatalf("InstallMCP wrote invalid JSON:\n%s", out)
			}
			again, changes, _, err := hook.InstallMCP(mcpPath, out, "orbit")
			if err != nil || len(changes) > 0 || string(again) != string(out) {
				t.Errorf("second InstallMCP = %d bytes, changes %q, %v; want the same bytes and no change", len(again), changes, err)
			}
			if len(tt.wantWarnings) == 0 {
				if name, _, err := hook.RegisteredMCP(out); err != nil || name == "" {
					t.Errorf("RegisteredMCP after InstallMCP = %q, %v; want a name", name, err)
				}
			}
		})
	}
}

func TestInstallMCPErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ old, want string }{
		{`[1]`, "/p/.mcp.json"},
		{`{"mcpServers": [1]}`, `/p/.mcp.json: "mcpServers" must be an object, not [1]`},
		{`{"mcpServers": {`, "/p/.mcp.json"},
	} {
		_, _, _, err := hook.InstallMCP(mcpPath, []byte(tt.old), "orbit")
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("InstallMCP(%q) error = %v; want one line with %q", tt.old, err, tt.want)
		}
	}
}

func TestRegisteredMCP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		data, name, command string
	}{
		{"", "", ""},
		{`{}`, "", ""},
		{`{"mcpServers":{"orbit":{"command":"orbit","args":["mcp"]}}}`, "orbit", "orbit mcp"},
		{`{"mcpServers":{"b":{"command":"orbit mcp"},"a":{"command":"x"}}}`, "b", "orbit mcp"},
		{`{"mcpServers":{"z":{"command":"orbit","args":["mcp"]},"orbit":{"command":"/opt/orbit-linux-amd64","args":["--root","/w","mcp"]}}}`, "orbit", "/opt/orbit-linux-amd64 --root /w mcp"},
		{`{"mcpServers":{"orbit":{"command":"orbit","args":["serve"]}}}`, "", ""},
		{`{"mcpServers":{"orbit":{"type":"http","url":"http://x","command":"orbit","args":["mcp"]}}}`, "", ""},
		{`{"mcpServers":{"orbit":{"command":"orbital","args":["mcp"]}}}`, "", ""},
	}
	for _, tt := range tests {
		name, command, err := hook.RegisteredMCP([]byte(tt.data))
		if err != nil || name != tt.name || command != tt.command {
			t.Errorf("RegisteredMCP(%s) = %q, %q, %v; want %q, %q", tt.data, name, command, err, tt.name, tt.command)
		}
	}
	if _, _, err := hook.RegisteredMCP([]byte("{")); err == nil {
		t.Errorf("RegisteredMCP of broken JSON: no error")
	}
}
