package loop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// CCWDir holds CCW's loop state files (seed 002): {loopId}.json, with the
// loop's tasks in {loopId}.tasks.jsonl (the skill's layout) or
// {loopId}/tasks.jsonl (the dashboard API's TaskStorageManager).
const CCWDir = ".workflow/.loop"

// CCW's status words (seed 002) and the skill's actions.
var (
	ccwStatuses = []string{"created", "running", "paused", "completed", "failed", "user_exit"}
	ccwActions  = []string{"init", "develop", "debug", "validate", "complete"}
)

// ccwStatus maps CCW's status to the shared vocabulary. failed is what
// CCW's /stop writes ("Manually stopped by user"), and what orbit writes
// with the shared word first in failure_reason ("budget-exhausted: …").
func ccwStatus(native, failure string) (string, string) {
	switch native {
	case "created":
		return "planned", ""
	case "running":
		return "running", ""
	case "paused":
		return "paused", ""
	case "completed":
		return "done", ""
	case "user_exit":
		return "stopped", ""
	case "failed":
		word, _, _ := strings.Cut(failure, ":")
		word = strings.TrimSpace(word)
		switch {
		case IsStopReason(word):
			return word, ""
		case strings.Contains(strings.ToLower(failure), "stop"):
			return "stopped", ""
		default:
			return "blocked", ""
		}
	}
	return Unknown, fmt.Sprintf("status %q is not a CCW status (%s)", native, strings.Join(ccwStatuses, ", "))
}

func scanCCW(root string, s *Scan) {
	dir := filepath.Join(root, CCWDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.problem(root, dir, err)
		}
		return
	}
	present := make(map[string]bool, len(entries))
	var paths []string
	for _, e := range entries {
		name := e.Name()
		present[name] = true
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		paths = append(paths, filepath.Join(dir, name))
	}
	s.readEach(root, paths, func(path string, o object) (View, error) {
		return ccwView(root, path, o, func(name string) bool { return present[name] }), nil
	})
}

// ccwView maps a CCW loop; present says whether a name is in the loop's
// directory (so that absent task files cost no system call).
func ccwView(root, path string, o object, present func(string) bool) View {
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	v := View{Framework: CCW, Path: rel(root, path)}
	v.file(root, path)
	v.identify(o, "loop_id", name, false)
	v.Title = firstOf(o.text("title"), v.ID)
	v.NativeStatus = o.text("status")
	failure := o.text("failure_reason")
	var note string
	v.Status, note = ccwStatus(v.NativeStatus, failure)
	v.note(note)
	v.Iteration, note = o.int("current_iteration")
	v.note(note)
	v.MaxIterations, note = o.int("max_iterations")
	v.note(note)
	if v.Iteration != nil && v.MaxIterations != nil && *v.Iteration > *v.MaxIterations {
		v.warn("iteration %d is past the cap of %d", *v.Iteration, *v.MaxIterations)
	}
	v.UpdatedAt = firstOf(o.text("updated_at"), o.text("created_at"))
	for _, k := range []string{"created_at", "updated_at", "completed_at"} {
		v.checkTime(k, o.text(k))
	}
	if c := o.text("completed_at"); c != "" && slices.Contains([]string{"planned", "running", "paused"}, v.Status) {
		v.warn("completed_at is set (%s) but the status is %s", c, v.NativeStatus)
	}
	v.detail("description", o.text("description"))
	v.detail("failure reason", failure)
	v.detail("completed at", o.text("completed_at"))
	v.detail("task (v1)", o.text("task_id"))
	if seq := o.list("cli_sequence"); seq != nil {
		v.detail("cli steps", fmt.Sprint(len(seq)))
	}

	// The loop's tasks: either layout, both if both are there.
	var taskFiles []string
	for _, tp := range []string{filepath.Join(filepath.Dir(path), name+".tasks.jsonl"), filepath.Join(filepath.Dir(path), name, "tasks.jsonl")} {
		if first, _, _ := strings.Cut(strings.TrimPrefix(tp, filepath.Dir(path)+string(filepath.Separator)), string(filepath.Separator)); !present(first) {
			continue
		}
		n, bad, err := countJSONL(tp)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		taskFiles = append(taskFiles, rel(root, tp))
		if err != nil {
			v.warn("%s: %v", rel(root, tp), err)
			continue
		}
		v.file(root, tp)
		v.detail("tasks ("+rel(root, tp)+")", fmt.Sprint(n))
		for _, line := range bad {
			v.warn("%s:%d is not a JSON task", rel(root, tp), line)
		}
	}
	if len(taskFiles) > 1 {
		v.warn("tasks in both layouts: %s", strings.Join(taskFiles, " and "))
	}
	if id := o.text("task_id"); id != "" {
		if tp := ccwTaskFile(root, id); tp != "" {
			v.file(root, tp)
			if to, _, err := readObject(tp); err == nil {
				if v.Title == v.ID && to.text("title") != "" {
					v.Title = to.text("title")
				}
				if lc := to.obj("loop_control"); lc != nil {
					if v.MaxIterations == nil {
						v.MaxIterations, _ = lc.int("max_iterations")
					}
					v.detail("success condition", lc.text("success_condition"))
				}
			}
		}
	}

	if ss := o.obj("skill_state"); ss != nil {
		ccwSkillState(&v, ss)
	} else if o.kind("skill_state") != "absent" && o.kind("skill_state") != "null" {
		v.warn("skill_state is %s, not an object", o.kind("skill_state"))
	}
	switch v.NativeStatus {
	case "created":
		v.Controls = []string{"stop"}
	case "running":
		v.Controls = []string{"stop", "pause"}
	case "paused":
		v.Controls = []string{"stop", "resume"}
	}
	return v
}

// ccwSkillState reads what the skill records of its progress.
func ccwSkillState(v *View, ss object) {
	cur := ss.text("current_action")
	if cur != "" && !slices.Contains(ccwActions, strings.ToLower(cur)) {
		v.warn("skill_state.current_action %q is not a CCW action (%s)", cur, strings.Join(ccwActions, ", "))
	}
	v.detail("current action", cur)
	v.detail("last action", ss.text("last_action"))
	v.detail("mode", ss.text("mode"))
	if dev := ss.obj("develop"); dev != nil {
		total, _ := dev.int("total")
		done, _ := dev.int("completed")
		if total != nil && done != nil {
			v.detail("develop", fmt.Sprintf("%d/%d tasks", *done, *total))
			if *done > *total {
				v.warn("skill_state.develop.completed %d is more than total %d", *done, *total)
			}
		}
		pending := 0
		for _, t := range dev.list("tasks") {
			if to, ok := asObject(t); ok && to.text("status") == "pending" {
				pending++
			}
		}
		if pending > 0 && v.Status == "done" {
			v.warn("completed with %d develop tasks still pending", pending)
		}
	}
	if val := ss.obj("validate"); val != nil {
		if p, ok := val.bool("passed"); ok {
			v.detail("validate passed", fmt.Sprint(p))
		}
		v.detail("pass rate", val.text("pass_rate"))
	}
	if errs := ss.list("errors"); len(errs) > 0 {
		v.detail("errors", fmt.Sprint(len(errs)))
	}
}

// ccwTaskFile finds the task definition of a v1 loop (a task with
// loop_control): .task/{id}.json at the root or in an active session.
func ccwTaskFile(root, id string) string {
	if checkID(id) != nil {
		return ""
	}
	if p := filepath.Join(root, ".task", id+".json"); exists(p) {
		return p
	}
	matches, _ := filepath.Glob(filepath.Join(root, ".workflow", "active", "*", ".task", id+".json"))
	if len(matches) > 0 {
		return matches[0]
	}
	return ""
}

// countJSONL counts the JSON lines of a tasks file (CCW writes the last
// line without a newline) and returns the numbers of the lines that are
// not JSON objects.
func countJSONL(path string) (n int, bad []int, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	for i, b := range bytes.Split(data, []byte("\n")) {
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		if _, err := parseObject(path, b); err != nil {
			bad = append(bad, i+1)
			continue
		}
		n++
	}
	return n, bad, nil
}

// stopCCW stops a loop in CCW's format: status failed with the shared word
// and the reason in failure_reason (completed for done and
// verifier-passed), completed_at and updated_at.
func stopCCW(ctx context.Context, path, status, reason string, now time.Time) (from string, err error) {
	err = editJSON(ctx, path, func(st *State) error {
		from, _, _ = st.String("status")
		if from == "completed" || from == "failed" || from == "user_exit" {
			return fmt.Errorf("%s has already stopped (%s): %w", st.Path, from, ErrAlreadyStopped)
		}
		ts := ISOTime(now)
		native := "failed"
		if status == "done" || status == "verifier-passed" {
			native = "completed"
		}
		if err := setJSON(st, "status", native); err != nil {
			return err
		}
		if native == "failed" {
			if err := setJSON(st, "failure_reason", status+": "+firstOf(reason, "stopped by orbit")); err != nil {
				return err
			}
		}
		if err := setJSON(st, "completed_at", ts); err != nil {
			return err
		}
		return setJSON(st, "updated_at", ts)
	})
	return from, err
}

// setCCWStatus pauses (running -> paused) or resumes (paused -> running) a
// loop, as CCW's dashboard does; the skill checks status before each action.
func setCCWStatus(ctx context.Context, path, want, need string, now time.Time) (from string, err error) {
	err = editJSON(ctx, path, func(st *State) error {
		from, _, _ = st.String("status")
		if from != need {
			return wrongState("%s is %s: only a %s loop can be %s", st.Path, from, need, verbed(want))
		}
		if err := setJSON(st, "status", want); err != nil {
			return err
		}
		return setJSON(st, "updated_at", ISOTime(now))
	})
	return from, err
}
