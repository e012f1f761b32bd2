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

	if present(name + ".progress") {
		ccwProgress(&v, root, filepath.Join(filepath.Dir(path), name+".progress"))
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

// ccwProgressFiles are the skill's progress files (seed 002's session
// structure), in its order.
var ccwProgressFiles = []string{"develop.md", "debug.md", "validate.md", "changes.log", "debug.log", "hypotheses.json",
	"test-results.json", "coverage.json", "summary.md"}

// ccwProgress reads {id}.progress/, where the skill documents its progress
// (and from which seed 002 rebuilds a corrupted skill_state): which files
// are there, the entries of its NDJSON logs, its hypotheses and test
// results, and the summary's title.
func ccwProgress(v *loop.View, root, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		v.Warnf("%s: %v", loop.Rel(root, dir), err)
		return
	}
	var names, other []string
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if slices.Contains(ccwProgressFiles, e.Name()) {
			names = append(names, e.Name())
		} else {
			other = append(other, e.Name())
		}
		v.AddFile(root, filepath.Join(dir, e.Name()))
	}
	slices.SortFunc(names, func(a, b string) int { return slices.Index(ccwProgressFiles, a) - slices.Index(ccwProgressFiles, b) })
	v.AddDetail("progress files", strings.Join(append(names, other...), ", "))
	for _, log := range []string{"changes.log", "debug.log"} {
		if !slices.Contains(names, log) {
			continue
		}
		n, bad, err := countJSONL(filepath.Join(dir, log))
		if err != nil {
			v.Warnf("%s: %v", loop.Rel(root, filepath.Join(dir, log)), err)
			continue
		}
		v.AddDetail(strings.TrimSuffix(log, ".log")+" log", fmt.Sprintf("%d entries", n))
		for _, line := range bad {
			v.Warnf("%s:%d is not a JSON line", loop.Rel(root, filepath.Join(dir, log)), line)
		}
	}
	for _, f := range []struct{ file, key, name string }{{"hypotheses.json", "hypotheses", "hypotheses"}, {"test-results.json", "test_results", "test results"}} {
		if !slices.Contains(names, f.file) {
			continue
		}
		items, err := ccwProgressList(filepath.Join(dir, f.file), f.key)
		if err != nil {
			v.Warnf("%s: %v", loop.Rel(root, filepath.Join(dir, f.file)), err)
			continue
		}
		counts := map[string]int{}
		for _, it := range items {
			if o, ok := asObject(it); ok {
				counts[cmp.Or(o.text("status"), "no status")]++
			}
		}
		var parts []string
		for _, k := range sortedKeys(counts) {
			parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
		}
		text := fmt.Sprint(len(items))
		if len(parts) > 0 {
			text += " (" + strings.Join(parts, ", ") + ")"
		}
		v.AddDetail(f.name, text)
	}
	if slices.Contains(names, "summary.md") {
		if data, err := readFile(filepath.Join(dir, "summary.md"), nil); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if t := strings.TrimSpace(strings.TrimLeft(line, "# ")); t != "" {
					v.AddDetail("summary", clip(t, 120))
					break
				}
			}
		}
	}
}

// ccwProgressList reads a progress JSON file holding an array, bare or
// under key.
func ccwProgressList(path, key string) ([]json.RawMessage, error) {
	data, err := readFile(path, nil)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		return items, nil
	}
	o, err := parseObject(path, data)
	if err != nil {
		return nil, err
	}
	return o.list(key), nil
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

// stopCCW stops a loop in CCW's format, as its dashboard's /stop does:
// status failed with the shared word and the reason in failure_reason
// (completed, with no failure_reason, for done and verifier-passed),
// completed_at and updated_at. The skill checks status before each action
// and terminates on failed.
func stopCCW(ctx context.Context, root, path, status, reason string, now time.Time) (ch change, err error) {
	err = loop.Edit(ctx, root, path, func(st *loop.State) error {
		ch.from, _, _ = st.String("status")
		if ch.from == "completed" || ch.from == "failed" || ch.from == "user_exit" {
			return fmt.Errorf("%s has already stopped (%s): %w", st.Path, ch.from, ErrAlreadyStopped)
		}
		ts := loop.ISOTime(now)
		ch.native = "failed"
		if status == "done" || status == "verifier-passed" {
			ch.native = "completed"
		}
		fields := []string{"status"}
		if err := st.Set("status", ch.native); err != nil {
			return err
		}
		if ch.native == "failed" {
			fields = append(fields, "failure_reason")
			if err := st.Set("failure_reason", status+": "+cmp.Or(reason, "stopped by orbit")); err != nil {
				return err
			}
		}
		fields = append(fields, "completed_at", "updated_at")
		if err := st.Set("completed_at", ts); err != nil {
			return err
		}
		ch.wrote = []string{wroteFields(root, path, fields...)}
		return st.Set("updated_at", ts)
	})
	return ch, err
}

// setCCWStatus pauses (running -> paused) or resumes (paused -> running) a
// loop, as CCW's dashboard does: status and updated_at. The skill checks
// status before each action and exits on paused, so a resume says what
// continues the loop: the skill, run again on it (seed 002: "Continue any
// loop with --loop-id"), in the mode it ran.
func setCCWStatus(ctx context.Context, root, path, id, kind string, now time.Time) (ch change, err error) {
	need, want := "running", "paused"
	if kind == loop.EventResume {
		need, want = "paused", "running"
	}
	err = loop.Edit(ctx, root, path, func(st *loop.State) error {
		ch.from, _, _ = st.String("status")
		if ch.from != need {
			return wrongState("%s is %s: only a %s loop can be %s", st.Path, ch.from, need, verbed(want))
		}
		if err := st.Set("status", want); err != nil {
			return err
		}
		if kind == loop.EventResume {
			ch.next = "/ccw-loop --loop-id=" + id
			if mode, _, _ := st.StringAt("skill_state", "mode"); mode == "auto" {
				ch.next += " --auto"
			}
		}
		ch.wrote = []string{wroteFields(root, path, "status", "updated_at")}
		return st.Set("updated_at", loop.ISOTime(now))
	})
	return ch, err
}
