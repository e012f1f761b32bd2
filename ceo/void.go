package ceo

import (
	"context"
	"fmt"
	"strings"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/trust"
)

// VoidResult is a void recorded (or, in a dry run, that would be): the
// event in its one JSON form, what it changed beside it.
type VoidResult struct {
	journal.VoidView
	// WasVoided is whether the decision was voided before this event.
	WasVoided bool `json:"was_voided"`
	// Written is false in a dry run, and when the decision already was as
	// asked (voided, or not voided for a void taken back): nothing to write.
	Written bool `json:"written"`
	// Level is the trust level after the event; Trust the whole headline.
	Level trust.Level    `json:"trust_level"`
	Trust trust.Headline `json:"trust"`
	// Warnings: see Result.Warnings.
	Warnings []string `json:"warnings,omitempty"`
}

// Void voids decision id, recorded by mistake, by an append-only event in
// the retrograde journal (void false, undo, takes a void back): the
// decision's line stays in the journal, and a voided decision counts in no
// trust figure, is no precedent and is never stale. evidence, why, is
// required. A decision already as asked is answered without a line.
func Void(ctx context.Context, ix *journal.Index, id, evidence string, undo bool, opts Options) (VoidResult, error) {
	if strings.TrimSpace(id) == "" {
		return VoidResult{}, inputErrorf("a decision id is required")
	}
	if strings.TrimSpace(evidence) == "" {
		why := "a void says why the decision was recorded by mistake"
		if undo {
			why = "taking a void back says why"
		}
		return VoidResult{}, journal.Required("evidence", why)
	}
	d, found, err := ix.Store.Decision(ctx, id)
	if err != nil {
		return VoidResult{}, err
	}
	if !found {
		return VoidResult{}, inputErrorf("no decision %q in the journal (`orbit log` lists them)", id)
	}
	rec := journal.VoidRecord{TS: opts.now().UTC().Format(timeLayout), DecisionID: id, Void: !undo, Evidence: evidence}
	res := VoidResult{VoidView: journal.VoidView{VoidRecord: rec}, WasVoided: d.Voided}
	if err := journal.CheckRecord(&rec); err != nil {
		return res, &InputError{Msg: err.Error()}
	}
	switch {
	case d.Voided == rec.Void && d.Voided:
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s is already voided (%s); nothing written", id, d.VoidReason))
	case d.Voided == rec.Void:
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s is not voided; nothing written", id))
	case !opts.DryRun:
		if err := AdoptBaseline(ctx, ix, opts.now()); err != nil {
			return res, err
		}
		if _, err := ix.RecordVoid(ctx, rec); err != nil {
			return res, err
		}
		res.Written = true
		vs, err := ix.Store.DecisionVoids(ctx, id)
		if err != nil {
			return res, err
		}
		for i := range vs {
			if v := journal.VoidOf(&vs[i]); v.VoidRecord == rec {
				res.VoidView = v
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
