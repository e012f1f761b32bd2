package journal

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/project"
)

// Record refuses a batch holding a line no sync would accept, before
// appending any of it.
func TestRecordRefusesOverlongLine(t *testing.T) {
	e := newTestEnv(t)
	e.write(project.DecisionsFile, dec("iter-1-1", 1, 0))
	before := e.read(project.DecisionsFile)
	build := func(ctx context.Context, ids *IDs) ([]Decision, error) {
		var ds []Decision
		for _, input := range []string{"short", strings.Repeat("y", MaxLineBytes)} {
			id, err := ids.Next(ctx, 1)
			if err != nil {
				return nil, err
			}
			ds = append(ds, Decision{ID: id, Iteration: 1, TS: ts(1), Tier: "auto_approve", Depth: "trivial", Category: "quality",
				Input: input, Decision: "APPROVED", Reason: "r", Verification: "PENDING", Retrograde: Retrograde{Outcome: OutcomeNA}})
		}
		return ds, nil
	}
	_, err := e.ix.Record(e.ctx, build)
	var tl *LineTooLongError
	if !errors.As(err, &tl) || tl.Bytes <= MaxLineBytes {
		t.Fatalf("Record: error %v; want a *LineTooLongError over %d bytes", err, MaxLineBytes)
	}
	if got := e.read(project.DecisionsFile); got != before {
		t.Errorf("the journal changed (%d -> %d bytes); a refused batch must append nothing", len(before), len(got))
	}

	_, err = e.ix.RecordOutcome(e.ctx, OutcomeRecord{TS: ts(2), DecisionID: "iter-1-1", Outcome: OutcomeCorrect, Evidence: strings.Repeat("z", MaxLineBytes)})
	if !errors.As(err, &tl) {
		t.Fatalf("RecordOutcome: error %v; want a *LineTooLongError", err)
	}
	if _, err := os.Stat(e.path(project.RetroFile)); err == nil && e.read(project.RetroFile) != "" {
		t.Errorf("RecordOutcome appended a refused outcome")
	}
	if err := CheckRecord(&OutcomeRecord{TS: ts(2), DecisionID: "iter-1-1", Outcome: OutcomeCorrect}); err != nil {
		t.Errorf("CheckRecord(short outcome) = %v; want nil", err)
	}
}
