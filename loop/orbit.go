package loop

import (
	"errors"
	"fmt"
	"time"
)

// DefaultSentinel ends an ORBIT loop when the agent writes it in its last
// message (seed 003's completion sentinel, for ORBIT).
const DefaultSentinel = "<promise>ORBIT COMPLETE</promise>"

// Orbit is what the ORBIT loop's state file says, typed. The seed's fields
// come first; orbit adds completion_sentinel, budget_tokens, tokens_used,
// stop_reason and stopped_at, and the hook's bookkeeping (last_stop_*).
type Orbit struct {
	HasState         bool      `json:"has_state"`
	Active           bool      `json:"active"`
	Iteration        int64     `json:"iteration"`
	MaxIterations    int64     `json:"max_iterations"`
	TimeLimitMinutes int64     `json:"time_limit_minutes"`
	StartedAt        string    `json:"started_at"`
	Started          time.Time `json:"-"`
	TrustLevel       string    `json:"trust_level"`
	EscalationCount  int64     `json:"depth_escalation_counter"`
	Correct          int64     `json:"correct_decisions"`
	Incorrect        int64     `json:"incorrect_decisions"`
	Sentinel         string    `json:"completion_sentinel"`
	BudgetTokens     int64     `json:"budget_tokens"`
	TokensUsed       int64     `json:"tokens_used"`
	StopReason       string    `json:"stop_reason,omitempty"`
	StoppedAt        string    `json:"stopped_at,omitempty"`
	// HookEvent is the hook event that ends an iteration: Stop (the
	// default) or SubagentStop, when the loop runs as a subagent.
	HookEvent string `json:"hook_event"`
}

// ReadOrbit reads the state file at path as the ORBIT loop's state. No
// file is not an error: HasState is false.
func ReadOrbit(path string) (Orbit, *State, error) {
	st, err := ReadState(path)
	if errors.Is(err, ErrNoState) {
		return Orbit{}, nil, nil
	}
	if err != nil {
		return Orbit{}, nil, err
	}
	o, err := st.Orbit()
	return o, st, err
}

// Orbit types the fields of a state; a field of the wrong type is an
// error naming it.
func (s *State) Orbit() (Orbit, error) {
	o := Orbit{HasState: true}
	var errs []error
	num := func(key string) int64 {
		v, _, err := s.Int(key)
		errs = append(errs, err)
		return v
	}
	str := func(key string) string {
		v, _, err := s.String(key)
		errs = append(errs, err)
		return v
	}
	active, _, err := s.Bool("active")
	errs = append(errs, err)
	o.Active = active
	o.Iteration, o.MaxIterations, o.TimeLimitMinutes = num("iteration"), num("max_iterations"), num("time_limit_minutes")
	o.EscalationCount, o.Correct, o.Incorrect = num("depth_escalation_counter"), num("correct_decisions"), num("incorrect_decisions")
	o.BudgetTokens, o.TokensUsed = num("budget_tokens"), num("tokens_used")
	o.StartedAt, o.TrustLevel, o.Sentinel = str("started_at"), str("trust_level"), str("completion_sentinel")
	o.StopReason, o.StoppedAt, o.HookEvent = str("stop_reason"), str("stopped_at"), str("hook_event")
	if o.HookEvent == "" {
		o.HookEvent = "Stop"
	}
	if o.Sentinel == "" {
		o.Sentinel = DefaultSentinel
	}
	if t, err := time.Parse(time.RFC3339Nano, o.StartedAt); err == nil {
		o.Started = t
	}
	return o, errors.Join(errs...)
}

// Deadline is when the time limit runs out (zero without a limit or a valid
// start).
func (o Orbit) Deadline() time.Time {
	if o.TimeLimitMinutes <= 0 || o.Started.IsZero() {
		return time.Time{}
	}
	return o.Started.Add(time.Duration(o.TimeLimitMinutes) * time.Minute)
}

// StartOptions are the limits of a new loop.
type StartOptions struct {
	MaxIterations int64
	TimeLimit     time.Duration
	BudgetTokens  int64
	Sentinel      string
	// HookEvent is Stop (default) or SubagentStop.
	HookEvent string
}

// Start writes an active loop into st (a new State when st is nil): the
// seed's fields in the seed's order, iteration 1 (this run is the first),
// the counters and trust level given, orbit's limits, and how many
// decisions the journal held (so the first Stop knows whether the iteration
// recorded any). Fields already in st that orbit does not own are kept.
func Start(st *State, path string, opts StartOptions, correct, incorrect int, level string, decisions int64, now time.Time) (*State, error) {
	if st == nil {
		st = &State{Path: path}
	}
	sentinel := opts.Sentinel
	if sentinel == "" {
		sentinel = DefaultSentinel
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
		{"iteration", 1},
		{"max_iterations", opts.MaxIterations},
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
	} {
		if err := st.Set(kv.k, kv.v); err != nil {
			return nil, err
		}
	}
	for _, k := range []string{"stop_reason", "stopped_at", "last_stop_session", "last_stop_digest", "last_stop_at", "transcript_path", "transcript_offset", "last_message_id"} {
		st.Delete(k)
	}
	return st, nil
}

// Stop marks the loop inactive with a reason from the shared stop
// vocabulary (seed 001).
func Stop(st *State, reason string, now time.Time) error {
	if !IsStopReason(reason) {
		return fmt.Errorf("stop reason %q is not allowed (allowed: %v)", reason, StopReasons)
	}
	for _, kv := range []struct {
		k string
		v any
	}{{"active", false}, {"stop_reason", reason}, {"stopped_at", now.UTC().Format(time.RFC3339)}} {
		if err := st.Set(kv.k, kv.v); err != nil {
			return err
		}
	}
	return nil
}

// StopReasons is seed 001's shared stop vocabulary.
var StopReasons = []string{"done", "verifier-passed", "verifier-failed", "blocked", "budget-exhausted", "attempt-limit",
	"needs-human-review", "unsafe-to-continue", "no-active-work", "stopped"}

// IsStopReason reports whether s is in the shared stop vocabulary.
func IsStopReason(s string) bool {
	for _, r := range StopReasons {
		if r == s {
			return true
		}
	}
	return false
}
