package ceo_test

import (
	"testing"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// TestProgressSeedRules is issue 15, point 10's progress rules: the deep
// focus of an iteration is its deepest decision (not the last non-trivial
// one); the session statistics count as seed 000 does: auto-approved
// (trivial) the trivial batch approved, deep decisions every light, medium
// or heavy one (the deep mode's), whatever its tier or verdict (not
// "everything not auto-approved"), escalated to human the escalate tier and
// the NEEDS_REVIEW decisions; an escalated deep decision counts in both.
func TestProgressSeedRules(t *testing.T) {
	e := newEnv(t)
	e.write(project.StateFile, `{"active": true, "iteration": 4, "max_iterations": 20, "first_iteration": 3, "started_at": "2026-03-08T10:00:00Z"}`)
	mk := func(id string, it int64, tier, depth, decision string) *journal.Decision {
		d := past(id, it, "2026-03-08T10:05:00Z")
		d.Tier, d.Depth, d.Decision = tier, depth, decision
		return &d
	}
	e.appendRecords(project.DecisionsFile,
		mk("iter-2-1", 2, "deep_think", "heavy", "APPROVED"), // an earlier loop's
		mk("iter-3-1", 3, "auto_approve", "trivial", "APPROVED"),
		mk("iter-4-1", 4, "deep_think", "heavy", "APPROVED"),
		mk("iter-4-2", 4, "quick_review", "light", "NEEDS_REVIEW"),
		mk("iter-4-3", 4, "escalate", "medium", "NEEDS_REVIEW"),
		mk("iter-4-4", 4, "quick_review", "light", "APPROVED"),
		mk("iter-4-5", 4, "auto_approve", "trivial", "APPROVED"),
		mk("iter-4-6", 4, "auto_approve", "trivial", "REJECTED"), // trivial, not approved
	)
	e.sync()
	p, err := ceo.GatherProgress(e.ctx, e.ix, t0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Focus == nil || p.Focus.ID != "iter-4-1" {
		t.Errorf("deep focus = %v; want iter-4-1, the iteration's heavy decision", p.Focus)
	}
	s := p.Session
	if s.Total != 7 || s.Auto != 2 || s.Deep != 4 || s.Escalated != 2 {
		t.Errorf("session total %d, auto %d, deep %d, escalated %d; want 7 (this loop's iterations 3 and 4 only), 2, 4 (every light, medium and heavy), 2", s.Total, s.Auto, s.Deep, s.Escalated)
	}
}
