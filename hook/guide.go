package hook

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/policy"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/trust"
)

// The tools of orbit's MCP server (orbit mcp), by the names the agent is
// told of: Claude Code calls them mcp__<server>__<tool>.
const (
	ToolDecide         = "decide"
	ToolRetro          = "retro"
	ToolQueue          = "queue"
	ToolPrecedent      = "precedent"
	ToolTrust          = "trust"
	ToolStale          = "stale"
	ToolLoopStatus     = "loop_status"
	ToolKnowledgeMatch = "knowledge_match"
)

// Guide is how the agent can record in this project, for the prompts that
// tell it (the Stop hook's re-feed and orbit prime): with orbit's MCP
// tools when .mcp.json registers the server, with the CLI when it has
// Bash, and otherwise by appending a JSON line with its Edit or Write tool
// (seed 000, gotcha 8: the loop's agent may have no Bash).
type Guide struct {
	// MCP is the name .mcp.json registers orbit's server under ("" when
	// it does not).
	MCP string
	// Iteration is the iteration the agent's next decision belongs to.
	Iteration int64
	// NextID is the id its next decision would get now.
	NextID string
	Level  trust.Level
	Now    time.Time
}

// ReadGuide reads what the guide depends on: .mcp.json, and the next free
// id of the iteration. A .mcp.json that is not JSON registers nothing
// (doctor names it).
func ReadGuide(ctx context.Context, ix *journal.Index, iteration int64, level trust.Level, now time.Time) (Guide, error) {
	g := Guide{Iteration: iteration, Level: level, Now: now}
	if data, err := ReadSettings(ix.Project.Root, MCPFile); err == nil {
		g.MCP, _, _ = RegisteredMCP(data)
	}
	id, err := ix.NextID(ctx, iteration)
	g.NextID = id
	return g, err
}

// Tool is the name the agent calls one of orbit's MCP tools by.
func (g Guide) Tool(name string) string { return "mcp__" + g.MCP + "__" + name }

// queueHow says how to work through the queue.
func (g Guide) queueHow() string {
	if g.MCP != "" {
		return fmt.Sprintf("Decide with %s {process: true} (trivial items in one batch, names the deep focus), then %s with request: ID, decision and reason.", g.Tool(ToolQueue), g.Tool(ToolDecide))
	}
	return "Decide with `orbit decide --queue` (trivial items in one batch, names the deep focus), then `orbit decide --request ID --decision ... --reason ...`."
}

// retroHow says how to record an outcome.
func (g Guide) retroHow() string {
	if g.MCP != "" {
		return g.Tool(ToolRetro) + " (id, outcome CORRECT|INCORRECT, evidence)"
	}
	return "`orbit retro ID CORRECT|INCORRECT --evidence ...`"
}

// command names what records an outcome (retro) or lists every stale
// decision (stale): the MCP tool when there is one, else the CLI command.
func (g Guide) command(name string) string {
	if g.MCP != "" {
		return g.Tool(name)
	}
	return "`orbit " + name + "`"
}

// section is the guide as a part of a prompt; no line of it is ever cut.
func (g Guide) section() section {
	var l []string
	l = append(l, "How to record (each way lands in the same journal, checked the same):")
	if g.MCP != "" {
		tools := []string{
			g.Tool(ToolQueue) + " (list; process: true batches the trivial items)",
			g.Tool(ToolDecide) + " (a decision; request: ID decides a queued item)",
			g.Tool(ToolRetro) + " (an outcome)",
			g.Tool(ToolPrecedent), g.Tool(ToolStale), g.Tool(ToolTrust), g.Tool(ToolLoopStatus), g.Tool(ToolKnowledgeMatch),
		}
		l = append(l, fmt.Sprintf("- MCP tools (server %q in %s): %s.", g.MCP, MCPFile, strings.Join(tools, ", ")))
	}
	l = append(l, "- Bash: `orbit decide --queue`; `orbit decide --request ID --decision APPROVED|NEEDS_REVIEW|REJECTED --reason \"...\"`; "+
		"`orbit decide --title \"...\" --category C --impact low|medium|high --reversible|--irreversible [--decision D --reason \"...\"]`; "+
		"`orbit retro ID CORRECT|INCORRECT --evidence \"...\"`.")
	without := "- Without Bash"
	if g.MCP != "" {
		without = "- Without Bash or the MCP tools"
	}
	l = append(l, without+": append one line at the end of "+project.DecisionsFile+" with Edit or Write, changing no line already there:")
	l = append(l, "  "+g.decisionLine())
	l = append(l, fmt.Sprintf("  id: %s now, then the next number; ts: the time now; %s; depth: %s; category: %s; decision: %s.",
		g.NextID, g.tiers(), strings.Join(journal.Depths, ", "), strings.Join(journal.Categories, ", "), strings.Join(journal.DecisionValues, ", ")))
	l = append(l, "  An outcome: append "+g.outcomeLine()+" to "+project.RetroFile+" (outcome CORRECT or INCORRECT). orbit checks every appended line at the next Stop.")
	return section{priority: 8, lines: l, keep: len(l)}
}

// decisionLine is a journal line as orbit itself writes it, with
// placeholders where the agent's words go.
func (g Guide) decisionLine() string {
	tier, _ := policy.Tier(g.Level, "low", true)
	d := journal.Decision{
		ID: g.NextID, Iteration: g.Iteration, TS: g.Now.UTC().Format(time.RFC3339),
		Tier: tier, Depth: "trivial", Category: "quality",
		Input: "<what is decided>", Decision: "APPROVED", Reason: "<why>", NextAction: "<what happens next>",
		Verification: "PENDING", Retrograde: journal.Retrograde{Outcome: journal.OutcomeNA},
	}
	line, err := journal.Marshal(&d)
	if err != nil {
		return err.Error()
	}
	return strings.TrimSuffix(string(line), "\n")
}

func (g Guide) outcomeLine() string {
	rec := journal.OutcomeRecord{TS: g.Now.UTC().Format(time.RFC3339), DecisionID: "<id>", Outcome: journal.OutcomeCorrect, Evidence: "<what shows it>"}
	line, err := journal.Marshal(&rec)
	if err != nil {
		return err.Error()
	}
	return strings.TrimSuffix(string(line), "\n")
}

// tiers is the matrix at the guide's trust level in one phrase.
func (g Guide) tiers() string {
	cells, err := policy.Matrix(g.Level)
	if err != nil {
		return "tier: " + strings.Join(journal.Tiers, ", ")
	}
	var parts []string
	for i := 0; i+1 < len(cells); i += 2 {
		parts = append(parts, fmt.Sprintf("%s %s/%s", cells[i].Impact, cells[i].Tier, cells[i+1].Tier))
	}
	return fmt.Sprintf("tier by impact, reversible/irreversible, at trust %s: %s", g.Level, strings.Join(parts, ", "))
}
