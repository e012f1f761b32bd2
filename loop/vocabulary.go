package loop

import (
	"slices"
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

// Frameworks lists every framework, in listing order (a new slice each
// call).
func Frameworks() []string { return []string{Citadel, CCW, Cavekit, Conductor, ORBIT} }

// IsFramework reports whether s names a framework.
func IsFramework(s string) bool { return slices.Contains(Frameworks(), s) }

// statuses are the status words of the unified view and of a Citadel loop
// record: Citadel's active states and the shared stop vocabulary (seed 001).
var statuses = []string{"planned", "running", "waiting", "paused", "needs-human-review",
	"done", "verifier-passed", "verifier-failed", "blocked", "budget-exhausted", "attempt-limit",
	"unsafe-to-continue", "no-active-work", "stopped"}

// stopReasons is seed 001's shared stop vocabulary.
var stopReasons = []string{"done", "verifier-passed", "verifier-failed", "blocked", "budget-exhausted", "attempt-limit",
	"needs-human-review", "unsafe-to-continue", "no-active-work", "stopped"}

// stopMeanings are seed 001's meanings of the shared stop words.
var stopMeanings = map[string]string{
	"done":               "Work completed by the loop's declared standard.",
	"verifier-passed":    "The verifier passed and the loop stopped successfully.",
	"verifier-failed":    "The verifier failed and no autonomous repair should continue.",
	"blocked":            "The loop cannot make safe progress without new information.",
	"budget-exhausted":   "The spend, time, session, or attempt budget was reached.",
	"attempt-limit":      "The retry ceiling was reached.",
	"needs-human-review": "A human decision is required before more work.",
	"unsafe-to-continue": "The loop stopped before taking a risky action.",
	"no-active-work":     "There is no campaign, PR, queue item, or task left to process.",
	"stopped":            "The user or operator explicitly stopped the loop.",
}

// Statuses are the status words of the unified view and of a Citadel loop
// record: Citadel's active states, then the shared stop vocabulary (seed
// 001). A new slice each call.
func Statuses() []string { return slices.Clone(statuses) }

// StopReasons is seed 001's shared stop vocabulary (a new slice each call).
func StopReasons() []string { return slices.Clone(stopReasons) }

// StopMeaning is seed 001's meaning of a stop word ("" for another word).
func StopMeaning(word string) string { return stopMeanings[word] }

// Unknown is the status of a loop whose own status word orbit cannot map;
// the word itself is in NativeStatus, and a warning says why.
const Unknown = "unknown"

// IsStatus reports whether s is a status word.
func IsStatus(s string) bool { return slices.Contains(statuses, s) }

// IsStopReason reports whether s is in the shared stop vocabulary.
func IsStopReason(s string) bool { return slices.Contains(stopReasons, s) }

// IsStopped reports whether a loop in status s has stopped: a stop word
// other than needs-human-review (which waits for a person, then resumes).
func IsStopped(s string) bool { return IsStopReason(s) && s != "needs-human-review" }

// StaleAfter is how old a session lock's heartbeat must be before another
// session may take the loop (seed 003's rule, which the ORBIT loop's lock
// follows too).
const StaleAfter = 5 * time.Minute

// ISOTime renders t as JavaScript's toISOString does: the time format of
// Citadel's records and of orbit's loop events.
func ISOTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
