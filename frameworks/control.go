package frameworks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/orbitloop"
)

// ErrNoControl reports a control the loop's framework does not have (pause
// and resume exist in CCW and Citadel only).
var ErrNoControl = errors.New("not supported by the framework")

// ErrAlreadyStopped reports a stop of a loop that has stopped.
var ErrAlreadyStopped = errors.New("nothing to stop")

// ErrWrongState is a pause or resume of a loop not in a state it applies
// to (pausing a paused loop, say).
var ErrWrongState = errors.New("not in a state this control applies to")

// wrongState is an error whose message says why, and that is ErrWrongState.
func wrongState(format string, args ...any) error {
	return stateError(fmt.Sprintf(format, args...))
}

type stateError string

func (e stateError) Error() string        { return string(e) }
func (e stateError) Is(target error) bool { return target == ErrWrongState }

// Control stops, pauses and resumes loops in their own formats, each write
// atomic (temp file and rename) under the file's lock, and records each
// change in the loop event journal. The ORBIT loop is stopped by
// orbitloop's one stop path, exactly as `orbit loop stop` and the Stop
// hook stop it.
type Control struct {
	// Index is the project's index: its root, the loop event journal's
	// store, and what the ORBIT loop's stop reads (trust, progress).
	Index *journal.Index
	Now   func() time.Time
}

// root is the project root.
func (c *Control) root() string { return c.Index.Project.Root }

// Stop stops v with status (a shared stop word) and reason:
//
//   - Citadel record: status, stoppedAt, stopReason, updatedAt (Citadel's stopLoop);
//     the daemon: status, stoppedAt, stopReason.
//   - CCW: status failed with failure_reason "<status>: <reason>" (completed for
//     done and verifier-passed), completed_at, updated_at.
//   - Cavekit: teardown, .cavekit/.loop.json removed (with a stale lock).
//   - Conductor: loop_state COMPLETE / PASSED_WITH_WARNINGS with a warning
//     (seed 004's completeWithWarnings), plus stop_reason and stopped_at.
//   - ORBIT: orbitloop.Stop: active false, stop_reason, stopped_at and the
//     trust counters, the session lock freed, the progress file's session
//     summary written (the event says so in Wrote).
func (c *Control) Stop(ctx context.Context, v loop.View, status, reason string) (loop.Event, error) {
	if !loop.IsStopReason(status) {
		return loop.Event{}, fmt.Errorf("stop status %q is not in the shared stop vocabulary (allowed: %s)", status, strings.Join(loop.StopReasons(), ", "))
	}
	now := c.Now()
	path := filepath.Join(c.root(), filepath.FromSlash(v.Path))
	if loop.IsStopped(v.Status) {
		return loop.Event{}, fmt.Errorf("%s %s has already stopped (%s): %w", v.Framework, v.ID, v.Status, ErrAlreadyStopped)
	}
	if v.Framework == loop.ORBIT {
		return c.stopOrbit(ctx, v, status, reason, now)
	}
	var ch change
	var err error
	switch {
	case v.Framework == loop.Citadel && v.Type == "codex-automation":
		err = fmt.Errorf("stop %s: a Codex automation is Codex's to stop (orbit reads it only): %w", v.ID, ErrNoControl)
	case v.Framework == loop.Citadel && v.Type == "daemon":
		ch, err = stopCitadel(ctx, c.root(), path, status, reason, now, true)
	case v.Framework == loop.Citadel:
		ch, err = stopCitadel(ctx, c.root(), path, status, reason, now, false)
	case v.Framework == loop.CCW:
		ch, err = stopCCW(ctx, c.root(), path, status, reason, now)
	case v.Framework == loop.Cavekit:
		ch, err = teardownCavekit(ctx, c.root(), now)
	case v.Framework == loop.Conductor:
		ch, err = stopConductor(ctx, c.root(), path, status, reason, now)
	default:
		err = fmt.Errorf("stop %s loops: %w", v.Framework, ErrNoControl)
	}
	if err != nil {
		return loop.Event{}, c.relErr(err)
	}
	e := loop.EventFor(v, loop.EventStop, now)
	e.Status, e.From, e.NativeStatus = status, v.Status, cmp.Or(ch.native, status)
	e.Detail = cmp.Or(reason, status)
	if ch.from != "" && ch.from != v.NativeStatus {
		e.Detail += " (the file said " + ch.from + " when stopped)"
	}
	e.Data, e.Wrote, e.Next = ch.data, ch.wrote, ch.next
	return e, c.record(ctx, e)
}

// change is what a control did to a framework's files.
type change struct {
	// from is the framework's own status before, as the file said.
	from string
	// native is the framework's own status after ("" when the shared
	// word itself).
	native string
	// wrote lists what was written ("PATH: field, field", "removed PATH").
	wrote []string
	// next says what continues the loop, when something must.
	next string
	// data is kept with the event (a removed file's content).
	data json.RawMessage
}

// wroteFields describes fields written in the file at path.
func wroteFields(root, path string, fields ...string) string {
	return loop.Rel(root, path) + ": " + strings.Join(fields, ", ")
}

// relErr names files relative to the project root in err's message.
func (c *Control) relErr(err error) error {
	if err == nil {
		return nil
	}
	return pathError{err: err, msg: strings.ReplaceAll(err.Error(), c.root()+string(filepath.Separator), "")}
}

type pathError struct {
	err error
	msg string
}

func (e pathError) Error() string { return e.msg }
func (e pathError) Unwrap() error { return e.err }

// Pause pauses a CCW loop (running -> paused) or a Citadel record
// (planned, running or waiting -> paused).
func (c *Control) Pause(ctx context.Context, v loop.View, reason string) (loop.Event, error) {
	return c.setStatus(ctx, v, loop.EventPause, "paused", reason)
}

// Resume resumes a paused CCW loop or a paused (or needs-human-review)
// Citadel record: running again.
func (c *Control) Resume(ctx context.Context, v loop.View, reason string) (loop.Event, error) {
	return c.setStatus(ctx, v, loop.EventResume, "running", reason)
}

func (c *Control) setStatus(ctx context.Context, v loop.View, kind, status, reason string) (loop.Event, error) {
	now := c.Now()
	path := filepath.Join(c.root(), filepath.FromSlash(v.Path))
	var ch change
	var err error
	switch {
	case v.Framework == loop.Citadel && v.Type != "daemon" && v.Type != "codex-automation":
		ch, err = setCitadelStatus(ctx, c.root(), path, v.ID, kind, now)
	case v.Framework == loop.CCW:
		ch, err = setCCWStatus(ctx, c.root(), path, v.ID, kind, now)
	default:
		return loop.Event{}, fmt.Errorf("%s %s: %s: %w (it has no paused state; pause and resume exist for CCW loops and Citadel records)",
			v.Framework, v.ID, kind, ErrNoControl)
	}
	if err != nil {
		return loop.Event{}, c.relErr(err)
	}
	e := loop.EventFor(v, kind, now)
	e.Status, e.NativeStatus, e.From, e.Detail = status, status, v.Status, reason
	if ch.from != "" && ch.from != v.NativeStatus {
		e.Detail = strings.TrimSpace(e.Detail + " (the file said " + ch.from + ")")
	}
	e.Wrote, e.Next = ch.wrote, ch.next
	return e, c.record(ctx, e)
}

// stopOrbit stops the ORBIT loop through orbitloop's one stop path, which
// records the event itself.
func (c *Control) stopOrbit(ctx context.Context, v loop.View, status, reason string, now time.Time) (loop.Event, error) {
	res, err := orbitloop.Stop(ctx, c.Index, orbitloop.StopOptions{Reason: status, Detail: reason}, now)
	switch {
	case err != nil:
		return loop.Event{}, c.relErr(err)
	case res.AlreadyStopped:
		return loop.Event{}, fmt.Errorf("%s %s has already stopped (%s): %w", v.Framework, v.ID, res.PreviousReason, ErrAlreadyStopped)
	}
	return res.Event, nil
}

func (c *Control) record(ctx context.Context, e loop.Event) error {
	h := &loop.History{Root: c.root(), Store: c.Index.Store}
	if err := h.Append(ctx, e); err != nil {
		return fmt.Errorf("the loop was changed, but recording the event failed: %w", err)
	}
	return nil
}

// Apply stops (with status, a stop word), pauses or resumes v, by kind
// (loop.EventStop, loop.EventPause, loop.EventResume).
func (c *Control) Apply(ctx context.Context, v loop.View, kind, status, reason string) (loop.Event, error) {
	switch kind {
	case loop.EventStop:
		return c.Stop(ctx, v, status, reason)
	case loop.EventPause:
		return c.Pause(ctx, v, reason)
	case loop.EventResume:
		return c.Resume(ctx, v, reason)
	}
	return loop.Event{}, fmt.Errorf("loop control %q: want stop, pause or resume", kind)
}
