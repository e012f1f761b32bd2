package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orbit-loop/orbit/hook"
	"github.com/orbit-loop/orbit/project"
)

// mcpToolListTarget is the most tokens the whole tool list of orbit mcp may
// cost, by orbit's estimate.
const mcpToolListTarget = 2000

// tsClientDir is where the node tokenizers are installed (npm ci), under
// the module root.
const tsClientDir = "mcpserver/testdata/tsclient"

// tokenCounts are a text's counts by the published tokenizers.
type tokenCounts struct {
	Bytes, Claude, Cl100k, O200k int
}

// countTokens runs the node tokenizers over text; ok is false (with the
// reason) when node or the installed packages are missing.
func (e *Env) countTokens(text string) (tokenCounts, string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return tokenCounts{}, MissingPackage("node", "nodejs"), nil
	}
	dir := filepath.Join(e.Root, tsClientDir)
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); e.Root == "" || err != nil {
		return tokenCounts{}, fmt.Sprintf("**The tokenizers are not installed, so the tokenizer counts were skipped.** Run `npm ci --prefix %s`, then the suite again.", tsClientDir), nil
	}
	f, err := os.CreateTemp(e.Work, "tokens-*.txt")
	if err != nil {
		return tokenCounts{}, "", err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return tokenCounts{}, "", err
	}
	f.Close()
	cmd := exec.Command(node, "tokens.mjs", f.Name())
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return tokenCounts{}, "", fmt.Errorf("node tokens.mjs: %w", err)
	}
	var c tokenCounts
	if err := json.Unmarshal(out, &c); err != nil {
		return c, "", fmt.Errorf("node tokens.mjs printed %q: %w", out, err)
	}
	return c, "", nil
}

// mcpSession starts `orbit mcp` in the project at dir and connects the Go
// SDK's client to it.
func (e *Env) mcpSession(ctx context.Context, dir string) (*mcp.ClientSession, error) {
	cmd := e.OrbitCmd(dir, "mcp")
	client := mcp.NewClient(&mcp.Implementation{Name: "orbit-bench", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
}

// runMCP measures what orbit mcp costs an agent: the tokens of its tool
// list and of orbit prime's context (orbit's estimate against published
// tokenizers), and the time to record a decision through one long-lived
// `orbit mcp` against one `orbit decide` process per decision.
func runMCP(ctx context.Context, e *Env) (string, error) {
	var b strings.Builder
	var notes []string

	// The tool list, as a client receives it.
	dirS, err := e.NewProject("mcp-tools")
	if err != nil {
		return "", err
	}
	s, err := e.mcpSession(ctx, dirS)
	if err != nil {
		return "", err
	}
	list, err := s.ListTools(ctx, nil)
	s.Close()
	if err != nil {
		return "", err
	}
	tools, err := json.Marshal(list.Tools)
	if err != nil {
		return "", err
	}

	// orbit prime's context on a loop with a queue and a progress file.
	if _, err := Measure(e.OrbitCmd(dirS, "loop", "start", "--max-iterations", "20")); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dirS, project.PendingFile), []byte(benchQueue), 0o644); err != nil {
		return "", err
	}
	if _, err := Measure(e.OrbitCmd(dirS, "report", "progress", "--write")); err != nil {
		return "", err
	}
	primed, err := Measure(e.OrbitCmd(dirS, "prime"))
	if err != nil {
		return "", err
	}

	t := Table{Header: []string{"text", "bytes", "orbit's estimate (bytes / 3)", "Claude tokenizer", "cl100k", "o200k", "target"}}
	for _, row := range []struct {
		name, text, target string
	}{
		{fmt.Sprintf("the tool list of `orbit mcp` (%d tools, with their schemas)", len(list.Tools)), string(tools), fmt.Sprintf("< %d tokens: %s", mcpToolListTarget, met(hook.EstimateTokens(string(tools)) < mcpToolListTarget))},
		{"`orbit prime` on a loop with 4 queued requests and a progress file", strings.TrimSpace(string(primed.Stdout)), fmt.Sprintf("≤ %d tokens: %s", hook.MaxPrimeTokens, met(hook.EstimateTokens(strings.TrimSpace(string(primed.Stdout))) <= hook.MaxPrimeTokens))},
	} {
		c, note, err := e.countTokens(row.text)
		if err != nil {
			return "", err
		}
		counts := []string{"—", "—", "—"}
		if note != "" {
			notes = append(notes, note)
		} else {
			counts = []string{fmt.Sprint(c.Claude), fmt.Sprint(c.Cl100k), fmt.Sprint(c.O200k)}
		}
		t.Add(append(append([]string{row.name, fmt.Sprint(len(row.text)), fmt.Sprint(hook.EstimateTokens(row.text))}, counts...), row.target)...)
	}
	b.WriteString("What orbit costs an agent's context. Claude's current tokenizer is not public, so orbit estimates tokens as bytes / 3 (`hook.EstimateTokens`): on this text, which mixes English, JSON and punctuation, Anthropic's published Claude tokenizer (`@anthropic-ai/tokenizer`, exact for models before Claude 3) and OpenAI's cl100k and o200k (`js-tiktoken`) all count fewer, so a budget met by the estimate is met by them (`mcpserver`'s tests check both). Counted by `node mcpserver/testdata/tsclient/tokens.mjs`.\n\n")
	b.WriteString(t.String())
	b.WriteString("\n")

	// Recording a decision: one MCP call against one process.
	d := Table{Header: []string{"recording one decision (with its 3 precedents)", "median", "p90", "min", "max"}}
	for _, n := range []int{e.Small(), e.Large()} {
		dir, err := e.Project(ctx, n)
		if err != nil {
			return "", err
		}
		s, err := e.mcpSession(ctx, dir)
		if err != nil {
			return "", err
		}
		viaMCP := &contender{name: fmt.Sprintf("MCP `decide` call to a running `orbit mcp`, %s-decision project", SizeLabel(n)), run: func(round int) (Sample, error) {
			start := time.Now()
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "decide", Arguments: map[string]any{
				"title": "Add ESLint rule eqeqeq", "category": "quality", "impact": "low", "reversible": true, "iteration": 99999,
			}})
			wall := time.Since(start)
			if err == nil && (res.IsError || len(res.Content) != 2) {
				err = fmt.Errorf("MCP decide in %s: %v", dir, res.Content)
			}
			return Sample{Wall: wall}, err
		}}
		process := e.decideContender(fmt.Sprintf("`orbit decide` process, %s-decision project", SizeLabel(n)), dir, "")
		e.Logf("mcp: %d rounds of an MCP decide and an `orbit decide` on %s decisions", e.Runs.Small, SizeLabel(n))
		err = rounds(ctx, e.Runs.Small, []*contender{viaMCP, process})
		s.Close()
		if err != nil {
			return "", err
		}
		for _, c := range []*contender{viaMCP, process} {
			st := Summarize(c.samples)
			d.Add(c.name, Dur(st.Median), Dur(st.P90), Dur(st.Min), Dur(st.Max))
		}
	}
	fmt.Fprintf(&b, "\nRecording a decision through MCP: the Go SDK's client calls `decide` on one `orbit mcp` process that stays up (the index is opened and closed by each call, as a command does), against `orbit decide` started for each decision through `sh -c`, as a hook runs it; the same request, %d rounds each, interleaved, after %d untimed rounds. The MCP time is the call's round trip as the client sees it.\n\n", e.Runs.Small, warmups)
	b.WriteString(d.String())
	for _, n := range notes {
		b.WriteString("\n" + n + "\n")
	}
	return b.String(), nil
}

// benchQueue is a pending queue of four requests, seed 000's example first.
const benchQueue = `[
  {"id": "req-001", "requestor": "forge:builder", "category": "architecture", "title": "WebSocket vs polling for agent communication",
   "description": "Should we implement WebSocket-based real-time agent communication or keep polling?", "impact": "medium", "reversible": true,
   "context": "Current polling adds 2-3s latency. WebSocket would require server changes."},
  {"id": "req-002", "requestor": "forge:guardian", "category": "quality", "title": "Add ESLint rule eqeqeq", "impact": "low", "reversible": true},
  {"id": "req-003", "requestor": "forge:planner", "category": "deploy", "title": "Ship v2 to production behind a flag", "impact": "high", "reversible": false},
  {"id": "req-004", "requestor": "forge:builder", "category": "feature", "title": "CSV export of the decision log", "impact": "low", "reversible": true}
]
`
