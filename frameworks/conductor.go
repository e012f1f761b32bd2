package frameworks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
)

// Conductor's files (seed 004), relative to the project root.
const (
	ConductorTracksDir = "conductor/tracks"
	ConductorConfig    = "conductor/config.json"
)

// DefaultMaxFixCycles is the orchestrator's fix cycle limit when
// conductor/config.json sets none (seed 004: config.max_fix_cycles || 5).
const DefaultMaxFixCycles = 5

// DefaultMaxIterations is seed 004's iteration limit (resolution trigger 5:
// "Max iterations (50) -> Complete track with warnings").
const DefaultMaxIterations = 50

// ConductorTracksFile is Conductor's track registry, which a completion
// updates (seed 004: "Update tracks.md").
const ConductorTracksFile = "conductor/tracks.md"

// conductorConfig is what conductor/config.json sets (seed 004: mode
// agentic when the file is absent, max_fix_cycles || 5).
type conductorConfig struct {
	mode, modeFrom    string
	maxFix            int64
	maxFixFrom        string
	maxIterations     int64
	maxIterationsFrom string
}

func readConductorConfig(root string, s *loop.Scan) conductorConfig {
	c := conductorConfig{mode: "agentic", modeFrom: "seed 004 default, no config.json", maxFix: DefaultMaxFixCycles, maxFixFrom: "seed 004 default",
		maxIterations: DefaultMaxIterations, maxIterationsFrom: "seed 004 default"}
	path := filepath.Join(root, ConductorConfig)
	cfg, _, err := readObject(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return c
	case err != nil:
		problem(s, root, path, err)
		return c
	}
	c.modeFrom = "seed 004 default: config.json sets none"
	if m := cfg.text("mode"); m != "" {
		c.mode, c.modeFrom = m, ConductorConfig
	}
	if n, _ := cfg.int("max_fix_cycles"); n != nil && *n > 0 {
		c.maxFix, c.maxFixFrom = *n, ConductorConfig
	}
	if n, _ := cfg.int("max_iterations"); n != nil && *n > 0 {
		c.maxIterations, c.maxIterationsFrom = *n, ConductorConfig
	}
	return c
}

// conductorModes are conductor/config.json's modes (seed 004).
var conductorModes = []string{"agentic", "human-in-the-loop"}

// The orchestrator's steps and step statuses (seed 004).
var (
	conductorSteps = []string{"PLAN", "EVALUATE_PLAN", "EXECUTE", "PARALLEL_EXECUTE", "EVALUATE_EXECUTION", "FIX",
		"BUSINESS_SYNC", "COMPLETE", "ESCALATE"}
	conductorStepStatuses = []string{"NOT_STARTED", "IN_PROGRESS", "PASSED", "FAILED", "BLOCKED", "PASSED_WITH_WARNINGS"}
	// conductorDrift are step statuses seen in real tracks that seed 004
	// does not define, with the shared word they plainly mean.
	conductorDrift = map[string]string{"WAITING_FOR_USER": "needs-human-review"}
)

func scanConductor(root string, s *loop.Scan) {
	dir := filepath.Join(root, ConductorTracksDir)
	entries, err := listDir(root, dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			problem(s, root, dir, err)
		}
		return
	}
	cfg := readConductorConfig(root, s)
	var paths []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		paths = append(paths, filepath.Join(dir, e.Name(), "metadata.json"))
	}
	readEach(s, root, paths, func(path string, o object) (loop.View, error) {
		return conductorView(root, path, o, cfg), nil
	})
}

func conductorView(root, path string, o object, cfg conductorConfig) loop.View {
	maxFix, maxFrom := cfg.maxFix, cfg.maxFixFrom
	dirName := filepath.Base(filepath.Dir(path))
	v := loop.View{Framework: loop.Conductor, Path: loop.Rel(root, path)}
	v.AddFile(root, path)
	identify(&v, o, "track_id", dirName, true)
	v.Title = cmp.Or(o.text("name"), v.ID)
	v.Type = o.text("type")
	top := o.text("status")
	v.AddDetail("track status", top)
	v.AddDetail("type", v.Type)
	v.AddDetail("priority", o.text("priority"))
	v.AddDetail("created at", o.text("created_at"))
	v.AddDetail("mode", cfg.mode+" ("+cfg.modeFrom+")")
	if !slices.Contains(conductorModes, cfg.mode) {
		v.Warnf("%s mode %q is not one of seed 004's (%s)", ConductorConfig, cfg.mode, strings.Join(conductorModes, ", "))
	}
	v.AddDetail("completed at", o.text("completed_at"))
	for _, k := range []string{"depends_on", "dependencies"} {
		if l := o.list(k); len(l) > 0 {
			var deps []string
			for _, d := range l {
				var s string
				if json.Unmarshal(d, &s) == nil {
					deps = append(deps, s)
				}
			}
			v.AddDetail("depends on", strings.Join(deps, ", "))
		}
	}
	for _, k := range []string{"created_at", "updated_at", "completed_at"} {
		v.CheckTime(k, o.text(k))
	}
	updated := []string{o.text("updated_at"), o.text("completed_at"), o.text("created_at")}

	ls := o.obj("loop_state")
	if ls == nil {
		if o.kind("loop_state") != "absent" {
			v.Warnf("loop_state is %s, not an object", o.kind("loop_state"))
		}
		v.NativeStatus = top
		v.Status = conductorTrackStatus(&v, top)
	} else {
		step, stepStatus := ls.text("current_step"), ls.text("step_status")
		v.NativeStatus = step + "/" + stepStatus
		v.AddDetail("step", step)
		v.AddDetail("step status", stepStatus)
		v.AddDetail("step started", ls.text("step_started_at"))
		v.AddDetail("execution mode", ls.text("execution_mode"))
		updated = append(updated, ls.text("step_started_at"))
		if step != "" && !slices.Contains(conductorSteps, step) {
			v.Warnf("current_step %q is not an orchestrator step (%s)", step, strings.Join(conductorSteps, ", "))
		}
		var note string
		v.Iteration, note = ls.int("fix_cycle_count")
		v.Note(note)
		if n, _ := ls.int("max_fix_cycles"); n != nil {
			maxFix, maxFrom = *n, "metadata.json"
		}
		v.MaxIterations = new(maxFix)
		v.AddDetail("fix cycle limit", fmt.Sprintf("%d (%s)", maxFix, maxFrom))
		switch {
		case v.Iteration != nil && *v.Iteration > maxFix:
			v.Warnf("fix cycle %d is past the cap of %d", *v.Iteration, maxFix)
		case v.Iteration != nil && *v.Iteration == maxFix && step != "COMPLETE":
			v.Warnf("fix cycle %d has reached the cap of %d: the orchestrator completes the track with warnings instead of fixing again (seed 004)", *v.Iteration, maxFix)
		}
		conductorIterations(&v, ls, cfg, step)
		conductorBoard(&v, o, ls)
		if cps := ls.obj("checkpoints"); cps != nil {
			var parts []string
			for _, k := range cps.keys() {
				cp := cps.obj(k)
				parts = append(parts, k+" "+cp.text("status"))
				updated = append(updated, cp.text("completed_at"), cp.text("started_at"))
			}
			v.AddDetail("checkpoints", strings.Join(parts, ", "))
		}
		v.Status = conductorLoopStatus(&v, o, ls, step, stepStatus)
		// The track's own status should agree with the loop state.
		topDone := slices.Contains([]string{"complete", "completed", "done"}, strings.ToLower(top))
		switch {
		case topDone && step != "COMPLETE":
			v.Warnf("the track is %q but its loop is at %s", top, v.NativeStatus)
		case !topDone && top != "" && step == "COMPLETE" && strings.HasPrefix(stepStatus, "PASSED") && o.text("stop_reason") == "":
			v.Warnf("the loop is at %s but the track is %q", v.NativeStatus, top)
		}
	}
	if bl := o.list("blockers"); len(bl) > 0 {
		active := 0
		for _, b := range bl {
			if bo, ok := asObject(b); ok && bo.text("status") == "ACTIVE" {
				active++
			}
		}
		v.AddDetail("blockers", fmt.Sprintf("%d (%d active)", len(bl), active))
	}
	if w := o.list("warnings"); len(w) > 0 {
		v.AddDetail("warnings", fmt.Sprint(len(w)))
	}
	if ad := o.list("autonomous_decisions"); len(ad) > 0 {
		v.AddDetail("autonomous decisions", fmt.Sprint(len(ad)))
	}
	v.AddDetail("stop reason", o.text("stop_reason"))
	v.UpdatedAt = loop.Latest(updated...)
	if !loop.IsStopped(v.Status) {
		v.Controls = []string{"stop"}
	}
	return v
}

// conductorLoopStatus maps loop_state's step and step status.
func conductorLoopStatus(v *loop.View, o, ls object, step, stepStatus string) string {
	known := slices.Contains(conductorStepStatuses, stepStatus)
	if !known {
		if word, ok := conductorDrift[stepStatus]; ok {
			v.Warnf("step_status %q is not one of seed 004's (%s); read as %s", stepStatus, strings.Join(conductorStepStatuses, ", "), word)
			return word
		}
		v.Warnf("step_status %q is not one of seed 004's (%s)", stepStatus, strings.Join(conductorStepStatuses, ", "))
		return loop.Unknown
	}
	if step == "COMPLETE" {
		if r := o.text("stop_reason"); loop.IsStopReason(r) {
			return r
		}
		switch stepStatus {
		case "PASSED", "PASSED_WITH_WARNINGS":
			return "done"
		case "IN_PROGRESS":
			return "running"
		case "FAILED", "BLOCKED":
			return "blocked"
		default:
			return "waiting"
		}
	}
	if step == "ESCALATE" {
		return "needs-human-review"
	}
	switch stepStatus {
	case "IN_PROGRESS":
		return "running"
	case "BLOCKED":
		return "blocked"
	case "NOT_STARTED":
		fix, _ := ls.int("fix_cycle_count")
		if (step == "" || step == "NOT_STARTED" || step == "PLAN") && (fix == nil || *fix == 0) {
			return "planned"
		}
		return "waiting"
	default: // PASSED, FAILED, PASSED_WITH_WARNINGS: the orchestrator moves on
		return "waiting"
	}
}

// conductorTrackStatus maps a track's own status when it has no loop_state.
func conductorTrackStatus(v *loop.View, top string) string {
	switch strings.ToLower(strings.ReplaceAll(top, "-", "_")) {
	case "complete", "completed", "done":
		return "done"
	case "new", "planned", "not_started":
		return "planned"
	case "in_progress":
		return "running"
	case "blocked":
		return "blocked"
	}
	v.Warnf("track status %q is not one orbit knows (and there is no loop_state)", top)
	return loop.Unknown
}

// conductorIterations shows the orchestrator's iteration count against
// the limit (seed 004: 50, then the track completes with warnings). Seed
// 004 names no field for the count; the ones real tracks use are read.
func conductorIterations(v *loop.View, ls object, cfg conductorConfig, step string) {
	for _, k := range []string{"iteration", "iterations", "iteration_count", "agent_runs"} {
		n, note := ls.int(k)
		v.Note(note)
		if n == nil {
			continue
		}
		v.AddDetail("iterations", fmt.Sprintf("%d of %d (loop_state.%s; limit: %s)", *n, cfg.maxIterations, k, cfg.maxIterationsFrom))
		if *n >= cfg.maxIterations && step != "COMPLETE" {
			v.Warnf("%d iterations have reached the limit of %d: the orchestrator completes the track with warnings (seed 004)", *n, cfg.maxIterations)
		}
		return
	}
	v.AddDetail("iteration limit", fmt.Sprintf("%d (%s)", cfg.maxIterations, cfg.maxIterationsFrom))
}

// conductorBoard shows the Board of Directors' sessions, the conditions
// they set, and the parallel executor's state (seed 004 v3).
func conductorBoard(v *loop.View, o, ls object) {
	if bs := ls.list("board_sessions"); bs != nil {
		text := fmt.Sprint(len(bs))
		if len(bs) > 0 {
			if last, ok := asObject(bs[len(bs)-1]); ok {
				text += fmt.Sprintf(" (the last: %s at %s, %s", cmp.Or(last.text("verdict"), "no verdict"), cmp.Or(last.text("checkpoint"), "?"), cmp.Or(last.text("timestamp"), "no time"))
				if n := len(last.list("conditions")); n > 0 {
					text += fmt.Sprintf(", %d conditions", n)
				}
				text += ")"
			}
		}
		v.AddDetail("board sessions", text)
	} else if ls.kind("board_sessions") != "absent" && ls.kind("board_sessions") != "null" {
		v.Warnf("loop_state.board_sessions is %s, not an array", ls.kind("board_sessions"))
	}
	if bc := o.list("board_conditions"); len(bc) > 0 {
		var parts []string
		for _, c := range bc {
			var s string
			if json.Unmarshal(c, &s) != nil {
				s = compact(c)
			}
			parts = append(parts, clip(s, 80))
		}
		v.AddDetail("board conditions", strings.Join(parts, "; "))
	}
	if ps := ls.obj("parallel_state"); ps != nil {
		var parts []string
		for _, k := range []string{"total_workers_spawned", "completed_workers", "failed_workers", "parallel_groups_completed"} {
			if t := ps.text(k); t != "" {
				parts = append(parts, strings.ReplaceAll(k, "_", " ")+" "+t)
			}
		}
		v.AddDetail("parallel", strings.Join(parts, ", "))
		if n, _ := ps.int("failed_workers"); n != nil && *n > 0 {
			v.Warnf("%d parallel workers failed", *n)
		}
	}
}

// stopConductor ends a track in seed 004's own terms:
//
//   - done, verifier-passed: the Track Completion Protocol: status
//     complete, completed_at, loop_state COMPLETE / PASSED, the track moved
//     to tracks.md's completed table with the date.
//   - blocked: loop_state.step_status BLOCKED with an ACTIVE blocker (what
//     the orchestrator reads on resumption), the track's status blocked.
//   - any other word: completeWithWarnings: COMPLETE /
//     PASSED_WITH_WARNINGS, a warning naming the unresolved issue, the track
//     marked "Done (with warnings)" in tracks.md, a completed_with_warnings
//     autonomous decision, and the completion protocol's status and
//     completed_at.
//
// orbit adds stop_reason (the shared word), so the unified view shows why
// the track ended.
func stopConductor(ctx context.Context, root, path, status, reason string, now time.Time) (ch change, err error) {
	ts := loop.ISOTime(now)
	var fields []string
	var trackID, name string
	err = loop.Edit(ctx, root, path, func(st *loop.State) error {
		set := func(v any, path ...string) error {
			fields = append(fields, strings.Join(path, "."))
			return st.SetAt(path, v)
		}
		trackID, _, _ = st.String("track_id")
		name, _, _ = st.String("name")
		top, _, _ := st.String("status")
		step, _, _ := st.StringAt("loop_state", "current_step")
		stepStatus, _, _ := st.StringAt("loop_state", "step_status")
		ch.from = step + "/" + stepStatus
		if raw, ok := st.Raw("loop_state"); !ok || isNull(raw) {
			ch.from = top
			if err := set(map[string]any{}, "loop_state"); err != nil {
				return err
			}
			fields = fields[:len(fields)-1]
		} else if raw[0] != '{' {
			return fmt.Errorf("%s: loop_state is not an object; left as it is", st.Path)
		}
		switch status {
		case "blocked":
			ch.native = cmp.Or(step, "PLAN") + "/BLOCKED"
			if step == "" {
				if err := set("PLAN", "loop_state", "current_step"); err != nil {
					return err
				}
			}
			if err := set("BLOCKED", "loop_state", "step_status"); err != nil {
				return err
			}
			blocker := map[string]string{"description": cmp.Or(reason, "blocked by an operator (orbit loop stop)"), "status": "ACTIVE", "timestamp": ts}
			if err := appendTo(st, &fields, blocker, "blockers"); err != nil {
				return err
			}
			if err := set("blocked", "status"); err != nil {
				return err
			}
		default:
			passed := status == "done" || status == "verifier-passed"
			ch.native = "COMPLETE/PASSED_WITH_WARNINGS"
			if passed {
				ch.native = "COMPLETE/PASSED"
			}
			if err := set("COMPLETE", "loop_state", "current_step"); err != nil {
				return err
			}
			if err := set(strings.TrimPrefix(ch.native, "COMPLETE/"), "loop_state", "step_status"); err != nil {
				return err
			}
			if !passed {
				warning := fmt.Sprintf("%s: %s (orbit loop stop)", status, cmp.Or(reason, "stopped by an operator"))
				if err := appendTo(st, &fields, warning, "warnings"); err != nil {
					return err
				}
				decision := map[string]string{"timestamp": ts, "type": "completed_with_warnings", "context": cmp.Or(step, top, "NOT_STARTED"),
					"decision":  "Completed the track with warnings: " + status,
					"reasoning": cmp.Or(reason, "An operator stopped the loop through orbit (orbit loop stop --status "+status+")")}
				if err := appendTo(st, &fields, decision, "autonomous_decisions"); err != nil {
					return err
				}
			}
			if err := set("complete", "status"); err != nil {
				return err
			}
			if err := set(ts, "completed_at"); err != nil {
				return err
			}
		}
		if err := set(status, "stop_reason"); err != nil {
			return err
		}
		if _, ok := st.Raw("updated_at"); ok {
			return set(ts, "updated_at")
		}
		return nil
	})
	if err != nil {
		return ch, err
	}
	ch.wrote = []string{wroteFields(root, path, fields...)}
	ch.wrote = append(ch.wrote, updateTracksFile(ctx, root, cmp.Or(trackID, filepath.Base(filepath.Dir(path))), name, status, reason, now))
	return ch, nil
}

// appendTo appends v to the array at key, made when absent.
func appendTo(st *loop.State, fields *[]string, v any, key string) error {
	*fields = append(*fields, key)
	raw, ok := st.Raw(key)
	switch {
	case !ok || isNull(raw):
		return st.Set(key, []any{v})
	case raw[0] != '[':
		return fmt.Errorf("%s: %s is not an array; left as it is", st.Path, key)
	}
	return st.AppendAt([]string{key}, v)
}

// updateTracksFile updates the track's row in conductor/tracks.md as seed
// 004 does: a completion moves it to the table of completed ("Done")
// tracks with the date; completeWithWarnings marks it "Done (with
// warnings)"; a blocked track's status cell says blocked. Only the row (and
// a placeholder row of an emptied or filled table) changes; every other
// line stays as it was. It returns what it did, for the stop's report.
func updateTracksFile(ctx context.Context, root, id, name, status, reason string, now time.Time) string {
	path := filepath.Join(root, ConductorTracksFile)
	unlock, err := loop.Lock(ctx, root, path)
	if err != nil {
		return ConductorTracksFile + ": not updated: " + err.Error()
	}
	defer unlock()
	data, err := readFile(path, nil)
	if errors.Is(err, os.ErrNotExist) {
		return ConductorTracksFile + ": absent; nothing to update"
	}
	if err != nil {
		return ConductorTracksFile + ": not updated: " + err.Error()
	}
	lines := strings.SplitAfter(string(data), "\n")
	tables := mdTables(lines)
	var from *mdTable
	row := -1
	for i := range tables {
		if r := tables[i].find(lines, id); r >= 0 {
			from, row = &tables[i], r
			break
		}
	}
	if from == nil {
		return fmt.Sprintf("%s: no row for %s; left as it is", ConductorTracksFile, id)
	}
	var did string
	switch {
	case status == "blocked":
		lines[row] = from.setCell(lines[row], "status", "blocked")
		did = "the track's status set to blocked"
	case status == "done" || status == "verifier-passed":
		to := -1
		for i := range tables {
			if &tables[i] != from && tables[i].done {
				to = i
				break
			}
		}
		if to < 0 {
			lines[row] = from.setCell(lines[row], "status", "Done")
			did = "the track marked Done (no table of completed tracks to move it to)"
			break
		}
		dest := &tables[to]
		vals := map[string]string{"track id": from.cell(lines[row], "track id"), "name": cmp.Or(from.cell(lines[row], "name"), name),
			"completed": now.UTC().Format(time.DateOnly), "completed on": now.UTC().Format(time.DateOnly), "date": now.UTC().Format(time.DateOnly),
			"summary": cmp.Or(reason, "done (orbit loop stop)"), "result": cmp.Or(reason, "done (orbit loop stop)")}
		newRow := dest.row(lines, vals)
		// Insert into the destination, then take the row out of the
		// source (placeholders replace or fill emptied tables).
		lines = dest.insert(lines, newRow)
		tables = mdTables(lines)
		for i := range tables {
			if r := tables[i].find(lines, id); r >= 0 && !tables[i].done {
				lines = tables[i].remove(lines, r)
				break
			}
		}
		did = "the track moved to the completed tracks with " + now.UTC().Format(time.DateOnly)
	default:
		lines[row] = from.setCell(lines[row], "status", "Done (with warnings)")
		lines[row] = from.setCell(lines[row], "step", "COMPLETE")
		did = "the track marked Done (with warnings)"
	}
	out := strings.Join(lines, "")
	if out == string(data) {
		return ConductorTracksFile + ": " + did + " (no change needed)"
	}
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := journal.WriteFileAtomic(root, path, []byte(out), perm); err != nil {
		return ConductorTracksFile + ": not updated: " + err.Error()
	}
	return ConductorTracksFile + ": " + did
}

// mdTable is a markdown table in a file's lines: its header's column
// names (lower case), the index of its first and last lines, and whether it
// lists completed tracks (its heading says Done or Completed).
type mdTable struct {
	cols        []string
	first, last int
	done        bool
}

// mdTables finds the tables of a markdown file.
func mdTables(lines []string) []mdTable {
	var ts []mdTable
	heading := ""
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "#") {
			heading = strings.ToLower(l)
			continue
		}
		if !strings.HasPrefix(l, "|") || i+1 >= len(lines) || !mdSeparator.MatchString(strings.TrimSpace(lines[i+1])) {
			continue
		}
		t := mdTable{first: i, done: strings.Contains(heading, "done") || strings.Contains(heading, "complete")}
		for _, c := range mdCells(lines[i]) {
			t.cols = append(t.cols, strings.ToLower(strings.TrimSpace(c)))
		}
		j := i + 2
		for j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "|") {
			j++
		}
		t.last = j - 1
		ts = append(ts, t)
		i = j - 1
	}
	return ts
}

var mdSeparator = regexp.MustCompile(`^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$`)

// mdCells splits a table row into its cells' text (unescaped pipes split).
func mdCells(line string) []string {
	l := strings.TrimSpace(line)
	l = strings.TrimPrefix(l, "|")
	l = strings.TrimSuffix(l, "|")
	var cells []string
	start := 0
	for i := 0; i < len(l); i++ {
		if l[i] == '\\' {
			i++
			continue
		}
		if l[i] == '|' {
			cells = append(cells, l[start:i])
			start = i + 1
		}
	}
	return append(cells, l[start:])
}

func cellText(c string) string { return strings.Trim(strings.TrimSpace(c), "`") }

// find returns the line of the data row whose first cell is id, or -1.
func (t mdTable) find(lines []string, id string) int {
	for i := t.first + 2; i <= t.last; i++ {
		if cs := mdCells(lines[i]); len(cs) > 0 && cellText(cs[0]) == id {
			return i
		}
	}
	return -1
}

func (t mdTable) col(name string) int { return slices.Index(t.cols, name) }

// cell returns a row's cell under the column name, as written.
func (t mdTable) cell(line, name string) string {
	cs := mdCells(line)
	if i := t.col(name); i >= 0 && i < len(cs) {
		return strings.TrimSpace(cs[i])
	}
	return ""
}

// setCell returns the row with the cell under the column name set to
// value (backquoted when the cell was), every other byte kept.
func (t mdTable) setCell(line, name, value string) string {
	i := t.col(name)
	if i < 0 {
		return line
	}
	cs := mdCells(line)
	if i >= len(cs) {
		return line
	}
	old := strings.TrimSpace(cs[i])
	if strings.HasPrefix(old, "`") && strings.HasSuffix(old, "`") && len(old) > 1 {
		value = "`" + value + "`"
	}
	lead := cs[i][:len(cs[i])-len(strings.TrimLeft(cs[i], " "))]
	trail := cs[i][len(strings.TrimRight(cs[i], " ")):]
	if lead == "" {
		lead = " "
	}
	if trail == "" {
		trail = " "
	}
	cs[i] = lead + value + trail
	eol := line[len(strings.TrimRight(line, "\r\n")):]
	indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
	return indent + "|" + strings.Join(cs, "|") + "|" + eol
}

// row renders a new data row with vals by column name.
func (t mdTable) row(lines []string, vals map[string]string) string {
	cells := make([]string, len(t.cols))
	for i, c := range t.cols {
		cells[i] = " " + strings.ReplaceAll(vals[c], "|", `\|`) + " "
	}
	eol := lines[t.first][len(strings.TrimRight(lines[t.first], "\r\n")):]
	if eol == "" {
		eol = "\n"
	}
	return "|" + strings.Join(cells, "|") + "|" + eol
}

// placeholder reports whether a data row says the table is empty
// ("(none)", "(none yet)", "_None._").
func placeholder(line string) bool {
	cs := mdCells(line)
	return len(cs) > 0 && strings.HasPrefix(strings.ToLower(strings.Trim(cellText(cs[0]), "_ ")), "(none")
}

// insert adds row at the end of the table, in place of its placeholder row.
func (t mdTable) insert(lines []string, row string) []string {
	for i := t.first + 2; i <= t.last; i++ {
		if placeholder(lines[i]) {
			lines[i] = row
			return lines
		}
	}
	if !strings.HasSuffix(lines[t.last], "\n") {
		lines[t.last] += "\n"
	}
	return slices.Insert(lines, t.last+1, row)
}

// remove takes the data row at line i out, leaving a placeholder row when
// it was the last.
func (t mdTable) remove(lines []string, i int) []string {
	if t.last == t.first+2 {
		vals := map[string]string{}
		if len(t.cols) > 0 {
			vals[t.cols[0]] = "(none)"
		}
		lines[i] = t.row(lines, vals)
		return lines
	}
	return slices.Delete(lines, i, i+1)
}
