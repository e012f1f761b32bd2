package frameworks

import (
	"bytes"
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
	maxFix, maxFrom := int64(DefaultMaxFixCycles), "seed 004 default"
	cfgPath := filepath.Join(root, ConductorConfig)
	if cfg, _, err := readObject(cfgPath); err == nil {
		if n, _ := cfg.int("max_fix_cycles"); n != nil {
			maxFix, maxFrom = *n, ConductorConfig
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		problem(s, root, cfgPath, err)
	}
	var paths []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		paths = append(paths, filepath.Join(dir, e.Name(), "metadata.json"))
	}
	readEach(s, root, paths, func(path string, o object) (loop.View, error) {
		return conductorView(root, path, o, maxFix, maxFrom), nil
	})
}

func conductorView(root, path string, o object, maxFix int64, maxFrom string) loop.View {
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
		if v.Iteration != nil && *v.Iteration > maxFix {
			v.Warnf("fix cycle %d is past the cap of %d", *v.Iteration, maxFix)
		}
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

// stopConductor ends a track the way seed 004's completeWithWarnings does:
// loop_state.current_step COMPLETE, step_status PASSED_WITH_WARNINGS, a
// warning saying why; orbit adds stop_reason (the shared word) and
// stopped_at so the unified view shows why it ended.
func stopConductor(ctx context.Context, root, path, status, reason string, now time.Time) (from string, err error) {
	err = loop.Edit(ctx, root, path, func(st *loop.State) error {
		ts := loop.ISOTime(now)
		lsRaw, ok := st.Raw("loop_state")
		var ls *loop.State
		if ok && !isNull(lsRaw) {
			if ls, err = loop.ParseState(st.Path+" loop_state", lsRaw); err != nil {
				return err
			}
		} else {
			ls = &loop.State{Path: st.Path + " loop_state"}
		}
		step, _, _ := ls.String("current_step")
		stepStatus, _, _ := ls.String("step_status")
		from = step + "/" + stepStatus
		if err := ls.Set("current_step", "COMPLETE"); err != nil {
			return err
		}
		if err := ls.Set("step_status", "PASSED_WITH_WARNINGS"); err != nil {
			return err
		}
		var compactLS bytes.Buffer
		if err := json.Compact(&compactLS, ls.Bytes()); err != nil {
			return err
		}
		if err := st.SetRaw("loop_state", compactLS.Bytes()); err != nil {
			return err
		}
		var warnings []json.RawMessage
		if raw, ok := st.Raw("warnings"); ok && !isNull(raw) {
			if json.Unmarshal(raw, &warnings) != nil {
				return fmt.Errorf("%s: warnings is not an array", st.Path)
			}
		}
		w, _ := loop.Marshal(fmt.Sprintf("orbit loop stop: %s: %s", status, cmp.Or(reason, "stopped by orbit")))
		warnings = append(warnings, w)
		if err := st.Set("warnings", warnings); err != nil {
			return err
		}
		for _, kv := range []struct {
			k string
			v any
		}{{"stop_reason", status}, {"stopped_at", ts}, {"updated_at", ts}} {
			if err := st.Set(kv.k, kv.v); err != nil {
				return err
			}
		}
		return nil
	})
	return from, err
}
