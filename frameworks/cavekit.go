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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/orbit-loop/orbit/journal"
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

// cavekitLock is Cavekit's lock record (seed 003: owner, pid, host,
// heartbeat_at). heartbeat_at is an ISO time, or the milliseconds since
// the epoch Cavekit's own tools write (Date.now()), or seconds.
type cavekitLock struct {
	Owner       string          `json:"owner"`
	PID         any             `json:"pid"`
	Host        string          `json:"host"`
	HeartbeatAt json.RawMessage `json:"heartbeat_at"`
}

// heartbeat reads heartbeat_at in any of the forms a lock carries; text is
// what it says, for people.
func (l *cavekitLock) heartbeat() (t time.Time, text string, ok bool) {
	raw := bytes.TrimSpace(l.HeartbeatAt)
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(raw)
	}
	if t, ok := loop.ParseTime(s); ok {
		return t, s, true
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || n <= 0 || n > 1e15 {
		return time.Time{}, s, false
	}
	if n < 1e11 { // seconds: 1e11 s is the year 5138, 1e11 ms is 1973
		n *= 1000
	}
	t = time.UnixMilli(int64(n)).UTC()
	return t, s + " (" + loop.ISOTime(t) + ")", true
}

// StaleLoopAfter is how long an active Cavekit loop may show no activity
// (no iteration, lock heartbeat or state update) before it is flagged as
// stale: its session most likely ended without a teardown.
const StaleLoopAfter = 24 * time.Hour

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
	activity := []activityMark{{front.text("updated_at"), "state.md updated_at"}, {tasks.text("updated_at"), "task-status.json updated_at"},
		{progress.text("updated_at"), ".progress.json updated_at"}, {loopFile.text("started_at"), ".loop.json started_at"}}
	// Cavekit rewrites .loop.json at every iteration: a recent write is
	// activity even when no file records a time.
	var written time.Time
	if fi, err := os.Stat(p(".loop.json")); err == nil {
		written = fi.ModTime()
	}
	if lk, err := readCavekitLock(p(".loop.lock")); err != nil {
		v.Warnf(".loop.lock: %v", err)
	} else if lk != nil {
		v.AddFile(root, p(".loop.lock"))
		hb, hbText, ok := lk.heartbeat()
		v.AddDetail("lock", fmt.Sprintf("%s (pid %v on %s), heartbeat %s", lk.Owner, lk.PID, lk.Host, hbText))
		switch {
		case !active:
			v.Warnf(".loop.lock is left behind: no .loop.json")
		case !ok:
			v.Warnf(".loop.lock heartbeat_at is not a time: %s", hbText)
		case now.Sub(hb) > loop.StaleAfter:
			v.Warnf("stale lock: %s's heartbeat is %s old (stale after %s)", lk.Owner, now.Sub(hb).Round(time.Second), loop.StaleAfter)
		}
		if ok {
			activity = append(activity, activityMark{loop.ISOTime(hb), ".loop.lock heartbeat"})
		}
	}
	if active {
		if last, what, ok := latestActivity(activity); ok {
			v.AddDetail("last activity", loop.ISOTime(last)+" ("+what+")")
			if age := now.Sub(last); age > StaleLoopAfter && now.Sub(written) > StaleLoopAfter {
				v.Warnf("stale: .loop.json is active but nothing has moved for %s (last activity %s, %s): its session most likely ended without a teardown",
					ageText(age), loop.ISOTime(last), what)
			}
		}
	}
	cavekitHistory(&v, root, p("history/backprop-log.md"))
	if caps := read("capabilities.json"); caps != nil {
		cavekitCapabilities(&v, caps)
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

// activityMark is a time a Cavekit file gives of the loop's last activity.
type activityMark struct{ at, what string }

// latestActivity is the latest of the marks that are times.
func latestActivity(marks []activityMark) (time.Time, string, bool) {
	var last time.Time
	what := ""
	for _, m := range marks {
		if t, ok := loop.ParseTime(m.at); ok && t.After(last) {
			last, what = t, m.what
		}
	}
	return last, what, what != ""
}

// ageText renders an age in days and hours (or hours and minutes).
func ageText(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%d days %d hours", int(d.Hours())/24, int(d.Hours())%24)
	}
	return d.Round(time.Minute).String()
}

// cavekitHistory reads history/backprop-log.md, the backprop skill's
// append-only trace log: one "## " heading an entry.
func cavekitHistory(v *loop.View, root, path string) {
	data, err := readFile(path, nil)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		v.Warnf("history/backprop-log.md: %v", err)
		return
	}
	v.AddFile(root, path)
	n, last := 0, ""
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			n++
			last = strings.TrimSpace(h)
		}
	}
	if n == 0 {
		v.AddDetail("backprop log", "no entries")
		return
	}
	v.AddDetail("backprop log", fmt.Sprintf("%d entries, the last: %s", n, clip(last, 120)))
}

// cavekitCapabilities reads capabilities.json, what Cavekit's discover
// command found: CLI tools, MCP servers, plugins, Codex.
func cavekitCapabilities(v *loop.View, caps object) {
	var parts []string
	if tools := caps.obj("cli_tools"); tools != nil {
		var have []string
		keys := tools.keys()
		for _, k := range keys {
			if b, ok := tools.bool(k); ok && b {
				have = append(have, k)
			}
		}
		parts = append(parts, fmt.Sprintf("CLI %d of %d (%s)", len(have), len(keys), strings.Join(have, ", ")))
	}
	for _, k := range []string{"mcp_servers", "plugins"} {
		if l := caps.list(k); l != nil {
			var names []string
			for _, e := range l {
				var s string
				if json.Unmarshal(e, &s) == nil {
					names = append(names, s)
				} else {
					names = append(names, compact(e))
				}
			}
			parts = append(parts, fmt.Sprintf("%s %d (%s)", strings.ReplaceAll(k, "_", " "), len(names), strings.Join(names, ", ")))
		}
	}
	if cx := caps.obj("codex"); cx != nil {
		if b, ok := cx.bool("available"); ok {
			parts = append(parts, fmt.Sprintf("codex available: %t", b))
		}
	}
	if d := caps.text("discovered_at"); d != "" {
		parts = append(parts, "discovered "+d)
		v.CheckTime("capabilities.json discovered_at", d)
	}
	v.AddDetail("capabilities", strings.Join(parts, "; "))
}

// teardownCavekit stops a Cavekit loop the way Cavekit's own teardown-loop
// does: .loop.json goes (the Stop hook does nothing without it), then the
// lock, and state.md's phase becomes complete (its other front matter and
// its body kept). The lock is left when a live session holds it (seed 003:
// never delete it while a session might be active; that session's next
// Stop finds no loop and ends). The removed .loop.json is kept with the
// event.
func teardownCavekit(ctx context.Context, root string, now time.Time) (ch change, err error) {
	path := filepath.Join(root, CavekitLoopFile)
	unlock, err := loop.Lock(ctx, root, path)
	if err != nil {
		return ch, err
	}
	defer unlock()
	data, err := readFile(path, nil)
	if errors.Is(err, os.ErrNotExist) {
		return ch, fmt.Errorf("%s: the Cavekit loop is not active (no .loop.json)", CavekitLoopFile)
	}
	if err != nil {
		return ch, err
	}
	ch.from = "active"
	if err := os.Remove(path); err != nil {
		return ch, fmt.Errorf("tear down %s: %w", CavekitLoopFile, err)
	}
	ch.wrote = append(ch.wrote, "removed "+CavekitLoopFile)
	lockPath := filepath.Join(root, CavekitLockFile)
	if lk, err := readCavekitLock(lockPath); err == nil && lk != nil {
		if hb, _, ok := lk.heartbeat(); !ok || now.Sub(hb) > loop.StaleAfter {
			if os.Remove(lockPath) == nil {
				ch.wrote = append(ch.wrote, "removed "+CavekitLockFile+" (no live heartbeat)")
			}
		} else {
			ch.wrote = append(ch.wrote, fmt.Sprintf("left %s: %s's heartbeat is %s old; its next Stop finds no loop", CavekitLockFile, lk.Owner, now.Sub(hb).Round(time.Second)))
		}
	}
	statePath := filepath.Join(root, CavekitDir, "state.md")
	if err := setFrontMatter(root, statePath, map[string]string{"phase": "complete", "updated_at": loop.ISOTime(now)}, []string{"phase", "updated_at"}); err != nil {
		return ch, fmt.Errorf("tear down: %w", err)
	}
	ch.wrote = append(ch.wrote, wroteFields(root, statePath, "phase", "updated_at"))
	ch.native = "inactive (complete)"
	if !json.Valid(data) {
		ch.data, _ = loop.Marshal(string(data))
		return ch, nil
	}
	var b bytes.Buffer
	json.Compact(&b, data)
	ch.data = b.Bytes()
	return ch, nil
}

// frontMatterValue renders a value as Cavekit's serializeFrontmatter does:
// quoted when it holds ':', '#' or '>', or reads as a boolean, null or a
// number.
func frontMatterValue(v string) string {
	if strings.ContainsAny(v, ":#>") || frontMatterWord.MatchString(v) {
		return `"` + strings.ReplaceAll(v, `"`, `\"`) + `"`
	}
	return v
}

var frontMatterWord = regexp.MustCompile(`(?i)^(true|false|null|yes|no|-?\d+)$`)

// setFrontMatter sets keys of state.md's front matter in place: each
// key's line gets the new value, a missing key a line before the closing
// ---, and every other line (and the body) stays as it was. A missing file
// is written as Cavekit writes a fresh one.
func setFrontMatter(root, path string, set map[string]string, order []string) error {
	data, err := readFile(path, nil)
	if errors.Is(err, os.ErrNotExist) {
		var b strings.Builder
		b.WriteString("---\n")
		for _, k := range order {
			b.WriteString(k + ": " + frontMatterValue(set[k]) + "\n")
		}
		b.WriteString("---\n")
		return journal.WriteFileAtomic(root, path, []byte(b.String()), 0o644)
	}
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return fmt.Errorf("%s: no front matter (the first line is not ---); left as it is", filepath.Base(path))
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return fmt.Errorf("%s: front matter is not closed with ---; left as it is", filepath.Base(path))
	}
	done := map[string]bool{}
	for i := 1; i < end; i++ {
		k, _, ok := strings.Cut(lines[i], ":")
		k = strings.TrimSpace(k)
		val, want := set[k]
		if !ok || !want || done[k] {
			continue
		}
		eol := lines[i][len(strings.TrimRight(lines[i], "\r\n")):]
		lines[i] = k + ": " + frontMatterValue(val) + eol
		done[k] = true
	}
	var add []string
	eol := lines[end-1][len(strings.TrimRight(lines[end-1], "\r\n")):]
	if eol == "" {
		eol = "\n"
	}
	for _, k := range order {
		if !done[k] {
			add = append(add, k+": "+frontMatterValue(set[k])+eol)
		}
	}
	out := slices.Concat(lines[:end], add, lines[end:])
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	return journal.WriteFileAtomic(root, path, []byte(strings.Join(out, "")), perm)
}
