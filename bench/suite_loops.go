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

	"github.com/orbit-loop/orbit/citadel"
	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
)

// Targets of `orbit loop list` (the loop records issue).
const (
	// loopsVsJQTarget: orbit's time over jq's reading the same files, at
	// most ("no slower than jq").
	loopsVsJQTarget = 1.0
	// loopRecords is how many loop records the project holds, of every
	// framework.
	loopRecords = 1000
)

// loopsNodeList reads the loop files the way Citadel's `node
// scripts/loops.js list` does (readdirSync, JSON.parse of each file, the
// fields it prints), for CCW and Conductor files too. It is a stand-in
// written for this benchmark, not Citadel's code.
const loopsNodeList = `const fs = require('fs'), path = require('path');
const read = (p) => { try { return JSON.parse(fs.readFileSync(p, 'utf8')); } catch { return null; } };
const dir = (d) => fs.existsSync(d) ? fs.readdirSync(d) : [];
const out = [];
for (const n of dir('.planning/loops').filter((n) => n.endsWith('.json'))) {
  const l = read(path.join('.planning/loops', n)); if (l) out.push(['citadel', l.id, l.status || 'planned', l.title || l.id, l.updatedAt || '']);
}
const d = read('.planning/daemon.json'); if (d) out.push(['citadel', 'daemon-' + (d.campaignSlug || 'active'), d.status, '', d.lastTickAt || d.startedAt || '']);
for (const n of dir('.workflow/.loop').filter((n) => n.endsWith('.json'))) {
  const l = read(path.join('.workflow/.loop', n)); if (l) out.push(['ccw', l.loop_id, l.status, l.title, l.updated_at || '']);
}
for (const t of dir('conductor/tracks')) {
  const m = read(path.join('conductor/tracks', t, 'metadata.json')); if (m) out.push(['conductor', m.track_id, (m.loop_state || {}).step_status || m.status, m.name, m.updated_at || '']);
}
process.stdout.write(out.map((r) => r.join('\t')).join('\n') + '\n');`

// loopsJQ is the jq stand-in: one line per record, the same fields.
const loopsJQ = `jq -r '[(.id // .loop_id // .track_id), (.status // .loop_state.step_status), (.title // .name), (.updatedAt // .updated_at // "")] | @tsv' .planning/loops/*.json .planning/daemon.json .workflow/.loop/*.json conductor/tracks/*/metadata.json`

// loopsProject writes a project holding n loop records: a third Citadel
// records (runs of two attempts, as its runner writes them), a third CCW
// loops (half with a tasks file, in both layouts), a third Conductor
// tracks, plus Citadel's daemon, a Cavekit loop and the ORBIT loop.
func loopsProject(dir string, n int) error {
	now := time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)
	put := func(rel string, v any) error {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(p, append(data, '\n'), 0o644)
	}
	statuses := []string{"running", "attempt-limit", "verifier-passed", "planned", "stopped"}
	ccw := []string{"created", "running", "paused", "completed", "failed"}
	steps := [][2]string{{"PLAN", "NOT_STARTED"}, {"EXECUTE", "IN_PROGRESS"}, {"EVALUATE_EXECUTION", "FAILED"}, {"COMPLETE", "PASSED"}}
	fixed := 3 // daemon, Cavekit, ORBIT
	for i := range n - fixed {
		at := now.Add(time.Duration(i) * time.Minute)
		switch i % 3 {
		case 0:
			c := citadel.NewContract(citadel.ContractOptions{Type: "foreground-loop", Title: fmt.Sprintf("npm run lint -- --fix %d", i),
				Command: "npm run lint -- --fix", VerifierCommand: "npm run lint", MaxAttempts: 3, Status: statuses[i%len(statuses)]}, at)
			for a := 1; a <= 2; a++ {
				exit := 0
				c.Runs = append(c.Runs, citadel.Run{Attempt: a, Status: "running", Summary: "action completed", Command: c.Trigger.Command,
					ExitCode: &exit, StartedAt: loop.ISOTime(at), CompletedAt: loop.ISOTime(at), Evidence: []citadel.Evidence{}})
				c.Runs = append(c.Runs, citadel.Run{Attempt: a, Status: "running", Summary: "verifier failed (exit 1)", Command: c.Trigger.Command,
					Verifier: c.Verifier.Command, ExitCode: &exit, StartedAt: loop.ISOTime(at), CompletedAt: loop.ISOTime(at),
					Evidence: []citadel.Evidence{{Kind: "output-tail", Text: "src/app.ts\n  3:1  error  'x' is never used", Bytes: 42}}})
			}
			data, err := c.Bytes()
			if err != nil {
				return err
			}
			p := filepath.Join(dir, citadel.LoopsDir, c.ID+".json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return err
			}
		case 1:
			id := fmt.Sprintf("loop-v2-%s-%06d", at.Format("20060102T150405"), i)
			if err := put(frameworks.CCWDir+"/"+id+".json", map[string]any{"loop_id": id, "title": fmt.Sprintf("Task %d", i),
				"description": "Implement the thing", "max_iterations": 10, "status": ccw[i%len(ccw)], "current_iteration": i % 11,
				"created_at": at.Format(time.RFC3339), "updated_at": at.Format(time.RFC3339),
				"skill_state": map[string]any{"current_action": "develop", "mode": "auto",
					"develop": map[string]any{"total": 3, "completed": 1, "tasks": []any{map[string]any{"id": "task-001", "status": "pending"}}}}}); err != nil {
				return err
			}
			if i%4 == 1 {
				tasks := filepath.Join(dir, frameworks.CCWDir, id+".tasks.jsonl")
				if i%8 == 5 {
					tasks = filepath.Join(dir, frameworks.CCWDir, id, "tasks.jsonl")
					os.MkdirAll(filepath.Dir(tasks), 0o755)
				}
				line := `{"task_id":"task-1","description":"one","tool":"bash","mode":"write","prompt_template":"x","order":0}`
				if err := os.WriteFile(tasks, []byte(line+"\n"+line), 0o644); err != nil {
					return err
				}
			}
		default:
			id := fmt.Sprintf("track_%06d_%s", i, at.Format("20060102"))
			st := steps[i%len(steps)]
			if err := put(frameworks.ConductorTracksDir+"/"+id+"/metadata.json", map[string]any{"version": 3, "track_id": id,
				"name": fmt.Sprintf("Track %d", i), "type": "feature", "status": "in_progress", "created_at": at.Format(time.RFC3339),
				"loop_state": map[string]any{"current_step": st[0], "step_status": st[1], "fix_cycle_count": i % 3,
					"checkpoints": map[string]any{"PLAN": map[string]any{"status": "PASSED", "completed_at": at.Format(time.RFC3339)}}}}); err != nil {
				return err
			}
		}
	}
	if err := put(citadel.DaemonFile, map[string]any{"status": "running", "campaignSlug": "ship-feature", "budget": 50, "costPerSession": 3,
		"estimatedSpend": 12, "sessionCount": 4, "interval": "30m", "startedAt": now.Format(time.RFC3339), "log": []any{}}); err != nil {
		return err
	}
	if err := put(frameworks.CavekitLoopFile, map[string]any{"started_at": now.Format(time.RFC3339), "iteration": 3, "max_iterations": 20,
		"completion_promise": "<promise>CAVEKIT COMPLETE</promise>", "site": nil}); err != nil {
		return err
	}
	if err := put(".cavekit/token-ledger.json", map[string]any{"session_used": 120000, "session_budget": 500000,
		"task_budgets": map[string]any{"quick": 8000}, "tasks": map[string]any{}}); err != nil {
		return err
	}
	return put(project.StateFile, map[string]any{"active": true, "iteration": 7, "max_iterations": 20, "time_limit_minutes": 30,
		"started_at": now.Format(time.RFC3339), "trust_level": "standard", "depth_escalation_counter": 0,
		"correct_decisions": 47, "incorrect_decisions": 2})
}

// runLoops times `orbit loop list` over a project of loopRecords loop
// records of every framework against jq and node reading the same files.
func runLoops(ctx context.Context, e *Env) (string, error) {
	dir, err := e.Dir("loops")
	if err != nil {
		return "", err
	}
	if err := loopsProject(dir, loopRecords); err != nil {
		return "", err
	}
	if _, err := Measure(e.OrbitCmd(dir, "init")); err != nil {
		return "", err
	}
	// The first list records every loop as seen (one append, one
	// transaction); it is timed once, then the timed rounds read a project
	// whose loops orbit has seen.
	first, err := Measure(e.OrbitCmd(dir, "loop", "list"))
	if err != nil {
		return "", err
	}
	if got := strings.Count(string(first.Stdout), "\n"); got != loopRecords {
		return "", fmt.Errorf("orbit loop list in %s listed %d loops; want %d", dir, got, loopRecords)
	}
	check := func(name string, want int) func(Sample, error) (Sample, error) {
		return func(s Sample, err error) (Sample, error) {
			if err == nil {
				if got := strings.Count(string(s.Stdout), "\n"); got != want {
					err = fmt.Errorf("%s in %s printed %d lines; want %d", name, dir, got, want)
				}
			}
			return s, err
		}
	}
	files := loopRecords - 2 // what jq and node read: every record file but Cavekit's and ORBIT's
	cs := []*contender{
		{name: "`orbit loop list`", run: func(int) (Sample, error) {
			return check("orbit loop list", loopRecords)(Measure(e.OrbitCmd(dir, "loop", "list")))
		}},
		{name: "`orbit loop list --json`", run: func(int) (Sample, error) { return Measure(e.OrbitCmd(dir, "loop", "list", "--json")) }},
	}
	var notes []string
	var jq, node *contender
	if e.JQ == "" {
		notes = append(notes, MissingTool("jq"))
	} else {
		jq = &contender{name: "`jq` over the same files", run: func(int) (Sample, error) {
			return check("jq", files)(Measure(e.Command(dir, "sh", "-c", loopsJQ)))
		}}
		cs = append(cs, jq)
	}
	nodePath, _ := exec.LookPath("node")
	if nodePath == "" {
		notes = append(notes, MissingTool("node")+" (package `nodejs`)")
	} else {
		node = &contender{name: "`node` reading them as `loops.js list` does", run: func(int) (Sample, error) {
			return check("node", files)(Measure(e.Command(dir, nodePath, "-e", loopsNodeList)))
		}}
		cs = append(cs, node)
	}
	runs := max(e.Runs.Small, minTimedRuns)
	e.Logf("loops: %d rounds of %d commands over %d loop records", runs, len(cs), loopRecords)
	if err := rounds(ctx, runs, cs); err != nil {
		return "", err
	}
	t := Table{Header: []string{"command", "runs", "median", "p90", "min", "max", "CPU (median)", "peak RSS"}}
	stats := map[*contender]Stats{}
	for _, c := range cs {
		st := Summarize(c.samples)
		stats[c] = st
		t.Add(c.name, fmt.Sprint(st.N), Dur(st.Median), Dur(st.P90), Dur(st.Min), Dur(st.Max), Dur(st.MedianCPU), PeakRSS(st.MedianRSSKB, st.ParentRSSKB))
	}
	r := Table{Header: []string{"ratio (medians)", "value", "target", ""}}
	orbitList := stats[cs[0]]
	if jq != nil {
		v := float64(orbitList.Median) / float64(stats[jq].Median)
		r.Add("orbit loop list ÷ jq", fmt.Sprintf("%.2f", v), fmt.Sprintf("≤ %.1f", loopsVsJQTarget), met(v <= loopsVsJQTarget))
		v = float64(orbitList.MedianCPU) / float64(stats[jq].MedianCPU)
		r.Add("orbit loop list ÷ jq, CPU", fmt.Sprintf("%.2f", v), "", "")
	}
	if node != nil {
		v := float64(orbitList.Median) / float64(stats[node].Median)
		r.Add("orbit loop list ÷ node", fmt.Sprintf("%.2f", v), "", "")
	}

	var b strings.Builder
	fmt.Fprintf(&b, "`orbit loop list` over a project holding %d loop records: %d Citadel records (`.planning/loops/*.json`, four runs each, as Citadel's runner writes them) and its daemon, %d CCW loops (a quarter with a tasks file, in either layout), %d Conductor tracks, a Cavekit loop and the ORBIT loop. orbit finds and reads every file, maps each status to the shared vocabulary, checks it for drift, and compares it with what its index last saw (nothing changed in the timed rounds: one query, no write). The stand-ins read the same %d record files and print one line per record: jq (one process, every file on its command line) and node doing what Citadel's `node scripts/loops.js list` does (readdirSync and JSON.parse of each file; the script is the benchmark's, not Citadel's). Whole processes, %d rounds interleaved, after %d untimed rounds; the first `orbit loop list`, which records all %d loops as seen (one append, one transaction), took %s.\n\n",
		loopRecords, (loopRecords-3+2)/3, (loopRecords-3+1)/3, (loopRecords-3)/3, files, runs, warmups, loopRecords, Dur(first.Wall))
	b.WriteString(t.String())
	b.WriteString("\n")
	if strings.Contains(t.String(), "| ≤ ") {
		b.WriteString(rssNote + "\n\n")
	}
	b.WriteString(r.String())
	b.WriteString("\n")
	b.WriteString("Commands, in the project's directory:\n\n```sh\norbit loop list\norbit loop list --json\n" + loopsJQ + "\nnode -e \"$LOOPS_LIST_JS\"   # the script is in bench/suite_loops.go\n```\n\n")
	for _, n := range notes {
		b.WriteString(n + "\n\n")
	}
	return b.String(), nil
}
