package frameworks

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/loop"
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
		case loop.IsStopReason(word):
			return word, ""
		case strings.Contains(strings.ToLower(failure), "stop"):
			return "stopped", ""
		default:
			return "blocked", ""
		}
	}
	return loop.Unknown, fmt.Sprintf("status %q is not a CCW status (%s)", native, strings.Join(ccwStatuses, ", "))
}

func scanCCW(root string, s *loop.Scan) {
	dir := filepath.Join(root, CCWDir)
	entries, err := listDir(root, dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			problem(s, root, dir, err)
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
	readEach(s, root, paths, func(path string, o object) (loop.View, error) {
		return ccwView(root, path, o, func(name string) bool { return present[name] }), nil
	})
}

// ccwView maps a CCW loop; present says whether a name is in the loop's
// directory (so that absent task files cost no system call).
func ccwView(root, path string, o object, present func(string) bool) loop.View {
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	v := loop.View{Framework: loop.CCW, Path: loop.Rel(root, path)}
	v.AddFile(root, path)
	identify(&v, o, "loop_id", name, false)
	v.Title = cmp.Or(o.text("title"), v.ID)
	v.NativeStatus = o.text("status")
	failure := o.text("failure_reason")
	var note string
	v.Status, note = ccwStatus(v.NativeStatus, failure)
	v.Note(note)
	v.Iteration, note = o.int("current_iteration")
	v.Note(note)
	v.MaxIterations, note = o.int("max_iterations")
	v.Note(note)
	if v.Iteration != nil && v.MaxIterations != nil && *v.Iteration > *v.MaxIterations {
		v.Warnf("iteration %d is past the cap of %d", *v.Iteration, *v.MaxIterations)
	}
	v.UpdatedAt = cmp.Or(o.text("updated_at"), o.text("created_at"))
	for _, k := range []string{"created_at", "updated_at", "completed_at"} {
		v.CheckTime(k, o.text(k))
	}
	if c := o.text("completed_at"); c != "" && slices.Contains([]string{"planned", "running", "paused"}, v.Status) {
		v.Warnf("completed_at is set (%s) but the status is %s", c, v.NativeStatus)
	}
	v.AddDetail("description", o.text("description"))
	v.AddDetail("failure reason", failure)
	v.AddDetail("completed at", o.text("completed_at"))
	v.AddDetail("task (v1)", o.text("task_id"))
	if seq := o.list("cli_sequence"); seq != nil {
		v.AddDetail("cli steps", fmt.Sprint(len(seq)))
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
		taskFiles = append(taskFiles, loop.Rel(root, tp))
		if err != nil {
			v.Warnf("%s: %v", loop.Rel(root, tp), err)
			continue
		}
		v.AddFile(root, tp)
		v.AddDetail("tasks ("+loop.Rel(root, tp)+")", fmt.Sprint(n))
		for _, line := range bad {
			v.Warnf("%s:%d is not a JSON task", loop.Rel(root, tp), line)
		}
	}
	if len(taskFiles) > 1 {
		v.Warnf("tasks in both layouts: %s", strings.Join(taskFiles, " and "))
	}
	if id := o.text("task_id"); id != "" {
		if tp := ccwTaskFile(root, id); tp != "" {
			v.AddFile(root, tp)
			if to, _, err := readObject(tp); err == nil {
				if v.Title == v.ID && to.text("title") != "" {
					v.Title = to.text("title")
				}
				if lc := to.obj("loop_control"); lc != nil {
					if v.MaxIterations == nil {
						v.MaxIterations, _ = lc.int("max_iterations")
					}
					v.AddDetail("success condition", lc.text("success_condition"))
				}
			}
		}
	}

	if ss := o.obj("skill_state"); ss != nil {
		ccwSkillState(&v, ss)
	} else if o.kind("skill_state") != "absent" && o.kind("skill_state") != "null" {
		v.Warnf("skill_state is %s, not an object", o.kind("skill_state"))
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
func ccwSkillState(v *loop.View, ss object) {
	cur := ss.text("current_action")
	if cur != "" && !slices.Contains(ccwActions, strings.ToLower(cur)) {
		v.Warnf("skill_state.current_action %q is not a CCW action (%s)", cur, strings.Join(ccwActions, ", "))
	}
	v.AddDetail("current action", cur)
	v.AddDetail("last action", ss.text("last_action"))
	v.AddDetail("mode", ss.text("mode"))
	if dev := ss.obj("develop"); dev != nil {
		total, _ := dev.int("total")
		done, _ := dev.int("completed")
		if total != nil && done != nil {
			v.AddDetail("develop", fmt.Sprintf("%d/%d tasks", *done, *total))
			if *done > *total {
				v.Warnf("skill_state.develop.completed %d is more than total %d", *done, *total)
			}
		}
		pending := 0
		for _, t := range dev.list("tasks") {
			if to, ok := asObject(t); ok && to.text("status") == "pending" {
				pending++
			}
		}
		if pending > 0 && v.Status == "done" {
			v.Warnf("completed with %d develop tasks still pending", pending)
		}
	}
	if val := ss.obj("validate"); val != nil {
		if p, ok := val.bool("passed"); ok {
			v.AddDetail("validate passed", fmt.Sprint(p))
		}
		v.AddDetail("pass rate", val.text("pass_rate"))
	}
	if errs := ss.list("errors"); len(errs) > 0 {
		v.AddDetail("errors", fmt.Sprint(len(errs)))
	}
}

// ccwTaskFile finds the task definition of a v1 loop (a task with
// loop_control): .task/{id}.json at the root or in an active session.
func ccwTaskFile(root, id string) string {
	if loop.CheckID(id) != nil {
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
	data, err := readFile(path, nil)
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
func stopCCW(ctx context.Context, root, path, status, reason string, now time.Time) (from string, err error) {
	err = loop.Edit(ctx, root, path, func(st *loop.State) error {
		from, _, _ = st.String("status")
		if from == "completed" || from == "failed" || from == "user_exit" {
			return fmt.Errorf("%s has already stopped (%s): %w", st.Path, from, ErrAlreadyStopped)
		}
		ts := loop.ISOTime(now)
		native := "failed"
		if status == "done" || status == "verifier-passed" {
			native = "completed"
		}
		if err := st.Set("status", native); err != nil {
			return err
		}
		if native == "failed" {
			if err := st.Set("failure_reason", status+": "+cmp.Or(reason, "stopped by orbit")); err != nil {
				return err
			}
		}
		if err := st.Set("completed_at", ts); err != nil {
			return err
		}
		return st.Set("updated_at", ts)
	})
	return from, err
}

// setCCWStatus pauses (running -> paused) or resumes (paused -> running) a
// loop, as CCW's dashboard does; the skill checks status before each action.
func setCCWStatus(ctx context.Context, root, path, want, need string, now time.Time) (from string, err error) {
	err = loop.Edit(ctx, root, path, func(st *loop.State) error {
		from, _, _ = st.String("status")
		if from != need {
			return wrongState("%s is %s: only a %s loop can be %s", st.Path, from, need, verbed(want))
		}
		if err := st.Set("status", want); err != nil {
			return err
		}
		return st.Set("updated_at", loop.ISOTime(now))
	})
	return from, err
}
