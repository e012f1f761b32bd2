package hook

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/queue"
	"github.com/orbit-loop/orbit/trust"
)

// Check levels.
const (
	OK      = "ok"
	Warning = "warning"
	Problem = "problem"
)

// Check is one thing doctor looked at.
type Check struct {
	Level   string `json:"level"`
	Subject string `json:"subject"`
	Finding string `json:"finding"`
	Fix     string `json:"fix,omitempty"`
}

// checkCounters says what the state's counters rest on: the baseline
// adopted from before orbit and what was recorded since, or counters orbit
// has not met yet (adopted at its next write).
func checkCounters(ctx context.Context, ix *journal.Index, o ceo.LoopInfo, add func(level, subject, finding, fix string)) {
	h, err := trust.Current(ctx, ix.Store)
	if err != nil {
		add(Problem, project.StateFile, "counters: "+err.Error(), "`orbit rebuild`")
		return
	}
	a, met, err := ix.Store.Adoption(ctx)
	switch {
	case err != nil:
		add(Problem, project.StateFile, "counters: "+err.Error(), "`orbit rebuild`")
	case met && h.Baseline.N > 0:
		add(OK, project.StateFile, fmt.Sprintf("counters: %s (the baseline adopted %s, recorded in %s)", h.AccuracyText(), a.At, loop.EventsFile), "")
	case met:
		add(OK, project.StateFile, "counters: "+h.AccuracyText()+", from the outcomes recorded", "")
	case o.Correct > int64(h.Correct) || o.Incorrect > int64(h.Incorrect):
		add(Warning, project.StateFile, fmt.Sprintf("counters: %d correct, %d incorrect, of which no outcome in the journal explains %d, %d: not yet adopted",
			o.Correct, o.Incorrect, max(o.Correct-int64(h.Correct), 0), max(o.Incorrect-int64(h.Incorrect), 0)),
			"the next Stop or decision adopts them as a baseline from before orbit (never zeroed); `orbit trust` then shows it")
	}
}

// Doctor checks a project the way a newcomer would need: files present and
// parseable, index in step with the journal, hooks registered and pointing
// at a binary that exists, loop state sane. Each finding comes with its fix.
// home is the user's home directory, whose settings and installed plugins
// may register other Stop hooks ("" to look at the project alone).
func Doctor(ctx context.Context, ix *journal.Index, now time.Time, home string) ([]Check, error) {
	var cs []Check
	add := func(level, subject, finding, fix string) {
		cs = append(cs, Check{Level: level, Subject: subject, Finding: finding, Fix: fix})
	}
	p := ix.Project

	// The journal and the index.
	if fi, err := os.Stat(p.Path(project.DecisionsFile)); err != nil {
		add(Problem, project.DecisionsFile, "missing", "`orbit init` creates it")
	} else {
		rep, err := ix.Verify(ctx)
		if err != nil {
			return nil, err
		}
		problems, warns, unsynced := 0, 0, 0
		first := ""
		for _, f := range rep.Findings {
			switch {
			case f.Code == "unsynced":
				unsynced++
			case !f.Benign():
				if problems == 0 {
					first = f.Error()
				}
				problems++
			default:
				warns++
			}
		}
		switch {
		case problems > 0:
			add(Problem, project.DecisionsFile, fmt.Sprintf("%d %s between the journal and the index, first: %s", problems, journal.Plural(problems, "problem", "problems"), first),
				"`orbit verify` lists them; `orbit sync` rebuilds the index from a rewritten journal and saves what it held")
		case unsynced > 0:
			add(OK, project.DecisionsFile, fmt.Sprintf("%d bytes; lines not yet indexed (the next command syncs them)", fi.Size()), "")
		default:
			add(OK, project.DecisionsFile, fmt.Sprintf("%d bytes, in step with the index (%d %s)", fi.Size(), warns, journal.Plural(warns, "warning", "warnings")), "")
		}
	}

	// The loop's state and lock.
	o, _, err := ceo.ReadLoopState(p.Root, project.StateFile)
	switch {
	case err != nil:
		add(Problem, project.StateFile, err.Error(), "fix the JSON, or `orbit loop stop` then `orbit loop start` to rewrite it")
	case !o.HasState:
		add(OK, project.StateFile, "absent: no ORBIT loop started", "")
	case !o.Active:
		add(OK, project.StateFile, fmt.Sprintf("loop stopped (%s) at iteration %d", orDash(o.StopReason), o.Iteration), "")
	}
	if o.HasState && o.StartedUnreadable {
		since := "no first sight recorded yet: the next Stop or decision records one"
		if o.FirstSeenAt != "" {
			since = "the time limit counts from " + o.FirstSeenAt + ", when orbit first saw the loop"
		}
		add(Problem, project.StateFile, fmt.Sprintf("started_at %q is not a time (%s)", o.StartedAt, since),
			"set started_at to when the loop began (RFC 3339), or `orbit loop start --force`")
	}
	if o.HasState {
		checkCounters(ctx, ix, o, add)
	}
	switch {
	case err != nil || !o.HasState || !o.Active:
	default:
		add(OK, project.StateFile, fmt.Sprintf("loop active, iteration %d of %d", o.Iteration, o.MaxIterations), "")
		if err := o.CheckStart(now); err != nil {
			add(Problem, project.StateFile, err.Error(), "")
		}
		if o.MaxIterations > 0 && o.Iteration > o.MaxIterations {
			add(Problem, project.StateFile, fmt.Sprintf("iteration %d is past its cap of %d", o.Iteration, o.MaxIterations), "`orbit loop stop`, or `orbit loop start --force` with a higher --max-iterations")
		}
		if d := o.Deadline(); !d.IsZero() && now.After(d) {
			add(Warning, project.StateFile, fmt.Sprintf("the time limit passed %s ago", now.Sub(d).Round(time.Second)),
				"the next Stop hook tears the loop down; `orbit loop stop` does it now")
		}
		lk, err := orbitloop.ReadLock(p.Root)
		switch {
		case err != nil:
			add(Problem, orbitloop.LockFile, err.Error(), "delete it: the next Stop hook takes the loop")
		case lk == nil:
			add(Warning, orbitloop.LockFile, "no session holds the active loop yet", "the first Stop hook takes it; if the loop's session ended, `orbit loop stop`")
		case lk.Stale(now):
			add(Warning, orbitloop.LockFile, fmt.Sprintf("held by %s, whose heartbeat is %s old (stale)", lk.Owner, now.Sub(lk.HeartbeatAt).Round(time.Second)),
				"a Stop hook from another session takes it over; `orbit loop stop` if nobody runs the loop")
		default:
			add(OK, orbitloop.LockFile, fmt.Sprintf("held by %s, heartbeat %s ago", lk.Owner, now.Sub(lk.HeartbeatAt).Round(time.Second)), "")
		}
	}

	// The pending queue.
	if q, err := queue.Read(p.Root, project.PendingFile); err != nil {
		add(Problem, project.PendingFile, err.Error(), "fix the file: nothing in it can be decided until it is a JSON array of requests")
	} else if q.Exists {
		add(OK, project.PendingFile, fmt.Sprintf("%d pending %s", len(q.Requests), journal.Plural(len(q.Requests), "request", "requests")), "")
		for _, v := range q.Invalid {
			add(Problem, project.PendingFile, v.Error(), "fix the item: it stays in the queue untouched, and every other item is decided")
		}
	}

	// The hooks, in settings.json or settings.local.json.
	reg, err := ReadRegistration(p.Root)
	_, serr := os.Lstat(p.Path(SettingsFile))
	_, lerr := os.Lstat(p.Path(LocalSettingsFile))
	switch {
	case err == nil && os.IsNotExist(serr) && os.IsNotExist(lerr):
		add(Warning, SettingsFile, "absent: no hook drives the ORBIT loop", "`orbit init --claude` registers orbit's hooks")
	case err != nil:
		add(Problem, SettingsFile, err.Error(), "fix the JSON; `orbit init --claude` keeps the rest of the file")
	default:
		for _, ev := range Events {
			r, ok := reg.Orbit[ev.Event]
			switch {
			case !ok:
				add(Warning, SettingsFile, fmt.Sprintf("no %s hook runs orbit", ev.Event), "`orbit init --claude` registers it")
			case !binaryExists(strings.Fields(r.Command)[0]):
				add(Problem, r.File, fmt.Sprintf("the %s hook runs %q, which does not exist", ev.Event, strings.Fields(r.Command)[0]), "install orbit on PATH, or `orbit init --claude` from the orbit you use")
			default:
				add(OK, r.File, fmt.Sprintf("%s hook: %s", ev.Event, r.Command), "")
			}
		}
		for _, r := range reg.CEO {
			add(Problem, fmt.Sprintf("%s:%d", r.File, r.Line), fmt.Sprintf("hooks.Stop still runs %q, the ORBIT CEO loop's own Stop hook: with orbit's, two blocking Stop hooks race and both advance the iteration", r.Command),
				"`orbit init --claude --replace-ceo-hook` replaces it by orbit's (`--uninstall` puts it back)")
		}
		for _, r := range reg.Others {
			add(Warning, r.File, fmt.Sprintf("hooks.Stop also runs %q: two blocking Stop hooks race (each blocks the stop and re-feeds its own prompt), so remove it if it drives a loop", r.Command), "remove the other blocking Stop hook")
		}
		for _, w := range PluginStopHooks(p.Root, home) {
			add(Warning, SettingsFile, w, "disable the plugin for this project (enabledPlugins in .claude/settings.json), or stop its loop before orbit's")
		}
	}

	// orbit's MCP server, when registered.
	data, err := ReadSettings(p.Root, MCPFile)
	name, command, jerr := RegisteredMCP(data)
	switch {
	case err != nil:
		add(Problem, MCPFile, err.Error(), "")
	case jerr != nil:
		add(Problem, MCPFile, "not valid JSON: "+jerr.Error(), "fix the JSON; `orbit init --claude --mcp` keeps the rest of the file")
	case name == "":
		add(OK, MCPFile, "orbit's MCP server is not registered: agents record with the CLI, or a JSON line without Bash", "")
		if _, _, warns, err := InstallMCP(p.Path(MCPFile), data, "orbit"); err == nil {
			for _, w := range warns {
				add(Warning, MCPFile, w, "register orbit's server under another name: {\"command\": \"orbit\", \"args\": [\"mcp\"]}")
			}
		}
	default:
		if bin := strings.Fields(command)[0]; !binaryExists(bin) {
			add(Problem, MCPFile, fmt.Sprintf("MCP server %q runs %q, which does not exist", name, bin), "install orbit on PATH, or `orbit init --claude --mcp` from the orbit you use")
		} else {
			add(OK, MCPFile, fmt.Sprintf("MCP server %q: %s", name, command), "")
		}
	}

	// The hook's last error.
	if line := lastError(p.Root); line != "" {
		add(Warning, project.HookLogFile, "last error: "+line, "see the log; the hook reports every failure there")
	}
	return cs, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func binaryExists(bin string) bool {
	if filepath.IsAbs(bin) {
		fi, err := os.Stat(bin)
		return err == nil && !fi.IsDir()
	}
	_, err := exec.LookPath(bin)
	return err == nil
}

// logTail is how much of the hook log's end doctor reads.
const logTail = 1 << 20

// lastError returns the last line of the hook log that reports an error,
// among the lines of its last MiB.
func lastError(root string) string {
	f, err := project.Open(root, project.HookLogFile)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > logTail {
		if _, err := f.Seek(fi.Size()-logTail, io.SeekStart); err != nil {
			return ""
		}
	}
	last := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), " error=") {
			last = sc.Text()
		}
	}
	return last
}
