package journal

import "github.com/orbit-loop/orbit/db"

// DecisionView is a decision as every command, endpoint and tool shows it:
// its journal line's fields exactly as in the line (Decision), then what
// orbit derives from the outcome events. Encoded by report.JSON, every
// field is present: one the line may omit is null when absent.
type DecisionView struct {
	Decision
	// Outcome is the current outcome: the latest outcome event's, else
	// PENDING.
	Outcome string `json:"outcome"`
	// OutcomeTS and Evidence are the ts and evidence of the event that
	// gave the current outcome (null without one).
	OutcomeTS string `json:"outcome_ts,omitempty"`
	Evidence  string `json:"evidence,omitempty"`
	// Voided is true when the decision was voided (recorded by mistake: it
	// stays in the journal, out of trust, precedents and stale), and
	// VoidReason is why (null when not voided).
	Voided     bool   `json:"voided"`
	VoidReason string `json:"void_reason,omitempty"`
	// Line is where the decision's line is in its journal file (1-based;
	// 0 for a decision not written).
	Line int64 `json:"line"`
}

// DecisionOf is the journal record an index row holds.
func DecisionOf(r *db.DecisionRow) Decision {
	d := Decision{ID: r.ID, Iteration: r.Iteration, TS: r.TS, Tier: r.Tier, Depth: r.Depth, Category: r.Category,
		Input: r.Input, Decision: r.Decision, Reason: r.Reason, NextAction: r.NextAction, Verification: r.Verification,
		Retrograde: Retrograde{Outcome: r.RetroOutcome}, Requestor: r.Requestor, Context: r.Context, RequestID: r.RequestID}
	if r.RetroPrevID.Valid {
		prev := r.RetroPrevID.String
		d.Retrograde.PreviousID = &prev
	}
	if r.Confidence.Valid {
		c := r.Confidence.Float64
		d.Confidence = &c
	}
	return d
}

// ViewOf is the decision an index row holds, as it is shown.
func ViewOf(r *db.DecisionRow) DecisionView {
	return DecisionView{Decision: DecisionOf(r), Outcome: r.Outcome, OutcomeTS: r.OutcomeTS, Evidence: r.OutcomeEvidence,
		Voided: r.Voided, VoidReason: r.VoidReason, Line: r.Line}
}

// NewView is a decision just made, before any outcome.
func NewView(d Decision) DecisionView {
	return DecisionView{Decision: d, Outcome: OutcomePending}
}

// EventView is an outcome event as every command and endpoint shows it: the
// retrograde journal line's fields exactly (OutcomeRecord), then where the
// event was read.
type EventView struct {
	OutcomeRecord
	// RecordedBy is the decision whose line carried the event in its
	// retrograde field (null for a line of the retrograde journal).
	RecordedBy string `json:"recorded_by,omitempty"`
	// File and Line are where the event's line is, File relative to the
	// project root.
	File string `json:"file"`
	Line int64  `json:"line"`
}

// EventOf is the event an index row holds.
func EventOf(e *db.Event) EventView {
	return EventView{OutcomeRecord: OutcomeRecord{TS: e.TS, DecisionID: e.DecisionID, Outcome: e.Outcome, Evidence: e.Evidence},
		RecordedBy: e.RecordedBy, File: e.Path, Line: e.Line}
}

// VoidView is a void event as every command and endpoint shows it: the
// retrograde journal line's fields exactly (VoidRecord), then where it was
// read.
type VoidView struct {
	VoidRecord
	// File and Line are where the event's line is, File relative to the
	// project root.
	File string `json:"file"`
	Line int64  `json:"line"`
}

// VoidOf is the void event an index row holds.
func VoidOf(v *db.LocatedVoid) VoidView {
	return VoidView{VoidRecord: VoidRecord{TS: v.TS, DecisionID: v.DecisionID, Void: v.Void, Evidence: v.Evidence}, File: v.Path, Line: v.Line}
}
