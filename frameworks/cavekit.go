package frameworks

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/orbit-loop/orbit/loop"
)

// Cavekit's files (seed 003), relative to the project root. The loop is
// active while .loop.json exists: the Stop hook does nothing without it.
const (
	CavekitDir      = ".cavekit"
	CavekitLoopFile = ".cavekit/.loop.json"
	CavekitLockFile = ".cavekit/.loop.lock"
)

// CavekitID is the id of a project's Cavekit loop (there is one).
const CavekitID = "cavekit"

// cavekitLock is Cavekit's lock record.
type cavekitLock struct {
	Owner       string `json:"owner"`
	PID         any    `json:"pid"`
	Host        string `json:"host"`
	HeartbeatAt string `json:"heartbeat_at"`
}

func scanCavekit(root string, now time.Time, s *loop.Scan) {
	dir := filepath.Join(root, CavekitDir)
	if _, err := listDir(root, dir); err != nil {
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			problem(s, root, dir, err)
		}
		return
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	v := loop.View{Framework: loop.Cavekit, ID: CavekitID, Title: "Cavekit loop", Path: CavekitLoopFile}
	found := false
	read := func(name string) object {
		path := p(name)
		o, _, err := readObject(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		found = true
		if err != nil {
			problem(s, root, path, err)
			v.Warnf("%s could not be read", name)
			return nil
		}
		v.AddFile(root, path)
		return o
	}
	loopFile := read(".loop.json")
	active := exists(p(".loop.json"))
	front, fmErr := readFrontMatter(p("state.md"))
	if fmErr == nil {
		found = true
		v.AddFile(root, p("state.md"))
	} else if !errors.Is(fmErr, os.ErrNotExist) {
		found = true
		v.Warnf("state.md: %v", fmErr)
	}
	ledger := read("token-ledger.json")
	tasks := read("task-status.json")
	progress := read(".progress.json")
	config := read("config.json")
	backprop := read(".auto-backprop-pending.json")
	if !found || (loopFile == nil && !active && front == nil && ledger == nil && tasks == nil && progress == nil) {
		return
	}
	if config != nil {
		if name := config.text("project"); name != "" {
			v.Title = "Cavekit: " + name
		}
	}
	phase := front.text("phase")
	if phase == "" && progress != nil {
		phase = progress.text("phase")
	}
	v.NativeStatus = "inactive"
	if active {
		v.NativeStatus = "active"
		v.Status = "running"
	}
	if phase != "" {
		v.NativeStatus += " (" + phase + ")"
	}
	v.AddDetail("phase", phase)

	// Iterations: .loop.json's, else state.md's; they should agree.
	var note string
	if loopFile != nil {
		v.Iteration, note = loopFile.int("iteration")
		v.Note(note)
		v.MaxIterations, note = loopFile.int("max_iterations")
		v.Note(note)
		v.CheckTime(".loop.json started_at", loopFile.text("started_at"))
		v.AddDetail("started at", loopFile.text("started_at"))
		v.AddDetail("completion promise", loopFile.text("completion_promise"))
		v.AddDetail("site", loopFile.text("site"))
	}
	if it, note := front.int("iteration"); it != nil {
		if v.Iteration == nil {
			v.Iteration = it
		} else if *it != *v.Iteration {
			v.Warnf("state.md says iteration %d, .loop.json %d", *it, *v.Iteration)
		}
	} else {
		v.Note(note)
	}
	if active && v.Iteration != nil && v.MaxIterations != nil && *v.MaxIterations > 0 && *v.Iteration >= *v.MaxIterations {
		v.Warnf("iteration %d has reached the cap of %d but .loop.json is still present", *v.Iteration, *v.MaxIterations)
	}

	// Current task: state.md, else .progress.json; "null" as a string is drift.
	cur := front.text("current_task")
	if progress != nil {
		if pc := progress.text("current_task"); pc == "null" && progress.kind("current_task") == "a string" {
			v.Warnf(`.progress.json current_task is the string "null"`)
		} else if cur == "" {
			cur = pc
		}
	}
	v.AddDetail("current task", cur)
	v.AddDetail("last tool", progress.text("last_tool"))

	// Budget: the token ledger, else the progress snapshot.
	budgetSrc := ledger
	usedKey, limitKey := "session_used", "session_budget"
	if budgetSrc == nil {
		budgetSrc, usedKey = progress, "session_tokens_used"
	}
	if budgetSrc != nil {
		if u, ok, note := budgetSrc.num(usedKey); ok {
			v.BudgetUsed = new(u)
		} else {
			v.Note(note)
		}
		if l, ok, note := budgetSrc.num(limitKey); ok {
			v.BudgetLimit = new(l)
		} else {
			v.Note(note)
		}
		v.BudgetUnit = "tokens"
	}
	exhausted := v.BudgetUsed != nil && v.BudgetLimit != nil && *v.BudgetLimit > 0 && *v.BudgetUsed >= *v.BudgetLimit
	if exhausted && active {
		v.Warnf("session budget exhausted (%v of %v tokens) but .loop.json is still present", *v.BudgetUsed, *v.BudgetLimit)
	}
	if ledger != nil {
		cavekitTaskBudgets(&v, ledger)
	}

	// Tasks.
	total, complete := 0, 0
	if tasks != nil {
		counts := map[string]int{}
		tiers := map[string]bool{}
		for i, t := range tasks.list("tasks") {
			to, ok := asObject(t)
			if !ok {
				v.Warnf("task-status.json tasks[%d] is not an object", i)
				continue
			}
			total++
			st := to.text("status")
			counts[st]++
			if st == "complete" || st == "completed" || st == "done" {
				complete++
			}
			if tier := to.text("tier"); tier != "" {
				tiers[tier] = true
			}
		}
		var parts []string
		for _, k := range sortedKeys(counts) {
			parts = append(parts, fmt.Sprintf("%s %d", cmp.Or(k, "(none)"), counts[k]))
		}
		v.AddDetail("tasks", fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", ")))
		v.AddDetail("tiers", strings.Join(sortedKeys(tiers), ", "))
		if active && total > 0 && complete == total {
			v.Warnf("every task in task-status.json is complete but .loop.json is still present (the loop was never torn down)")
		}
	}
	if backprop != nil {
		v.AddDetail("backprop pending", clip(backprop.text("failure_excerpt"), 120))
	}

	// The lock.
	if lk, err := readCavekitLock(p(".loop.lock")); err != nil {
		v.Warnf(".loop.lock: %v", err)
	} else if lk != nil {
		v.AddFile(root, p(".loop.lock"))
		hb, ok := loop.ParseTime(lk.HeartbeatAt)
		v.AddDetail("lock", fmt.Sprintf("%s (pid %v on %s), heartbeat %s", lk.Owner, lk.PID, lk.Host, lk.HeartbeatAt))
		switch {
		case !active:
			v.Warnf(".loop.lock is left behind: no .loop.json")
		case !ok:
			v.Warnf(".loop.lock heartbeat_at is not a time: %q", lk.HeartbeatAt)
		case now.Sub(hb) > loop.StaleAfter:
			v.Warnf("stale lock: %s's heartbeat is %s old (stale after %s)", lk.Owner, now.Sub(hb).Round(time.Second), loop.StaleAfter)
		}
	}

	v.UpdatedAt = loop.Latest(front.text("updated_at"), tasks.text("updated_at"), progress.text("updated_at"), loopFile.text("started_at"))
	if !active {
		v.Derived = true
		switch {
		case total > 0 && complete == total:
			v.Status = "done"
		case exhausted:
			v.Status = "budget-exhausted"
		case total > 0:
			v.Status = "stopped"
		default:
			v.Status = "no-active-work"
		}
	} else {
		v.Controls = []string{"stop"}
	}
	s.Loops = append(s.Loops, v)
}

// cavekitTaskBudgets shows the per-tier task budgets as they are: numbers
// (Cavekit's format) or objects with token_budget (seen in the wild).
func cavekitTaskBudgets(v *loop.View, ledger object) {
	tb := ledger.obj("task_budgets")
	if tb == nil {
		return
	}
	var parts []string
	objects := false
	for _, k := range tb.keys() {
		if n, ok, _ := tb.num(k); ok && tb.kind(k) == "a number" {
			parts = append(parts, fmt.Sprintf("%s %v", k, n))
			continue
		}
		if o := tb.obj(k); o != nil {
			objects = true
			parts = append(parts, fmt.Sprintf("%s %s", k, cmp.Or(o.text("token_budget"), tb.text(k))))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s", k, tb.text(k)))
	}
	v.AddDetail("task budgets", strings.Join(parts, ", "))
	if objects {
		v.Warnf("token-ledger.json task_budgets are objects, not token counts (their token_budget is shown)")
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func readCavekitLock(path string) (*cavekitLock, error) {
	data, err := readFile(path, nil)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var l cavekitLock
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("not a lock record: %v", err)
	}
	return &l, nil
}

// frontMatter is the YAML front matter of Cavekit's state.md, read as flat
// "key: value" scalars.
type frontMatter map[string]string

func (f frontMatter) text(key string) string {
	if f == nil {
		return ""
	}
	return f[key]
}

func (f frontMatter) int(key string) (*int64, string) {
	s := f.text(key)
	if s == "" {
		return nil, ""
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, fmt.Sprintf("state.md %s is %q, not a whole number", key, s)
	}
	return &n, ""
}

func readFrontMatter(path string) (frontMatter, error) {
	data, err := readFile(path, nil)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != "---" {
		return nil, fmt.Errorf("no front matter (the first line is not ---)")
	}
	fm := frontMatter{}
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "---" {
			return fm, nil
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		k, val, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("front matter line %q is not key: value", line)
		}
		val = strings.TrimSpace(val)
		if len(val) >= 2 && (val[0] == '"' && val[len(val)-1] == '"' || val[0] == '\'' && val[len(val)-1] == '\'') {
			if uq, err := strconv.Unquote(`"` + val[1:len(val)-1] + `"`); err == nil {
				val = uq
			} else {
				val = val[1 : len(val)-1]
			}
		} else if val == "null" || val == "~" {
			val = ""
		}
		fm[strings.TrimSpace(k)] = val
	}
	return nil, fmt.Errorf("front matter is not closed with ---")
}

// teardownCavekit stops a Cavekit loop the way Cavekit's teardown does:
// .loop.json goes (the Stop hook does nothing without it). The lock is
// removed too when no live session holds it; a live session's lock is left
// for that session (its next Stop finds no loop and ends). It returns the
// .loop.json it removed, for the event.
func teardownCavekit(ctx context.Context, root string, now time.Time) (json.RawMessage, error) {
	path := filepath.Join(root, CavekitLoopFile)
	unlock, err := loop.Lock(ctx, root, path)
	if err != nil {
		return nil, err
	}
	defer unlock()
	data, err := readFile(path, nil)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: the Cavekit loop is not active (no .loop.json)", CavekitLoopFile)
	}
	if err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil {
		return nil, fmt.Errorf("tear down %s: %w", CavekitLoopFile, err)
	}
	lockPath := filepath.Join(root, CavekitLockFile)
	if lk, err := readCavekitLock(lockPath); err == nil && lk != nil {
		if hb, ok := loop.ParseTime(lk.HeartbeatAt); !ok || now.Sub(hb) > loop.StaleAfter {
			os.Remove(lockPath)
		}
	}
	if !json.Valid(data) {
		raw, _ := loop.Marshal(string(data))
		return raw, nil
	}
	var b bytes.Buffer
	json.Compact(&b, data)
	return b.Bytes(), nil
}
