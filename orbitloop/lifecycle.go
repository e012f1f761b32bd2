package orbitloop

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/trust"
)

// Session is the ORBIT loop's state file held under its lock
// (ceo-loop-state.json.lock) for one change to the loop: a start, a stop,
// or the Stop hook's iteration. Every writer of the state file takes this
// lock, so two processes never interleave their changes. Close releases
// it.
type Session struct {
	root   string
	path   string
	unlock func() error
	// Info is the state, typed; State is the file as an ordered object,
	// to be written back. State is nil when there is no state file, or
	// when it is not JSON (ReadErr says why).
	Info  ceo.LoopInfo
	State *loop.State
	// ReadErr is why the state file could not be read: not JSON (State
	// nil), or a field of the wrong type (State set).
	ReadErr error
}

// Open takes the lock of the ORBIT loop's state file under root and reads
// the state. A state file that cannot be read is not an error here
// (Session.ReadErr): a stop must still be able to end such a loop.
func Open(ctx context.Context, root string) (*Session, error) {
	path := filepath.Join(root, project.StateFile)
	unlock, err := flock.Path(ctx, root, path+".lock")
	if err != nil {
		return nil, err
	}
	s := &Session{root: root, path: path, unlock: unlock}
	s.Info, s.State, s.ReadErr = ceo.ReadLoopState(root, path)
	return s, nil
}

// Close releases the state file's lock.
func (s *Session) Close() error {
	if s.unlock == nil {
		return nil
	}
	err := s.unlock()
	s.unlock = nil
	return err
}

// StartOptions are the limits of a new loop.
type StartOptions struct {
	MaxIterations int64
	TimeLimit     time.Duration
	BudgetTokens  int64
	// Sentinel ends the loop when the agent writes it (default
	// ceo.DefaultSentinel).
	Sentinel string
	// HookEvent is Stop (default) or SubagentStop.
	HookEvent string
	// Force restarts a loop that is still active, and replaces a state
	// file that is not JSON (its bytes saved beside it first).
	Force bool
}

// Started is what a start did.
type Started struct {
	// Trust is the trust the loop starts at (its counters are in the state).
	Trust trust.Headline
	// Recovered is where a state file that was not JSON was saved (with
	// Force), "" otherwise.
	Recovered string
	// Event is the start recorded in the loop event journal.
	Event loop.Event
	// First is the loop's first iteration: 1 in a new project, else the
	// one after the highest the journal or the state held.
	First int64
	// Notes say what starting adopted or warns about (see ceo.Reconcile).
	Notes []string
}

// Start starts the ORBIT loop (see Session.Start) under the state file's
// lock.
func Start(ctx context.Context, ix *journal.Index, opts StartOptions, now time.Time) (Started, error) {
	s, err := Open(ctx, ix.Project.Root)
	if err != nil {
		return Started{}, err
	}
	defer s.Close()
	return s.Start(ctx, ix, opts, now)
}

// Start writes the loop active at its first iteration (the run that
// starts the loop is that iteration: 1 in a new project, else the one after
// the highest the journal or the state held, so that numbering never
// restarts), with the correct and incorrect counters and the trust level
// of the journal (indexed first; counters the state held before orbit are
// adopted, see ceo.Reconcile), the limits given (max_iterations counted
// from the first iteration), and the completion sentinel; fields of the
// state file orbit does not own are kept. It frees the session lock (the next Stop hook's session takes
// it) and records a start event.
func (s *Session) Start(ctx context.Context, ix *journal.Index, opts StartOptions, now time.Time) (Started, error) {
	var res Started
	o, st, err := s.Info, s.State, s.ReadErr
	switch {
	case err != nil && st == nil && opts.Force:
		// Not JSON: start afresh, the old bytes saved beside it.
		if st, res.Recovered, err = recoverState(s.root, s.path, now); err != nil {
			return res, err
		}
		o = ceo.LoopInfo{}
	case err != nil && st == nil:
		return res, fmt.Errorf("%w (`orbit loop start --force` saves it aside and starts afresh)", err)
	case err != nil && !opts.Force:
		return res, err
	}
	if o.Active && !opts.Force {
		return res, fmt.Errorf("an ORBIT loop is already active (iteration %d, started %s); `orbit loop stop` it, or pass --force", o.Iteration, o.StartedAt)
	}
	from := ""
	if s.State != nil {
		from = s.view(now).Status
	}
	if _, err := ix.Sync(ctx, journal.SyncOptions{}); err != nil {
		return res, err
	}
	fresh := st == nil
	if !fresh {
		// Counters the loop kept before orbit are adopted, not zeroed.
		rec, err := ceo.Reconcile(ctx, ix, st, now)
		if err != nil {
			return res, err
		}
		res.Notes = rec.Notes
	}
	if res.Trust, err = trust.Current(ctx, ix.Store); err != nil {
		return res, err
	}
	counts, err := ix.Store.Counts(ctx)
	if err != nil {
		return res, err
	}
	// Iterations never restart: the new loop goes on from the highest
	// iteration the journal or the state holds, so that its ids never
	// meet an earlier loop's, no summary mixes two loops, and an earlier
	// loop's unverified decisions stay stale for `orbit stale`.
	last, err := ix.Store.MaxIteration(ctx)
	if err != nil {
		return res, err
	}
	res.First = max(last, o.Iteration) + 1
	h := res.Trust
	if st, err = markStarted(st, s.root, s.path, opts, res.First, h.Correct, h.Incorrect, string(h.Level), counts.Decisions, now); err != nil {
		return res, err
	}
	if fresh {
		// orbit meets the counters it just wrote (nothing to adopt).
		if _, err := ceo.Reconcile(ctx, ix, st, now); err != nil {
			return res, err
		}
	}
	if err := st.Write(); err != nil {
		return res, err
	}
	s.State, s.ReadErr = st, nil
	if err := Release(ctx, s.root, ""); err != nil {
		return res, err
	}
	after := s.view(now)
	res.Event = loop.EventFor(after, loop.EventStart, now)
	res.Event.From = from
	limit := "no time limit"
	if opts.TimeLimit > 0 {
		limit = "time limit " + opts.TimeLimit.String()
	}
	cap := "no iteration cap"
	if opts.MaxIterations > 0 {
		cap = fmt.Sprintf("%d iterations (to iteration %d)", opts.MaxIterations, res.First+opts.MaxIterations-1)
	}
	res.Event.Detail = fmt.Sprintf("iteration %d, %s, %s, trust %s", res.First, cap, limit, h.Level)
	if err := s.record(ctx, ix, res.Event); err != nil {
		return res, err
	}
	return res, nil
}

// StopOptions say why the loop stops.
type StopOptions struct {
	// Reason is the stop word, from the shared stop vocabulary.
	Reason string
	// Detail says why in words ("" for the stop word alone).
	Detail string
	// Owner frees the session lock only if this session holds it (the
	// Stop hook's own session); "" frees it whoever holds it.
	Owner string
}

// Stopped is what a stop did.
type Stopped struct {
	// Before is the loop as it was just before the stop.
	Before loop.View
	// Event is the stop recorded in the loop event journal (zero when
	// AlreadyStopped).
	Event loop.Event
	// AlreadyStopped: the loop had stopped already, with PreviousReason
	// at PreviousAt; nothing was written (the first stop's reason is the
	// record of why the loop ended), the session lock was freed.
	AlreadyStopped bool
	// WasInactive: the loop was inactive without a stop word that ends
	// it (needs-human-review, or none); it is stopped again.
	WasInactive    bool
	PreviousReason string
	PreviousAt     string
	// ReadErr is why the state file could not be read; the loop was
	// stopped anyway. Recovered is where a state file that was not JSON
	// was saved before a fresh one was written.
	ReadErr   error
	Recovered string
	// Notes are what the stop adopted or warns about (ceo.Reconcile), and
	// what went wrong after the loop stopped without undoing the stop (a
	// session lock that could not be freed).
	Notes []string
	// Progress is what orbit's part of the progress file now shows, the
	// session summary in it; ProgressWrite says whether a progress file
	// orbit could not parse was kept as a backup first.
	Progress      ceo.Progress
	ProgressWrite ProgressWrite
}

// Stop stops the ORBIT loop (see Session.Stop) under the state file's
// lock. The CLI (`orbit loop stop`), the HTTP API (POST
// /api/v1/loops/orbit/stop) and the Stop hook's teardown all stop the loop
// through Session.Stop.
func Stop(ctx context.Context, ix *journal.Index, opts StopOptions, now time.Time) (Stopped, error) {
	s, err := Open(ctx, ix.Project.Root)
	if err != nil {
		return Stopped{}, err
	}
	defer s.Close()
	return s.Stop(ctx, ix, opts, now)
}

// Stop is the one way the ORBIT loop stops. It writes the state file
// inactive with the stop word and time, and the correct and incorrect
// counters and trust level of the journal (indexed first); frees the
// session lock; records the stop in the loop event journal; and writes the
// progress file with the session summary at its end. A state file with a
// field of the wrong type is stopped anyway (only the fields a stop owns
// change); one that is not JSON is saved aside and replaced by a stopped
// state, so the next Stop hook lets the session end. A loop that has
// stopped already keeps its first stop's reason and time: nothing is
// written, the session lock is freed.
func (s *Session) Stop(ctx context.Context, ix *journal.Index, opts StopOptions, now time.Time) (Stopped, error) {
	var res Stopped
	if !loop.IsStopReason(opts.Reason) {
		return res, fmt.Errorf("stop reason %q is not allowed (allowed: %s)", opts.Reason, strings.Join(loop.StopReasons(), ", "))
	}
	o, st := s.Info, s.State
	res.ReadErr = s.ReadErr
	switch {
	case s.ReadErr != nil && st == nil:
		// Not JSON, so nothing to keep field by field: save the bytes
		// aside and write a stopped state (the loop cannot go on with a
		// broken state anyway).
		var err error
		if st, res.Recovered, err = recoverState(s.root, s.path, now); err != nil {
			return res, err
		}
		o = ceo.LoopInfo{HasState: true, Active: true}
	case s.ReadErr != nil:
		// A field of the wrong type: a stop sets only its own fields.
		o.Active = true
	}
	if !o.HasState {
		return res, fmt.Errorf("no ORBIT loop here: %s does not exist (`orbit loop start` starts one)", project.StateFile)
	}
	res.PreviousReason, res.PreviousAt = o.StopReason, o.StoppedAt
	if !o.Active && loop.IsStopped(o.StopReason) {
		// Idempotent: the first stop's reason and time are the record of
		// why the loop ended; a second stop must not overwrite them. (A
		// loop stopped for needs-human-review waits for a person, whose
		// stop is recorded.)
		res.AlreadyStopped = true
		return res, Release(ctx, s.root, opts.Owner)
	}
	res.WasInactive = !o.Active
	res.Before = s.view(now)
	if _, err := ix.Sync(ctx, journal.SyncOptions{}); err != nil {
		return res, err
	}
	rec, err := ceo.Reconcile(ctx, ix, st, now)
	if err != nil {
		return res, err
	}
	res.Notes = append(res.Notes, rec.Notes...)
	fields := rec.Fields
	stopped, err := markStopped(st, opts.Reason, now)
	if err != nil {
		return res, err
	}
	fields = append(fields, stopped...)
	if err := st.Write(); err != nil {
		return res, err
	}
	s.State, s.ReadErr = st, nil
	if err := Release(ctx, s.root, opts.Owner); err != nil {
		res.Notes = append(res.Notes, err.Error())
	}
	e := loop.EventFor(res.Before, loop.EventStop, now)
	e.Status, e.From, e.NativeStatus = opts.Reason, res.Before.Status, "inactive ("+opts.Reason+")"
	e.Detail = cmp.Or(opts.Detail, opts.Reason)
	// What the stop writes, as every framework's control says it: the
	// event is recorded before the progress file is written because the
	// progress shows the latest events, this one among them.
	if res.Recovered != "" {
		e.Wrote = append(e.Wrote, "saved the state file that was not JSON as "+loop.Rel(s.root, res.Recovered))
	}
	e.Wrote = append(e.Wrote, loop.Rel(s.root, s.path)+": "+strings.Join(fields, ", "),
		project.ProgressFile+": session summary")
	if err := s.record(ctx, ix, e); err != nil {
		return res, err
	}
	res.Event = e
	if res.Progress, err = ceo.GatherProgress(ctx, ix, now); err != nil {
		return res, err
	}
	res.ProgressWrite, err = WriteProgress(ctx, ix, res.Progress)
	if n := res.ProgressWrite.Note(); n != "" {
		res.Notes = append(res.Notes, n)
	}
	return res, err
}

// view is the loop as the unified view shows it now; a state file the view
// cannot read is shown as unknown.
func (s *Session) view(now time.Time) loop.View {
	v, ok, _ := View(s.root, now)
	if !ok {
		v = loop.View{Framework: loop.ORBIT, ID: ID, Title: "ORBIT CEO loop", Path: project.StateFile, Status: loop.Unknown}
	}
	return v
}

// record appends e to the loop event journal, and indexes it.
func (s *Session) record(ctx context.Context, ix *journal.Index, e loop.Event) error {
	h := &loop.History{Root: s.root, Store: ix.Store}
	if err := h.Append(ctx, e); err != nil {
		return fmt.Errorf("the loop was changed, but recording the event failed: %w", err)
	}
	return nil
}
