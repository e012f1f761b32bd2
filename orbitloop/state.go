package orbitloop

import (
	"fmt"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
)

// markStarted writes an active loop into st (a new State when st is nil): the
// seed's fields in the seed's order, the iteration first (this run is the
// loop's first iteration, also kept as first_iteration), the counters and
// trust level given, orbit's limits (max_iterations counted from first, as
// the seed compares iteration with it), and how many decisions the journal
// held (so the first Stop knows whether the iteration recorded any). Fields
// already in st that orbit does not own are kept.
func markStarted(st *loop.State, root, path string, opts StartOptions, first int64, correct, incorrect int, level string, decisions int64, now time.Time) (*loop.State, error) {
	if st == nil {
		st = &loop.State{Root: root, Path: path}
	}
	maxIterations := int64(0)
	if opts.MaxIterations > 0 {
		maxIterations = first + opts.MaxIterations - 1
	}
	sentinel := opts.Sentinel
	if sentinel == "" {
		sentinel = ceo.DefaultSentinel
	}
	event := opts.HookEvent
	if event == "" {
		event = "Stop"
	}
	for _, kv := range []struct {
		k string
		v any
	}{
		{"active", true},
		{"iteration", first},
		{"max_iterations", maxIterations},
		{"time_limit_minutes", int64(opts.TimeLimit / time.Minute)},
		{"started_at", now.UTC().Format(time.RFC3339)},
		{"trust_level", level},
		{"depth_escalation_counter", 0},
		{"correct_decisions", correct},
		{"incorrect_decisions", incorrect},
		{"completion_sentinel", sentinel},
		{"budget_tokens", opts.BudgetTokens},
		{"tokens_used", 0},
		{"last_stop_decisions", decisions},
		{"hook_event", event},
		{ceo.FirstIterationField, first},
	} {
		if err := st.Set(kv.k, kv.v); err != nil {
			return nil, err
		}
	}
	for _, k := range []string{"stop_reason", "stopped_at", ceo.FirstSeenField, "last_stop_session", "last_stop_digest", "last_stop_at", "transcript_path", "transcript_offset", "last_message_id"} {
		st.Delete(k)
	}
	return st, nil
}

// markStopped marks the loop inactive in st with a reason from the shared
// stop vocabulary (seed 001), and returns the fields it set.
func markStopped(st *loop.State, reason string, now time.Time) ([]string, error) {
	if !loop.IsStopReason(reason) {
		return nil, fmt.Errorf("stop reason %q is not allowed (allowed: %v)", reason, loop.StopReasons())
	}
	var fields []string
	for _, kv := range []struct {
		k string
		v any
	}{{"active", false}, {"stop_reason", reason}, {"stopped_at", now.UTC().Format(time.RFC3339)}} {
		if err := st.Set(kv.k, kv.v); err != nil {
			return nil, err
		}
		fields = append(fields, kv.k)
	}
	return fields, nil
}

// recoverState replaces a state file that is not JSON with an empty state,
// so that the loop can be stopped or restarted: the file's bytes are first
// saved beside it (ceo-loop-state.json.malformed-{time}), whose path is
// returned. Nothing is lost; the fields the broken file held can be copied
// back by hand.
func recoverState(root, path string, now time.Time) (*loop.State, string, error) {
	path = project.Abs(root, path)
	data, err := project.ReadFile(root, path, loop.MaxStateBytes)
	if err != nil {
		return nil, "", fmt.Errorf("recover: %w", err)
	}
	backup := path + ".malformed-" + now.UTC().Format("20060102T150405Z")
	if err := journal.WriteFileAtomic(root, backup, data, 0o644); err != nil {
		return nil, "", err
	}
	st, err := loop.ParseState(path, []byte("{}"))
	if st != nil {
		st.Root = root
	}
	return st, backup, err
}
