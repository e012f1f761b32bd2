package loop

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/journal"
)

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

	// Derived: the framework's files do not record why the loop stopped,
	// so the status is derived (Cavekit after teardown); a stop orbit
	// recorded takes precedence (History.Observe).
	Derived bool `json:"-"`
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

// Warnf adds a warning about the loop.
func (v *View) Warnf(format string, args ...any) {
	v.Warnings = append(v.Warnings, fmt.Sprintf(format, args...))
}

// Note adds a warning when s says something.
func (v *View) Note(s string) {
	if s != "" {
		v.Warnings = append(v.Warnings, s)
	}
}

// AddDetail adds a named fact, when value says something.
func (v *View) AddDetail(name, value string) {
	if value != "" {
		v.Details = append(v.Details, Detail{name, value})
	}
}

// AddFile lists a file of the loop (path under root).
func (v *View) AddFile(root, path string) {
	v.Files = append(v.Files, Rel(root, path))
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

// Scan is every loop found in a project. Its problems are the files orbit
// could not read as loops, the records that break their framework's
// contract (a Citadel status outside the vocabulary), and the loop events
// journal's findings.
type Scan struct {
	Loops    []View            `json:"loops"`
	Problems []journal.Problem `json:"problems"`
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

// Rel is path relative to root, with forward slashes: how views, events
// and problems name files.
func Rel(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(r)
}

// ParseTime parses the timestamps the frameworks write: RFC 3339 with or
// without fractions, or a bare date.
func ParseTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// CheckTime warns when a timestamp field holds something else (a template
// placeholder like "{ISO timestamp}" or "$STARTED").
func (v *View) CheckTime(field, value string) {
	if value == "" {
		return
	}
	if _, ok := ParseTime(value); !ok {
		v.Warnf("%s is not a time: %q", field, value)
	}
}

// Latest is the latest of the timestamps given (as written), or the last
// non-empty one when none parses.
func Latest(values ...string) string {
	var best string
	var bestT time.Time
	for _, s := range values {
		if s == "" {
			continue
		}
		t, ok := ParseTime(s)
		switch {
		case ok && (bestT.IsZero() || t.After(bestT)):
			best, bestT = s, t
		case !ok && bestT.IsZero():
			best = s
		}
	}
	return best
}
