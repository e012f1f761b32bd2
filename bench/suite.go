package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Suite is one named benchmark: it measures and writes one section of
// BENCHMARKS.md. Add a suite by writing its Run and listing it in Suites.
type Suite struct {
	// Name selects the suite with -only.
	Name string
	// Title heads its section.
	Title string
	// Run measures and returns the section's body in markdown.
	Run func(ctx context.Context, e *Env) (string, error)
}

// Suites are every suite, in the order of BENCHMARKS.md.
var Suites = []Suite{
	{Name: "import", Title: "Import throughput", Run: runImport},
	{Name: "memory", Title: "Peak memory of import", Run: runMemory},
	{Name: "sync", Title: "Sync after one appended line", Run: runSync},
	{Name: "hook", Title: "The hook path: one decision", Run: runHook},
	{Name: "decide-precedents", Title: "The hook path: what precedent search adds", Run: runDecidePrecedents},
	{Name: "trust", Title: "Trust report", Run: runTrust},
	{Name: "precedent", Title: "Precedent search", Run: runPrecedent},
	{Name: "serve", Title: "The service: orbit serve under load", Run: runServe},
	{Name: "knowledge", Title: "Knowledge match: a 10,000-entry error registry", Run: runKnowledge},
	{Name: "hookstop", Title: "The Stop hook: orbit hook stop against ceo-loop-stop.sh", Run: runHookStop},
	{Name: "loops", Title: "Loops of every framework: orbit loop list over 1,000 records", Run: runLoops},
	{Name: "mcp", Title: "The agent's interface: orbit mcp and orbit prime", Run: runMCP},
	{Name: "startup", Title: "Start-up: binary size and package initialisation", Run: runStartup},
	{Name: "fleet", Title: "The fleet: a hub on PostgreSQL", Run: runFleet},
	{Name: "decode", Title: "JSON decoding: the one-pass decoder against encoding/json and encoding/json/v2", Run: runDecode},
}

// Section runs s and renders its section: title, body, when it was measured
// and how to reproduce it.
func (s Suite) Section(ctx context.Context, e *Env) (Block, error) {
	start := time.Now()
	load := LoadAvg()
	body, err := s.Run(ctx, e)
	if err != nil {
		return Block{}, fmt.Errorf("suite %s: %w", s.Name, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n%s\n\n", s.Title, strings.TrimSpace(body))
	fmt.Fprintf(&b, "Measured %s (suite took %s; load average %s at its start, %s at its end). Reproduce: `make bench` (every section) or `%s -only %s`.\n",
		start.Format("2006-01-02 15:04 MST"), time.Since(start).Round(time.Second), orUnknown(load), orUnknown(LoadAvg()), e.Reproduce, s.Name)
	return Block{Name: s.Name, Text: b.String()}, nil
}
