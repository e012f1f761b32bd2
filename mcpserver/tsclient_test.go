package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/internal/tooltest"
)

// tsClientDir holds the node script, its package.json and lockfile.
var tsClientDir = filepath.Join("testdata", "tsclient")

// TestTypeScriptClient drives the real binary through the official
// TypeScript SDK's client (@modelcontextprotocol/sdk, from npm): the tools
// listed, a decision, an outcome and a precedent search, then the journal
// lines and the index checked from here. It also checks the tool list's
// size with published tokenizers.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	node := tooltest.Require(t, "node")[0]
	tooltest.RequirePath(t, filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk"), "npm ci --prefix mcpserver/"+filepath.ToSlash(tsClientDir))
	p := newProject(t)
	before := len(p.lines(journalRel))

	cmd := exec.Command(node, "client.mjs", orbitBin, p.root)
	cmd.Dir = tsClientDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, stderr.String())
	}
	var out struct {
		Tools    []string
		ToolList struct{ Bytes, Claude, Cl100k, O200k int }
		Decision struct {
			ID, Tier, Depth, Decision, Input string
		}
		DecisionText string
		Retro        struct {
			ID       string `json:"decision_id"`
			Outcome  string `json:"outcome"`
			Previous string `json:"previous_outcome"`
		}
		Precedent []struct{ ID, Outcome string }
		Refused   struct {
			IsError bool
			Text    string
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("client.mjs printed %q: %v", stdout.String(), err)
	}
	if !slices.Equal(out.Tools, wantTools) {
		t.Errorf("tools = %q; want %q", out.Tools, wantTools)
	}
	if out.ToolList.Claude == 0 || out.ToolList.Claude >= 2000 || out.ToolList.Cl100k >= 2000 || out.ToolList.O200k >= 2000 {
		t.Errorf("tool list tokens = %+v; want under 2,000 by every tokenizer", out.ToolList)
	}
	if est := (out.ToolList.Bytes + 2) / 3; est < out.ToolList.Claude || est < out.ToolList.Cl100k || est < out.ToolList.O200k {
		t.Errorf("bytes / 3 = %d undercounts the tool list (%+v): orbit's estimate must not", est, out.ToolList)
	}
	d := out.Decision
	if d.ID != "iter-3-3" || d.Tier != "quick_review" || d.Depth != "medium" || d.Decision != "APPROVED" || !strings.HasPrefix(out.DecisionText, "[CEO-LOOP] Decision on: Move the session store to SQLite\n") {
		t.Errorf("decision = %+v\n%s", d, out.DecisionText)
	}
	if out.Retro.ID != d.ID || out.Retro.Outcome != "CORRECT" || out.Retro.Previous != "PENDING" {
		t.Errorf("retro = %+v; want %s CORRECT, was PENDING", out.Retro, d.ID)
	}
	if len(out.Precedent) == 0 || out.Precedent[0].ID != d.ID || out.Precedent[0].Outcome != "CORRECT" {
		t.Errorf("precedent = %+v; want %s first, CORRECT", out.Precedent, d.ID)
	}
	if want := `category "qualty" is not allowed (allowed: feature, architecture, quality, scope, deploy); did you mean "quality"?`; !out.Refused.IsError || out.Refused.Text != want {
		t.Errorf("refused call = %+v; want the tool error %q", out.Refused, want)
	}

	// The journal and the index, read here.
	lines := p.lines(journalRel)
	if len(lines) != before+1 || !strings.Contains(lines[len(lines)-1], `"id":"iter-3-3"`) || !strings.Contains(lines[len(lines)-1], `"input":"Move the session store to SQLite"`) {
		t.Errorf("journal: %d new lines, last %s; want the one decision", len(lines)-before, lines[len(lines)-1])
	}
	if retro := p.lines(retroRel); len(retro) != 1 || !strings.Contains(retro[0], `"decision_id":"iter-3-3","outcome":"CORRECT","evidence":"adapter merged, CI green"`) {
		t.Errorf("retrograde journal = %q", retro)
	}
	if got := p.decisions()["iter-3-3"]; got.Input != "Move the session store to SQLite" || got.Outcome != "CORRECT" {
		t.Errorf("index holds iter-3-3 as %+v; want it, CORRECT", got)
	}
	p.orbit("", 0, "verify")
}
