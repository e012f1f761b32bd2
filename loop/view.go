package loop

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The frameworks whose loops orbit reads, in the order it lists them.
const (
	Citadel   = "citadel"   // seed 001: .planning/loops/*.json, .planning/daemon.json
	CCW       = "ccw"       // seed 002: .workflow/.loop/*.json and their tasks
	Cavekit   = "cavekit"   // seed 003: .cavekit/
	Conductor = "conductor" // seed 004: conductor/tracks/*/metadata.json
	ORBIT     = "orbit"     // seed 000: .claude/ceo-loop-state.json
)

// Frameworks lists every framework, in listing order.
var Frameworks = []string{Citadel, CCW, Cavekit, Conductor, ORBIT}

// ActiveStatuses are Citadel's states of a loop that has not stopped.
var ActiveStatuses = []string{"planned", "running", "waiting", "paused", "needs-human-review"}

// Statuses are the status words of the unified view and of a Citadel loop
// record: Citadel's active states and the shared stop vocabulary (seed 001).
var Statuses = []string{"planned", "running", "waiting", "paused", "needs-human-review",
	"done", "verifier-passed", "verifier-failed", "blocked", "budget-exhausted", "attempt-limit",
	"unsafe-to-continue", "no-active-work", "stopped"}

// Unknown is the status of a loop whose own status word orbit cannot map;
// the word itself is in NativeStatus, and a warning says why.
const Unknown = "unknown"

// IsStatus reports whether s is a status word.
func IsStatus(s string) bool { return slices.Contains(Statuses, s) }

// IsStopped reports whether a loop in status s has stopped: a stop word
// other than needs-human-review (which waits for a person, then resumes).
func IsStopped(s string) bool { return IsStopReason(s) && s != "needs-human-review" }

// Detail is one named fact shown by `orbit loop show`.
type Detail struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// View is one loop of any framework, as orbit shows it: its own status word
// mapped to the shared vocabulary, what it has used of its limits, and what
// is inconsistent about it.
type View struct {
	Framework    string `json:"framework"`
	ID           string `json:"id"`
	Title        string `json:"title"`
	Type         string `json:"type,omitempty"`
	Status       string `json:"status"`
	NativeStatus string `json:"native_status"`
	// Iteration and MaxIterations are the framework's own counters (attempts,
	// sessions, fix cycles: the README says which); nil when unknown.
	Iteration     *int64   `json:"iteration"`
	MaxIterations *int64   `json:"max_iterations"`
	UpdatedAt     string   `json:"updated_at"`
	BudgetUsed    *float64 `json:"budget_used"`
	BudgetLimit   *float64 `json:"budget_limit"`
	BudgetUnit    string   `json:"budget_unit,omitempty"`
	// Path is the loop's main file, relative to the project root.
	Path  string   `json:"path"`
	Files []string `json:"files"`
	// Controls are the commands that apply now: stop, pause, resume.
	Controls []string `json:"controls"`
	Warnings []string `json:"warnings"`
	Details  []Detail `json:"details"`
	// Runs are the attempts a Citadel record holds.
	Runs []RunView `json:"runs,omitempty"`
	// History is what orbit's loop event journal holds about the loop.
	History []HistoryEvent `json:"history,omitempty"`

	// derived: the framework's files do not record why the loop stopped,
	// so the status is derived (Cavekit after teardown); a stop orbit
	// recorded takes precedence.
	derived bool
}

// RunView is one entry of a Citadel record's runs.
type RunView struct {
	Attempt     string `json:"attempt"`
	Status      string `json:"status"`
	Summary     string `json:"summary"`
	Command     string `json:"command"`
	Verifier    string `json:"verifier"`
	ExitCode    string `json:"exit_code"`
	StartedAt   string `json:"started_at"`
	CompletedAt string `json:"completed_at"`
	Evidence    string `json:"evidence,omitempty"`
}

// Key identifies a loop across frameworks.
func (v View) Key() string { return v.Framework + ":" + v.ID }

func (v *View) warn(format string, args ...any) {
	v.Warnings = append(v.Warnings, fmt.Sprintf(format, args...))
}

// identify sets the view's id from o's key, else from name (the record
// file's, or its directory's when dir), warning when the id is missing or
// differs from name.
func (v *View) identify(o object, key, name string, dir bool) {
	after, differs := "file", "file name"
	if dir {
		after, differs = "directory", "directory"
	}
	v.ID, _ = o.str(key)
	switch {
	case v.ID == "":
		v.ID = name
		v.warn("no %s: named after the %s", key, after)
	case v.ID != name:
		v.warn("%s %q differs from the %s %q", key, v.ID, differs, name)
	}
}

// note adds a warning when s says something.
func (v *View) note(s string) {
	if s != "" {
		v.Warnings = append(v.Warnings, s)
	}
}

func (v *View) detail(name, value string) {
	if value != "" {
		v.Details = append(v.Details, Detail{name, value})
	}
}

func (v *View) file(root, path string) {
	v.Files = append(v.Files, rel(root, path))
}

// IterationText renders iteration / max ("-" for an unknown side).
func (v View) IterationText() string {
	if v.Iteration == nil && v.MaxIterations == nil {
		return ""
	}
	return intText(v.Iteration) + "/" + intText(v.MaxIterations)
}

// BudgetText renders budget used / limit with the unit.
func (v View) BudgetText() string {
	if v.BudgetUsed == nil && v.BudgetLimit == nil {
		return ""
	}
	s := floatText(v.BudgetUsed) + "/" + floatText(v.BudgetLimit)
	if v.BudgetUnit != "" {
		s += " " + v.BudgetUnit
	}
	return s
}

func intText(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func floatText(p *float64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

// Problem is a file orbit could not read as a loop, or a record that breaks
// its framework's contract (a Citadel status outside the vocabulary).
type Problem struct {
	Path string `json:"path"`
	Err  string `json:"error"`
}

func (p Problem) Error() string { return p.Err }

// Scan is every loop found in a project.
type Scan struct {
	Loops    []View    `json:"loops"`
	Problems []Problem `json:"problems"`
}

// ScanProject finds and reads, in place and read-only, the loops of every
// framework under root. A file that cannot be read is a Problem, never a
// crash; the loops are in framework order, then by id.
func ScanProject(root string, now time.Time) Scan {
	var s Scan
	scanCitadel(root, &s)
	scanCCW(root, &s)
	scanCavekit(root, now, &s)
	scanConductor(root, &s)
	scanOrbit(root, now, &s)
	for i := range s.Loops {
		v := &s.Loops[i]
		for _, l := range []*[]string{&v.Files, &v.Controls, &v.Warnings} {
			if *l == nil {
				*l = []string{}
			}
		}
		if v.Details == nil {
			v.Details = []Detail{}
		}
	}
	if s.Problems == nil {
		s.Problems = []Problem{}
	}
	order := map[string]int{}
	for i, f := range Frameworks {
		order[f] = i
	}
	slices.SortStableFunc(s.Loops, func(a, b View) int {
		if d := order[a.Framework] - order[b.Framework]; d != 0 {
			return d
		}
		return strings.Compare(a.ID, b.ID)
	})
	return s
}

func (s *Scan) problem(root string, path string, err error) {
	r := rel(root, path)
	msg := strings.ReplaceAll(err.Error(), root+string(filepath.Separator), "")
	if !strings.HasPrefix(msg, r) {
		msg = r + ": " + msg
	}
	s.Problems = append(s.Problems, Problem{Path: r, Err: msg})
}

// readEach reads the JSON files at paths and maps each with view, on as
// many goroutines as there are CPUs; the loops and problems are added in
// the order of paths. A file that has disappeared meanwhile is skipped.
func (s *Scan) readEach(root string, paths []string, view func(path string, o object) (View, error)) {
	type result struct {
		v    View
		ok   bool
		errs []error
	}
	res := make([]result, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One buffer per goroutine: a view copies what it keeps, so
			// the next file may reuse the bytes of the last.
			var buf []byte
			for {
				i := int(next.Add(1) - 1)
				if i >= len(paths) {
					return
				}
				data, err := readFile(paths[i], buf)
				var o object
				if err == nil {
					buf = data
					o, err = parseObject(paths[i], data)
				}
				switch {
				case errors.Is(err, os.ErrNotExist):
				case err != nil:
					res[i].errs = append(res[i].errs, err)
				default:
					v, err := view(paths[i], o)
					res[i].v, res[i].ok = v, true
					if err != nil {
						res[i].errs = append(res[i].errs, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	for i, r := range res {
		for _, err := range r.errs {
			s.problem(root, paths[i], err)
		}
		if r.ok {
			s.Loops = append(s.Loops, r.v)
		}
	}
}

// Find returns the loop named id: exactly, as framework:id, or as the only
// loop whose id starts with it (else contains it). ok is false when none or several match
// (matches lists them).
func (s Scan) Find(id string) (v View, matches []View, ok bool) {
	for _, l := range s.Loops {
		if l.ID == id || l.Key() == id {
			matches = append(matches, l)
		}
	}
	if len(matches) == 0 {
		for _, l := range s.Loops {
			if strings.HasPrefix(l.ID, id) || strings.HasPrefix(l.Key(), id) {
				matches = append(matches, l)
			}
		}
	}
	if len(matches) == 0 {
		for _, l := range s.Loops {
			if strings.Contains(l.ID, id) {
				matches = append(matches, l)
			}
		}
	}
	if len(matches) == 1 {
		return matches[0], matches, true
	}
	return View{}, matches, false
}

// NoLoopError is an id that names no loop.
type NoLoopError struct{ ID string }

func (e *NoLoopError) Error() string {
	return fmt.Sprintf("no loop %q in this project (`orbit loop list` shows them)", e.ID)
}

// AmbiguousError is an id that names several loops.
type AmbiguousError struct {
	ID   string
	Keys []string // framework:id of each match
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%q matches %d loops: %s; give more of the id, or framework:id", e.ID, len(e.Keys), strings.Join(e.Keys, ", "))
}

// Resolve finds the loop an id names (see Find). When several match and
// control is given, the one loop the control applies to is taken (a stop
// among finished runs of the same command, say). The error is a
// *NoLoopError or an *AmbiguousError.
func (s Scan) Resolve(id, control string) (View, error) {
	v, matches, ok := s.Find(id)
	if ok {
		return v, nil
	}
	if control != "" && len(matches) > 1 {
		var can []View
		for _, m := range matches {
			if slices.Contains(m.Controls, control) {
				can = append(can, m)
			}
		}
		if len(can) == 1 {
			return can[0], nil
		}
	}
	if len(matches) == 0 {
		return v, &NoLoopError{ID: id}
	}
	keys := make([]string, len(matches))
	for i, m := range matches {
		keys[i] = m.Key()
	}
	return v, &AmbiguousError{ID: id, Keys: keys}
}

// rel is path relative to root, with forward slashes.
func rel(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(r)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// timeOf parses the timestamps the frameworks write: RFC 3339 with or
// without fractions, or a bare date.
func timeOf(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// checkTime warns when a timestamp field holds something else (a template
// placeholder like "{ISO timestamp}" or "$STARTED").
func (v *View) checkTime(field, value string) {
	if value == "" {
		return
	}
	if _, ok := timeOf(value); !ok {
		v.warn("%s is not a time: %q", field, value)
	}
}

// latest is the latest of the timestamps given (as written), or the last
// non-empty one when none parses.
func latest(values ...string) string {
	var best string
	var bestT time.Time
	for _, s := range values {
		if s == "" {
			continue
		}
		t, ok := timeOf(s)
		switch {
		case ok && (bestT.IsZero() || t.After(bestT)):
			best, bestT = s, t
		case !ok && bestT.IsZero():
			best = s
		}
	}
	return best
}

func i64(n int64) *int64     { return &n }
func f64(n float64) *float64 { return &n }
