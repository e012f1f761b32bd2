package ceo

import (
	"context"
	"strings"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/trust"
)

// RetroResult is an outcome recorded (or, in a dry run, that would be):
// the event in its one JSON form, what it changed beside it.
type RetroResult struct {
	journal.EventView
	// Previous is the decision's outcome before this event.
	Previous string `json:"previous_outcome"`
	Written  bool   `json:"written"`
	// Level is the trust level after the event; Trust the whole headline.
	Level trust.Level    `json:"trust_level"`
	Trust trust.Headline `json:"trust"`
	// Warnings: see Result.Warnings.
	Warnings []string `json:"warnings,omitempty"`
}

// ParseRetroOutcome is ParseOutcome, and PENDING: an event that takes an
// earlier verdict back (a retraction), so that the decision counts as
// unverified again. The past event stays in the history.
func ParseRetroOutcome(s string) (string, error) {
	if strings.EqualFold(strings.TrimSpace(s), journal.OutcomePending) {
		return journal.OutcomePending, nil
	}
	out, err := ParseOutcome(s)
	if fe, ok := err.(*journal.FieldError); ok {
		fe.Allowed = append(fe.Allowed, journal.OutcomePending)
	}
	return out, err
}

// Retro records a retrograde outcome for decision id as an append-only event
// in the retrograde journal (the decision's own line is never edited), syncs
// it, and brings the state file's counters in step. A later outcome for the
// same decision supersedes this one; both stay in the history.
func Retro(ctx context.Context, ix *journal.Index, id, outcome, evidence string, opts Options) (RetroResult, error) {
	out, err := ParseRetroOutcome(outcome)
	if err != nil {
		return RetroResult{}, err
	}
	if out == journal.OutcomePending && strings.TrimSpace(evidence) == "" {
		return RetroResult{}, journal.Required("evidence", "a verdict taken back says why")
	}
	if strings.TrimSpace(id) == "" {
		return RetroResult{}, inputErrorf("a decision id is required")
	}
	d, found, err := ix.Store.Decision(ctx, id)
	if err != nil {
		return RetroResult{}, err
	}
	if !found {
		return RetroResult{}, inputErrorf("no decision %q in the journal (`orbit log` lists them)", id)
	}
	rec := journal.OutcomeRecord{TS: opts.now().UTC().Format(timeLayout), DecisionID: id, Outcome: out, Evidence: evidence}
	res := RetroResult{EventView: journal.EventView{OutcomeRecord: rec}, Previous: d.Outcome}
	if err := journal.CheckRecord(&rec); err != nil {
		return res, &InputError{Msg: err.Error()}
	}
	if !opts.DryRun {
		if err := AdoptBaseline(ctx, ix, opts.now()); err != nil {
			return res, err
		}
		if _, err := ix.RecordOutcome(ctx, rec); err != nil {
			return res, err
		}
		res.Written = true
		evs, err := ix.Store.DecisionEvents(ctx, id)
		if err != nil {
			return res, err
		}
		for i := range evs {
			if e := journal.EventOf(&evs[i]); e.OutcomeRecord == rec && e.RecordedBy == "" {
				res.EventView = e
			}
		}
		if w := stateWarning(SyncState(ctx, ix, opts.now())); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	res.Trust, err = trust.Current(ctx, ix.Store)
	res.Level = res.Trust.Level
	return res, err
}

// timeLayout is how orbit writes ts: RFC 3339 in UTC, with fractions of a
// second so that two outcomes in the same second keep their order.
const timeLayout = "2006-01-02T15:04:05.000000Z07:00"
