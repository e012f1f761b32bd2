// Package ceo owns seed 000's decision protocol as operations that cannot be
// got wrong: a request becomes a journaled decision (depth classified, tier
// from the matrix at the current trust level, a default decision where the
// tier makes one, an id taken under the journal's lock), the pending queue is
// processed as the REASON phase does, retrograde outcomes are recorded as
// events, and the loop's state file is kept in step with them.
package ceo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/policy"
	"github.com/orbit-loop/orbit/precedent"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/queue"
	"github.com/orbit-loop/orbit/trust"
)

// InputError is a request that cannot be decided as given: the message says
// which flag or field to change.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// IsInput reports whether err is about the request (an *InputError, a
// *journal.FieldError, a bad queue item) rather than a failure to do it.
func IsInput(err error) bool {
	var ie *InputError
	var fe *journal.FieldError
	var qe *queue.Error
	return errors.As(err, &ie) || errors.As(err, &fe) || errors.As(err, &qe)
}

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// Input is what a decision is made from: a pending request's fields and the
// agent's verdict.
type Input struct {
	Title      string
	Category   string
	Impact     string
	Reversible *bool
	Depth      string
	Decision   string
	Reason     string
	NextAction string
	Confidence *float64
	Iteration  *int64
	Requestor  string
	Context    string
	RequestID  string
	// Retro is the verdict on an earlier decision that this line carries.
	Retro *RetroRef
}

// RetroRef names an earlier decision and its outcome.
type RetroRef struct {
	ID      string
	Outcome string
}

// ParseOutcome accepts CORRECT, INCORRECT and seed 000's CONFIRMED, FAILED
// (any case).
func ParseOutcome(s string) (string, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "CORRECT", "CONFIRMED":
		return journal.OutcomeCorrect, nil
	case "INCORRECT", "FAILED":
		return journal.OutcomeIncorrect, nil
	}
	allowed := []string{"CORRECT", "INCORRECT", "CONFIRMED", "FAILED"}
	return "", &journal.FieldError{Field: "outcome", Value: s, Allowed: allowed, Problem: "is not allowed", Suggest: journal.Closest(s, allowed)}
}

// ParseRetroRef reads "ID=OUTCOME", the verdict on an earlier decision a
// decision line carries (--retro, the request's retro field, the MCP decide
// tool's retro argument); "" is none.
func ParseRetroRef(s string) (*RetroRef, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	id, out, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(id) == "" {
		return nil, &journal.FieldError{Field: "retro", Value: s, Problem: "is not ID=OUTCOME (e.g. iter-6-2=CORRECT)"}
	}
	outcome, err := ParseOutcome(out)
	if err != nil {
		fe := err.(*journal.FieldError)
		fe.Field, fe.Value = "retro", s
		return nil, fe
	}
	return &RetroRef{ID: strings.TrimSpace(id), Outcome: outcome}, nil
}

// Result is a decision made (or, in a dry run, that would be made): the
// record in its one JSON form, what it was made from beside it.
type Result struct {
	// DecisionView is the record; its id is empty (null) in a dry run.
	journal.DecisionView
	// NextID is, in a dry run, the id the decision would take if recorded
	// now (empty, null, when it was recorded: its id is the record's).
	NextID     string `json:"next_id,omitempty"`
	Impact     string `json:"impact"`
	Reversible bool   `json:"reversible"`
	// Level is the trust level the tier was taken at.
	Level   trust.Level `json:"trust_level"`
	Written bool        `json:"written"`
	// Existing: the request's id was already in the journal; the record
	// is the decision made for it then (nothing was written).
	Existing bool `json:"existing"`
	// Precedents are the most similar past decisions (Similar).
	Precedents []precedent.Hit `json:"precedents"`
	// Sync is what syncing the journal found on the way (rejected lines
	// other tools appended, torn tails).
	Sync journal.SyncReport `json:"-"`
	// Warnings are what went wrong after the decision was durably recorded
	// (the state file could not be brought in step): the decision stands.
	Warnings []string `json:"warnings,omitempty"`
}

// Options tune the operations.
type Options struct {
	DryRun bool
	// AllOrNothing: in a batch, one input that cannot be decided stops
	// every other from being written.
	AllOrNothing bool
	Now          func() time.Time
}

func (o Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

func (in *Input) validate() error {
	for _, f := range []struct{ field, v string }{
		{"title", in.Title}, {"reason", in.Reason}, {"next_action", in.NextAction},
		{"requestor", in.Requestor}, {"context", in.Context}, {"request_id", in.RequestID},
	} {
		switch {
		case !utf8.ValidString(f.v):
			return &journal.FieldError{Field: f.field, Problem: fmt.Sprintf("is not valid UTF-8 (a byte at %d): the journal holds text only", journal.InvalidUTF8At([]byte(f.v))+1)}
		case len(f.v) > journal.MaxFieldBytes:
			return &journal.FieldError{Field: f.field, Problem: fmt.Sprintf("is %d bytes long; at most %d", len(f.v), journal.MaxFieldBytes)}
		}
	}
	if strings.TrimSpace(in.Title) == "" {
		return journal.Required("title", "what is being decided")
	}
	// Enumerations in any case; the journal gets the canonical spelling.
	for _, e := range []struct {
		field    string
		v        *string
		allowed  []string
		required bool
	}{
		{"category", &in.Category, journal.Categories, true},
		{"impact", &in.Impact, policy.Impacts, true},
		{"depth", &in.Depth, journal.Depths, false},
		{"decision", &in.Decision, journal.DecisionValues, false},
	} {
		v, err := journal.ParseEnum(e.field, *e.v, e.allowed)
		if err != nil {
			return err
		}
		if v == "" && e.required {
			return &journal.FieldError{Field: e.field, Problem: "is required", Allowed: e.allowed}
		}
		*e.v = v
	}
	switch {
	case in.Reversible == nil:
		return &journal.FieldError{Field: "reversible", Problem: "is required: say whether the change can be undone (--reversible or --irreversible)"}
	case in.Confidence != nil && !(*in.Confidence >= 0 && *in.Confidence <= 1): // NaN too
		return &journal.FieldError{Field: "confidence", Value: fmt.Sprint(*in.Confidence), Problem: "is outside 0..1"}
	case in.Iteration != nil && *in.Iteration < 0:
		return &journal.FieldError{Field: "iteration", Value: fmt.Sprint(*in.Iteration), Problem: "is negative"}
	case in.Decision != "" && strings.TrimSpace(in.Reason) == "":
		return journal.Required("reason", "with a decision: the journal is the only record of why")
	}
	if in.Retro != nil {
		out, err := ParseOutcome(in.Retro.Outcome)
		if err != nil {
			return err
		}
		in.Retro.Outcome = out
	}
	return nil
}

// depthTier is the least cautious tier a depth allows: an item given a
// deeper depth than its impact and reversibility make is not auto-approved.
var depthTier = map[string]string{"trivial": "auto_approve", "light": "quick_review", "medium": "quick_review", "heavy": "deep_think"}

// make turns a valid input into a decision at a trust level. In a dry run
// an item its tier does not decide is classified with its decision left
// open.
func (in *Input) make(id string, iteration int64, level trust.Level, now time.Time, dryRun bool) (journal.Decision, error) {
	tier, err := policy.Tier(level, in.Impact, *in.Reversible)
	if err != nil {
		return journal.Decision{}, err
	}
	depth := policy.Classify(in.Category, in.Impact, *in.Reversible)
	if in.Depth != "" {
		if slices.Index(journal.Depths, in.Depth) > slices.Index(journal.Depths, depth) {
			if floor := depthTier[in.Depth]; slices.Index(journal.Tiers, floor) > slices.Index(journal.Tiers, tier) {
				tier = floor
			}
		}
		depth = in.Depth
	}
	decision, reason := in.Decision, in.Reason
	if decision == "" {
		var ok bool
		decision, reason, ok = policy.DefaultDecision(tier, in.Impact, *in.Reversible, level)
		if !ok && dryRun {
			decision, reason = "", in.Reason
		} else if !ok {
			rev := "reversible"
			if !*in.Reversible {
				rev = "irreversible"
			}
			return journal.Decision{}, journal.Required("decision", fmt.Sprintf("%q is a %s item (impact %s, %s, depth %s, trust %s); decide APPROVED, NEEDS_REVIEW or REJECTED with a reason",
				in.Title, tier, in.Impact, rev, depth, level))
		}
		if in.Reason != "" && decision != "" {
			reason = in.Reason
		}
	}
	d := journal.Decision{
		ID: id, Iteration: iteration, TS: now.UTC().Format(time.RFC3339),
		Tier: tier, Depth: depth, Category: in.Category, Input: in.Title,
		Decision: decision, Reason: reason, NextAction: in.NextAction,
		Verification: "PENDING",
		Retrograde:   journal.Retrograde{Outcome: journal.OutcomeNA},
		Confidence:   in.Confidence,
		Requestor:    in.Requestor, Context: in.Context, RequestID: in.RequestID,
	}
	if in.Retro != nil {
		prev := in.Retro.ID
		d.Retrograde = journal.Retrograde{PreviousID: &prev, Outcome: in.Retro.Outcome}
	}
	return d, nil
}

// defaultIteration is the state file's iteration, else the journal's
// highest, else 1.
func defaultIteration(ctx context.Context, ix *journal.Index) (int64, error) {
	st, err := loop.ReadState(ix.Project.Root, project.StateFile)
	switch {
	case err == nil:
		n, ok, err := st.Int("iteration")
		if err != nil {
			return 0, err
		}
		if ok && n > 0 {
			return n, nil
		}
	case !errors.Is(err, loop.ErrNoState):
		return 0, err
	}
	n, err := ix.Store.MaxIteration(ctx)
	return max(n, 1), err
}

// Decide records one decision: classified, tiered at the current trust
// level, with its id taken under the journal's lock, then synced; the state
// file's counters follow. In a dry run nothing is written.
func Decide(ctx context.Context, ix *journal.Index, in Input, opts Options) (Result, error) {
	res, errs, err := DecideBatch(ctx, ix, []Input{in}, opts)
	if err != nil {
		return res[0], err
	}
	return res[0], errs[0]
}

// DecideBatch records several decisions with one journal append, one fsync
// and one sync (group commit: what a service does with requests that arrive
// together). Each input gets its own result or error; a bad input does not
// stop the others. err is a failure of the batch as a whole (nothing of it
// acknowledged).
func DecideBatch(ctx context.Context, ix *journal.Index, ins []Input, opts Options) ([]Result, []error, error) {
	res := make([]Result, len(ins))
	errs := make([]error, len(ins))
	valid := 0
	for i := range ins {
		if errs[i] = ins[i].validate(); errs[i] == nil {
			res[i] = Result{Impact: ins[i].Impact, Reversible: *ins[i].Reversible}
			valid++
		}
	}
	if valid == 0 || (opts.AllOrNothing && valid < len(ins)) {
		return res, errs, nil
	}
	made := make([]bool, len(ins))
	build := func(ctx context.Context, ids *journal.IDs) ([]journal.Decision, error) {
		h, err := trust.Current(ctx, ix.Store)
		if err != nil {
			return nil, err
		}
		var out []journal.Decision
		for i := range ins {
			if errs[i] != nil {
				continue
			}
			if ins[i].RequestID != "" {
				// The request id is the idempotency key: a retried hook
				// is answered with what was recorded the first time.
				row, found, err := ix.Store.DecisionByRequest(ctx, ins[i].RequestID)
				if err != nil {
					return nil, err
				}
				if found {
					res[i].DecisionView, res[i].Level, res[i].Existing = journal.ViewOf(&row), h.Level, true
					continue
				}
			}
			d, err := makeOne(ctx, ix, &ins[i], ids, h.Level, opts)
			if err != nil {
				if !IsInput(err) {
					return nil, err
				}
				errs[i] = err
				if opts.AllOrNothing {
					clear(made)
					return nil, nil
				}
				continue
			}
			res[i].Level, res[i].DecisionView, made[i] = h.Level, journal.NewView(d), true
			if opts.DryRun {
				res[i].NextID, res[i].ID = d.ID, ""
			}
			out = append(out, d)
		}
		return out, nil
	}
	var sync journal.SyncReport
	var err error
	if opts.DryRun {
		if sync, err = ix.Sync(ctx, journal.SyncOptions{}); err == nil {
			_, err = build(ctx, ix.PreviewIDs())
		}
	} else if err = AdoptBaseline(ctx, ix, opts.now()); err == nil {
		sync, err = ix.Record(ctx, build)
	}
	written := false
	for i := range res {
		res[i].Sync = sync
		res[i].Written = made[i] && !opts.DryRun && err == nil
		written = written || res[i].Written
	}
	if err != nil || !written {
		return res, errs, err
	}
	if err := indexedViews(ctx, ix, res); err != nil {
		return res, errs, err
	}
	if w := stateWarning(SyncState(ctx, ix, opts.now())); w != "" {
		for i := range res {
			if res[i].Written {
				res[i].Warnings = append(res[i].Warnings, w)
			}
		}
	}
	return res, errs, nil
}

// indexedViews fills the written results from the index, as every read
// shows them (the line they were written at).
func indexedViews(ctx context.Context, ix *journal.Index, res []Result) error {
	for i := range res {
		if !res[i].Written {
			continue
		}
		row, found, err := ix.Store.Decision(ctx, res[i].ID)
		if err != nil {
			return err
		}
		if found {
			res[i].DecisionView = journal.ViewOf(&row)
		}
	}
	return nil
}

// stateWarning turns a failure to bring the state file in step, after a
// record was durably written, into a warning: the record stands, and
// reporting it as failed would invite the caller to write it again.
func stateWarning(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf("recorded, but %s was not brought in step (%v); fix it, then any decide or retro updates it", project.StateFile, err)
}

// makeOne builds one decision inside a batch: its retrograde target must
// exist, its iteration defaults to the loop's, and its id is the next free
// one.
func makeOne(ctx context.Context, ix *journal.Index, in *Input, ids *journal.IDs, level trust.Level, opts Options) (journal.Decision, error) {
	if in.Retro != nil {
		if found, err := ix.Store.DecisionExists(ctx, in.Retro.ID); err != nil {
			return journal.Decision{}, err
		} else if !found {
			return journal.Decision{}, &journal.FieldError{Field: "retro", Value: in.Retro.ID, Problem: "names no decision in the journal"}
		}
	}
	iteration := int64(0)
	if in.Iteration != nil {
		iteration = *in.Iteration
	} else {
		var err error
		if iteration, err = defaultIteration(ctx, ix); err != nil {
			return journal.Decision{}, err
		}
	}
	id, err := ids.Next(ctx, iteration)
	if err != nil {
		return journal.Decision{}, err
	}
	d, err := in.make(id, iteration, level, opts.now(), opts.DryRun)
	if err != nil {
		return d, err
	}
	if err := journal.CheckRecord(&d); err != nil {
		return d, &InputError{Msg: err.Error()}
	}
	return d, nil
}

// SyncState brings the state file's correct_decisions,
// incorrect_decisions and trust_level in step with the outcome events (see
// Reconcile: counters the loop kept before orbit are adopted, never
// zeroed), under the state file's lock; every other field is kept as it
// is. Without a state file (no loop started) it does nothing. The file is
// rewritten only when a value changed.
func SyncState(ctx context.Context, ix *journal.Index, now time.Time) error {
	path := ix.Project.Path(project.StateFile)
	unlock, err := flock.Path(ctx, ix.Project.Root, path+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	st, err := loop.ReadState(ix.Project.Root, path)
	if errors.Is(err, loop.ErrNoState) {
		return nil
	}
	if err != nil {
		return err
	}
	before := st.Bytes()
	if _, err := Reconcile(ctx, ix, st, now); err != nil {
		return err
	}
	after := st.Bytes()
	if string(before) == string(after) {
		return nil
	}
	return journal.WriteFileAtomic(ix.Project.Root, path, after, 0o644)
}

// DefaultPrecedents is how many similar past decisions come with a
// decision made.
const DefaultPrecedents = 3

// Similar sets res.Precedents to the k past decisions most like the one
// made (not itself): seed 000's REASON phase, attached to every decision.
func Similar(ctx context.Context, ix *journal.Index, res *Result, k int) error {
	res.Precedents = []precedent.Hit{}
	if k <= 0 {
		return nil
	}
	d := res.Decision
	// Not itself, before ranking: a failed precedent kept in the last
	// place must not be dropped to make room.
	found, err := precedent.Search(ctx, ix.Store, d.Input+" "+d.Context, precedent.Options{K: k, Category: d.Category, Skip: d.ID})
	if err != nil {
		return err
	}
	res.Precedents = append(res.Precedents, found...)
	return nil
}
