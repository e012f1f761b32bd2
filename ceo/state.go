package ceo

import (
	"errors"
	"fmt"
	"time"

	"github.com/orbit-loop/orbit/loop"
)

// EscalationLimit is seed 000's depth escalation rule: after this many
// iterations in a row with trivial decisions only, the loop goes proactive
// (and does a proactive governance scan before it is done).
const EscalationLimit = 3

// DefaultSentinel ends an ORBIT loop when the agent writes it in its last
// message (seed 003's completion sentinel, for ORBIT).
const DefaultSentinel = "<promise>ORBIT COMPLETE</promise>"

// LoopInfo is what the ORBIT loop's state file says, typed (HasState false
// when the project has none). The seed's fields come first; orbit adds
// completion_sentinel, budget_tokens, tokens_used, first_iteration,
// first_seen_at, stop_reason and stopped_at, and the hook's bookkeeping
// (last_stop_*).
type LoopInfo struct {
	HasState         bool   `json:"has_state"`
	Active           bool   `json:"active"`
	Iteration        int64  `json:"iteration"`
	MaxIterations    int64  `json:"max_iterations"`
	TimeLimitMinutes int64  `json:"time_limit_minutes"`
	StartedAt        string `json:"started_at"`
	// Started is when the loop began: started_at, or when started_at is
	// not a time (the upstream placeholder "$STARTED"), first_seen_at,
	// when orbit first saw the loop (StartedUnreadable set).
	Started           time.Time `json:"-"`
	StartedUnreadable bool      `json:"started_at_unreadable,omitempty"`
	FirstSeenAt       string    `json:"first_seen_at,omitempty"`
	TrustLevel        string    `json:"trust_level"`
	EscalationCount   int64     `json:"depth_escalation_counter"`
	Correct           int64     `json:"correct_decisions"`
	Incorrect         int64     `json:"incorrect_decisions"`
	Sentinel          string    `json:"completion_sentinel"`
	BudgetTokens      int64     `json:"budget_tokens"`
	TokensUsed        int64     `json:"tokens_used"`
	// FirstIteration is the loop's first iteration (0 when orbit did not
	// start it: a loop started by /forge:ceo-loop).
	FirstIteration int64  `json:"first_iteration,omitempty"`
	StopReason     string `json:"stop_reason,omitempty"`
	StoppedAt      string `json:"stopped_at,omitempty"`
	// HookEvent is the hook event that ends an iteration: Stop (the
	// default) or SubagentStop, when the loop runs as a subagent.
	HookEvent string `json:"hook_event"`
}

// ReadLoopState reads the state file at path as the ORBIT loop's state,
// typed, and as the ordered object it is (to be written back). No file is
// not an error: HasState is false and the State nil. A field of the wrong
// type is an error naming it, with the State still returned.
func ReadLoopState(root, path string) (LoopInfo, *loop.State, error) {
	st, err := loop.ReadState(root, path)
	if errors.Is(err, loop.ErrNoState) {
		return LoopInfo{}, nil, nil
	}
	if err != nil {
		return LoopInfo{}, nil, err
	}
	o, err := loopInfoOf(st)
	return o, st, err
}

// loopInfoOf types the fields of a state; a field of the wrong type is an
// error naming it.
func loopInfoOf(s *loop.State) (LoopInfo, error) {
	o := LoopInfo{HasState: true}
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
	o.FirstIteration = num(FirstIterationField)
	// Numbers past these bounds overflow what orbit computes from them
	// (the next iteration, minutes as a duration): refused, naming the
	// field, and taken as 0 meanwhile.
	for _, f := range []struct {
		key string
		v   *int64
		max int64
	}{
		{"iteration", &o.Iteration, MaxIterations},
		{"max_iterations", &o.MaxIterations, MaxIterations},
		{FirstIterationField, &o.FirstIteration, MaxIterations},
		{"time_limit_minutes", &o.TimeLimitMinutes, MaxTimeLimitMinutes},
		{"depth_escalation_counter", &o.EscalationCount, MaxCount},
		{"correct_decisions", &o.Correct, MaxCount},
		{"incorrect_decisions", &o.Incorrect, MaxCount},
		{"budget_tokens", &o.BudgetTokens, MaxCount},
		{"tokens_used", &o.TokensUsed, MaxCount},
	} {
		if *f.v < 0 || *f.v > f.max {
			errs = append(errs, fmt.Errorf("%s: %s is %d, out of range (0 to %d)", s.Path, f.key, *f.v, f.max))
			*f.v = 0
		}
	}
	o.StartedAt, o.TrustLevel, o.Sentinel = str("started_at"), str("trust_level"), str("completion_sentinel")
	o.StopReason, o.StoppedAt, o.HookEvent = str("stop_reason"), str("stopped_at"), str("hook_event")
	if o.HookEvent == "" {
		o.HookEvent = "Stop"
	}
	if o.Sentinel == "" {
		o.Sentinel = DefaultSentinel
	}
	o.FirstSeenAt = str(FirstSeenField)
	if t, err := time.Parse(time.RFC3339Nano, o.StartedAt); err == nil {
		o.Started = t
	} else if o.StartedAt != "" {
		o.StartedUnreadable = true
		if t, err := time.Parse(time.RFC3339Nano, o.FirstSeenAt); err == nil {
			o.Started = t
		}
	}
	return o, errors.Join(errs...)
}

// Bounds on the state file's numbers.
const (
	// MaxIterations bounds iteration and max_iterations.
	MaxIterations = 1_000_000_000
	// MaxTimeLimitMinutes bounds time_limit_minutes: ten years.
	MaxTimeLimitMinutes = 10 * 365 * 24 * 60
	// MaxCount bounds the counters and token figures.
	MaxCount = 1 << 50
)

// clockSkew is how far in the future started_at may be (another machine's
// clock) before it is a problem.
const clockSkew = 5 * time.Minute

// CheckStart reports a started_at in the future at now: the time limit
// would never run out, and "minutes used" would be negative.
func (o LoopInfo) CheckStart(now time.Time) error {
	if o.Started.IsZero() || !o.Started.After(now.Add(clockSkew)) {
		return nil
	}
	return fmt.Errorf("started_at %s is in the future (now %s): the time limit would never run out; fix started_at, or `orbit loop start --force`",
		o.StartedAt, now.UTC().Format(time.RFC3339))
}

// Deadline is when the time limit runs out (zero without a limit or a valid
// start).
func (o LoopInfo) Deadline() time.Time {
	if o.TimeLimitMinutes <= 0 || o.Started.IsZero() {
		return time.Time{}
	}
	return o.Started.Add(time.Duration(o.TimeLimitMinutes) * time.Minute)
}
