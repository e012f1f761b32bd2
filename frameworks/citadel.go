package frameworks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/citadel"
	"github.com/orbit-loop/orbit/loop"
)

// scanCitadel reads .planning/loops/*.json and .planning/daemon.json.
func scanCitadel(root string, s *loop.Scan) {
	dir := filepath.Join(root, citadel.LoopsDir)
	entries, err := listDir(root, dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		problem(s, root, dir, err)
	}
	var paths []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		paths = append(paths, filepath.Join(dir, name))
	}
	readEach(s, root, paths, func(path string, o object) (loop.View, error) { return citadelView(root, path, o) })
	scanAutomations(root, s)
	path := filepath.Join(root, citadel.DaemonFile)
	o, _, err := readObject(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		problem(s, root, path, err)
	default:
		s.Loops = append(s.Loops, daemonView(root, path, o))
	}
}

// citadelView maps a contract record. A status outside the vocabulary is
// returned as an error naming the file (the loop is still listed, as
// unknown).
func citadelView(root, path string, o object) (loop.View, error) {
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	v := loop.View{Framework: loop.Citadel, Path: loop.Rel(root, path)}
	v.AddFile(root, path)
	identify(&v, o, "id", name, false)
	v.Type = o.text("type")
	v.Title = cmp.Or(o.text("title"), v.ID)
	v.NativeStatus = o.text("status")
	var perr error
	norm := strings.ToLower(strings.TrimSpace(v.NativeStatus))
	switch {
	case norm == "" && o.kind("status") == "absent":
		v.Status = "planned"
		v.Warnf("no status: read as planned, as Citadel does")
	case loop.IsStatus(norm):
		v.Status = norm
	default:
		v.Status = loop.Unknown
		perr = fmt.Errorf("%s: status %q is not a loop status (allowed: %s)", loop.Rel(root, path), v.NativeStatus, strings.Join(loop.Statuses(), ", "))
		v.Warnf("status %q is not a loop status", v.NativeStatus)
	}
	if ver, note := o.int("version"); note != "" {
		v.Note(note)
	} else if ver != nil && *ver != citadel.ContractVersion {
		v.Warnf("contract version %d (orbit knows version %d)", *ver, citadel.ContractVersion)
	}
	budget, retry := o.obj("budget"), o.obj("retry")
	var note string
	if budget != nil {
		v.MaxIterations, note = budget.int("maxAttempts")
		v.Note(note)
		if spend, ok, _ := budget.num("maxSpend"); ok {
			v.BudgetLimit = new(spend)
		}
	}
	if v.MaxIterations == nil && retry != nil {
		v.MaxIterations, _ = retry.int("maxAttempts")
	}
	v.UpdatedAt = cmp.Or(o.text("updatedAt"), o.text("createdAt"))
	v.CheckTime("updatedAt", o.text("updatedAt"))
	v.CheckTime("createdAt", o.text("createdAt"))
	runs := o.list("runs")
	var attempts int64
	for i, r := range runs {
		ro, ok := asObject(r)
		if !ok {
			v.Warnf("runs[%d] is not an object", i)
			continue
		}
		rv := loop.RunView{Attempt: ro.text("attempt"), Status: ro.text("status"), Summary: ro.text("summary"),
			Command: ro.text("command"), Verifier: ro.text("verifier"), ExitCode: ro.text("exitCode"),
			StartedAt: ro.text("startedAt"), CompletedAt: ro.text("completedAt")}
		if ev := ro.list("evidence"); len(ev) > 0 {
			rv.Evidence = evidenceText(ev)
		}
		if a, _ := ro.int("attempt"); a != nil && *a > attempts {
			attempts = *a
		}
		if st := strings.ToLower(rv.Status); st != "" && !loop.IsStatus(st) {
			v.Warnf("runs[%d].status %q is not a loop status", i, rv.Status)
		}
		v.Runs = append(v.Runs, rv)
	}
	if len(runs) > 0 || v.MaxIterations != nil {
		v.Iteration = new(attempts)
	}
	if v.Iteration != nil && v.MaxIterations != nil && *v.Iteration > *v.MaxIterations {
		v.Warnf("attempt %d is past the cap of %d", *v.Iteration, *v.MaxIterations)
	}
	trigger, verifier := o.obj("trigger"), o.obj("verifier")
	v.AddDetail("type", v.Type)
	v.AddDetail("template", o.text("template"))
	if trigger != nil {
		t := trigger.text("kind")
		if c := trigger.text("cadence"); c != "" {
			t += " (" + c + ")"
		}
		v.AddDetail("trigger", t)
		v.AddDetail("command", trigger.text("command"))
	}
	if verifier != nil {
		v.AddDetail("verifier", cmp.Or(verifier.text("command"), verifier.text("profile")))
	}
	if l := o.list("stopConditions"); l != nil {
		var conds []string
		for _, c := range l {
			var s string
			if json.Unmarshal(c, &s) == nil {
				conds = append(conds, s)
				if !loop.IsStopReason(s) {
					v.Warnf("stop condition %q is not in the shared stop vocabulary", s)
				}
			}
		}
		v.AddDetail("stop conditions", strings.Join(conds, ", "))
	}
	citadelContractDetails(&v, o)
	v.AddDetail("state path", o.text("statePath"))
	if a := o.text("reviewArtifact"); a != "" {
		v.AddDetail("review artifact", a)
		if p := filepath.Join(root, filepath.FromSlash(a)); exists(p) {
			v.AddFile(root, p)
		}
	}
	v.AddDetail("stopped at", o.text("stoppedAt"))
	v.AddDetail("stop reason", o.text("stopReason"))
	if o.text("stoppedAt") != "" && !loop.IsStopped(v.Status) && v.Status != loop.Unknown {
		v.Warnf("stoppedAt is set (%s) but the status is %s", o.text("stoppedAt"), v.Status)
	}
	if v.Status != loop.Unknown {
		v.Controls = citadelControls(v.Status)
	}
	return v, perr
}

// citadelContractDetails shows the parts of the contract seed 001 asks
// every record to declare that a person reviews: input, scope,
// permissions, budget, retry and recovery, and the notes kept on it.
func citadelContractDetails(v *loop.View, o object) {
	join := func(parts ...string) string {
		var out []string
		for _, p := range parts {
			if p != "" && p != "null" && !strings.HasSuffix(p, ": ") && !strings.HasSuffix(p, ": null") {
				out = append(out, p)
			}
		}
		return strings.Join(out, "; ")
	}
	if in := o.obj("input"); in != nil {
		v.AddDetail("input", join(in.text("goal"), "source: "+in.text("source"), "queue: "+in.text("queue")))
	}
	if sc := o.obj("scope"); sc != nil {
		paths := ""
		if l := sc.list("paths"); len(l) > 0 {
			paths = "paths: " + evidenceText(l)
			paths = strings.ReplaceAll(paths, "\n", ", ")
		}
		v.AddDetail("scope", join(sc.text("description"), paths))
	}
	if pm := o.obj("permissions"); pm != nil {
		v.AddDetail("permissions", join("filesystem: "+pm.text("filesystem"), "network: "+pm.text("network"), "approvals: "+pm.text("approvals")))
	}
	if b := o.obj("budget"); b != nil {
		v.AddDetail("budget", join("max attempts: "+b.text("maxAttempts"), "max spend: "+b.text("maxSpend"), "cost per run: "+b.text("costPerRun")))
	}
	if r := o.obj("retry"); r != nil {
		v.AddDetail("retry", join("max attempts: "+r.text("maxAttempts"), "backoff: "+r.text("backoff")))
	}
	if rc := o.obj("recovery"); rc != nil {
		v.AddDetail("recovery", join("rollback: "+rc.text("rollback"), "continue: "+rc.text("continueCommand")))
	}
	if notes := o.list("notes"); len(notes) > 0 {
		last := evidenceText(notes[len(notes)-1:])
		if lo, ok := asObject(notes[len(notes)-1]); ok && lo.text("at") != "" {
			last += " (" + cmp.Or(lo.text("by"), "?") + ", " + lo.text("at") + ")"
		}
		v.AddDetail("notes", fmt.Sprintf("%d, the last: %s", len(notes), clip(last, 160)))
	}
}

func citadelControls(status string) []string {
	var c []string
	if !loop.IsStopped(status) {
		c = append(c, "stop")
	}
	switch status {
	case "planned", "running", "waiting":
		c = append(c, "pause")
	case "paused", "needs-human-review":
		c = append(c, "resume")
	}
	return c
}

// evidenceText is the text of a run's evidence, for show.
func evidenceText(ev []json.RawMessage) string {
	var parts []string
	for _, e := range ev {
		var s string
		if json.Unmarshal(e, &s) == nil {
			parts = append(parts, s)
			continue
		}
		if eo, ok := asObject(e); ok {
			if t := eo.text("text"); t != "" {
				parts = append(parts, t)
				continue
			}
		}
		parts = append(parts, compact(e))
	}
	return strings.Join(parts, "\n")
}

// scanAutomations reads .planning/codex-automations/*.json, the Codex
// automations Citadel's registry lists beside its own records (seed 001:
// legacy loop state). They are shown, read-only: their format is Codex's.
func scanAutomations(root string, s *loop.Scan) {
	dir := filepath.Join(root, citadel.AutomationsDir)
	entries, err := listDir(root, dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			problem(s, root, dir, err)
		}
		return
	}
	var paths []string
	for _, e := range entries {
		if name := e.Name(); !e.IsDir() && !strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".json") {
			paths = append(paths, filepath.Join(dir, name))
		}
	}
	readEach(s, root, paths, func(path string, o object) (loop.View, error) { return automationView(root, path, o), nil })
}

// automationView maps a Codex automation: id codex-{id}; its status
// (Codex writes ACTIVE or PAUSED) in the shared vocabulary.
func automationView(root, path string, o object) loop.View {
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	v := loop.View{Framework: loop.Citadel, Type: "codex-automation", Path: loop.Rel(root, path)}
	v.AddFile(root, path)
	id := cmp.Or(o.text("id"), name)
	v.ID = "codex-" + id
	if o.text("id") != "" && o.text("id") != name {
		v.Warnf("id %q differs from the file name %q", o.text("id"), name)
	}
	v.Title = cmp.Or(o.text("name"), o.text("title"), id)
	v.NativeStatus = o.text("status")
	switch norm := strings.ToLower(strings.TrimSpace(v.NativeStatus)); {
	case norm == "active" || norm == "enabled":
		v.Status = "running"
	case norm == "disabled":
		v.Status = "paused"
	case loop.IsStatus(norm):
		v.Status = norm
	case norm == "":
		v.Status = "planned"
		v.Warnf("no status: read as planned")
	default:
		v.Status = loop.Unknown
		v.Warnf("status %q is not a Codex automation status (ACTIVE, PAUSED) nor a loop status", v.NativeStatus)
	}
	v.AddDetail("type", v.Type)
	for _, k := range []string{"schedule", "rrule", "cron", "cadence", "interval"} {
		v.AddDetail(k, o.text(k))
	}
	v.AddDetail("prompt", clip(o.text("prompt"), 160))
	if l := o.list("cwds"); len(l) > 0 {
		v.AddDetail("working directories", strings.ReplaceAll(evidenceText(l), "\n", ", "))
	}
	for _, k := range []string{"created_at", "updated_at", "last_run_at", "createdAt", "updatedAt", "lastRunAt"} {
		v.CheckTime(k, o.text(k))
	}
	v.UpdatedAt = loop.Latest(o.text("updated_at"), o.text("updatedAt"), o.text("last_run_at"), o.text("lastRunAt"), o.text("created_at"), o.text("createdAt"))
	v.Controls = []string{}
	return v
}

// daemonView maps Citadel's legacy daemon state, as Citadel's loops.js list
// does: id daemon-{campaignSlug}.
func daemonView(root, path string, o object) loop.View {
	v := loop.View{Framework: loop.Citadel, Type: "daemon", Path: loop.Rel(root, path)}
	v.AddFile(root, path)
	slug := cmp.Or(o.text("campaignSlug"), "active")
	v.ID = "daemon-" + slug
	v.Title = "Daemon: " + cmp.Or(o.text("campaignSlug"), "active campaign")
	v.NativeStatus = o.text("status")
	switch norm := strings.ToLower(v.NativeStatus); {
	case norm == "stopped" && loop.IsStopReason(o.text("stopReason")):
		// How orbit stops the daemon: its own word, the shared one in
		// stopReason.
		v.Status = o.text("stopReason")
	case loop.IsStatus(norm):
		v.Status = norm
	case norm == "completed":
		v.Status = "done"
	default:
		v.Status = loop.Unknown
		v.Warnf("daemon status %q is not a loop status", v.NativeStatus)
	}
	var note string
	v.Iteration, note = o.int("sessionCount")
	v.Note(note)
	if spend, ok, note := o.num("estimatedSpend"); ok {
		v.BudgetUsed = new(spend)
	} else {
		v.Note(note)
	}
	if b, ok, note := o.num("budget"); ok {
		v.BudgetLimit = new(b)
	} else {
		v.Note(note)
	}
	if v.BudgetUsed != nil && v.BudgetLimit != nil && *v.BudgetLimit > 0 && *v.BudgetUsed >= *v.BudgetLimit && v.Status == "running" {
		v.Warnf("spend %v has reached the budget %v but the daemon is running", *v.BudgetUsed, *v.BudgetLimit)
	}
	for _, k := range []string{"startedAt", "lastTickAt", "stoppedAt"} {
		v.CheckTime(k, o.text(k))
	}
	v.UpdatedAt = cmp.Or(o.text("lastTickAt"), o.text("stoppedAt"), o.text("startedAt"))
	v.AddDetail("interval", o.text("interval"))
	v.AddDetail("cooldown", o.text("cooldown"))
	v.AddDetail("cost per session", o.text("costPerSession"))
	v.AddDetail("last tick", o.text("lastTickStatus"))
	v.AddDetail("log entries", fmt.Sprint(len(o.list("log"))))
	v.AddDetail("stopped at", o.text("stoppedAt"))
	v.AddDetail("stop reason", o.text("stopReason"))
	if !loop.IsStopped(v.Status) && v.Status != loop.Unknown {
		v.Controls = []string{"stop"}
	}
	return v
}

// stopCitadel stops a record in Citadel's format, as its stopLoop does:
// status and stopReason the stop word, stoppedAt and updatedAt; the free
// text, when given, is kept as a note (notes is where a contract keeps
// what people say about it), never in stopReason. The legacy daemon
// accepts its own words only: completed for done and verifier-passed, else
// stopped, with the shared word in stopReason.
func stopCitadel(ctx context.Context, root, path, status, reason string, now time.Time, daemon bool) (ch change, err error) {
	err = loop.Edit(ctx, root, path, func(st *loop.State) error {
		if daemon {
			ch.from, _, _ = st.String("status")
		} else if ch.from, err = citadel.RecordStatus(st); err != nil {
			return err
		}
		if loop.IsStopped(strings.ToLower(ch.from)) || (daemon && slices.Contains(daemonStopped, strings.ToLower(ch.from))) {
			return fmt.Errorf("%s has already stopped (%s): %w", st.Path, ch.from, ErrAlreadyStopped)
		}
		ts := loop.ISOTime(now)
		ch.native = status
		if daemon {
			ch.native = daemonStopWord(status)
		}
		fields := []string{"status", "stoppedAt", "stopReason"}
		for _, kv := range []struct {
			k string
			v any
		}{{"status", ch.native}, {"stoppedAt", ts}, {"stopReason", status}} {
			if err := st.Set(kv.k, kv.v); err != nil {
				return err
			}
		}
		if !daemon {
			fields = append(fields, "updatedAt")
			if err := st.Set("updatedAt", ts); err != nil {
				return err
			}
			if reason != "" {
				fields = append(fields, "notes")
				if err := citadel.AddNote(st, ts, "orbit loop stop ("+status+")", reason); err != nil {
					return err
				}
			}
		}
		ch.wrote = []string{wroteFields(root, path, fields...)}
		return nil
	})
	return ch, err
}

// daemonStopped are the legacy daemon's own words for a daemon that has
// ended (docs/DAEMON.md: a tick's status is completed).
var daemonStopped = []string{"stopped", "completed"}

// daemonStopWord is what orbit writes in daemon.json's status for a stop
// with the shared word status: the daemon's own completed for a loop that
// did its work, stopped for any other end.
func daemonStopWord(status string) string {
	if status == "done" || status == "verifier-passed" {
		return "completed"
	}
	return "stopped"
}

// setCitadelStatus pauses (planned, running or waiting -> paused) or
// resumes (paused or needs-human-review -> running) a record: status and
// updatedAt. A resume also clears what the stop wrote (stoppedAt and
// stopReason: the loop event journal keeps them), so that the record reads
// as a running loop's, and says what continues it.
func setCitadelStatus(ctx context.Context, root, path, id, kind string, now time.Time) (ch change, err error) {
	allowed, status := []string{"planned", "running", "waiting"}, "paused"
	if kind == loop.EventResume {
		allowed, status = []string{"paused", "needs-human-review"}, "running"
	}
	err = loop.Edit(ctx, root, path, func(st *loop.State) error {
		if ch.from, err = citadel.RecordStatus(st); err != nil {
			return err
		}
		if !slices.Contains(allowed, ch.from) {
			return wrongState("%s is %s: only a loop that is %s can be %s", st.Path, ch.from, strings.Join(allowed, " or "), verbed(status))
		}
		fields := []string{"status", "updatedAt"}
		if err := st.Set("status", status); err != nil {
			return err
		}
		if kind == loop.EventResume {
			for _, k := range []string{"stoppedAt", "stopReason"} {
				if _, ok := st.Raw(k); ok {
					fields = append(fields, k+" (removed)")
					if err := st.DeleteAt(k); err != nil {
						return err
					}
				}
			}
			ch.next = "a paused `orbit loop run --loop " + id + "` goes on by itself; if none is running, `orbit loop run --loop " + id + "` continues it"
		}
		ch.wrote = []string{wroteFields(root, path, fields...)}
		return st.Set("updatedAt", loop.ISOTime(now))
	})
	return ch, err
}

func verbed(status string) string {
	if status == "paused" {
		return "paused"
	}
	return "resumed"
}
