package ceo

import (
	"context"
	"fmt"
	"time"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/trust"
)

// FirstSeenField is the state file field where orbit records when it first
// saw a loop whose started_at it cannot read (the upstream initial state
// writes the placeholder "$STARTED"): the time limit counts from there.
const FirstSeenField = "first_seen_at"

// FirstIterationField is the state file field where `orbit loop start`
// records the loop's first iteration: numbering goes on across loops, and
// what the loop did is what its iterations from there did.
const FirstIterationField = "first_iteration"

// Reconciled is what Reconcile did to a state.
type Reconciled struct {
	// Trust is the headline the state now shows: its counters are the
	// loop's totals (an adopted baseline included) and its trust level.
	Trust trust.Headline
	// Adopted: the state's counters were adopted as the baseline now.
	Adopted bool
	// Notes say what the agent and the person watching must know: an
	// adoption, a counter moved by hand that orbit could not explain and
	// replaced, a started_at orbit cannot read.
	Notes []string
	// Fields are the fields of the state it set, in order.
	Fields []string
}

// Reconcile brings the fields of the ORBIT loop's state st that orbit keeps
// in step with the journal: correct_decisions, incorrect_decisions and
// trust_level, and first_seen_at. Every writer of the state file (a
// decision, an outcome, the Stop hook, a start, a stop) goes through it,
// under the state file's lock; st is changed, not written.
//
// Counters are never silently discarded: the first time orbit meets the
// state's counters, what its own outcome events cannot explain (more
// correct or more incorrect decisions than the journal's events say) is
// adopted as a baseline: recorded once, in orbit's loop event journal (an
// "adopt" event, 0/0 when there is nothing to adopt; a file, so an index
// rebuild keeps it), and counted in the totals and the overall accuracy
// from then on. After that the counters are orbit's: a state that counts
// more verdicts than orbit knows of (counters moved by hand) is replaced
// by orbit's count, and the note says so: a verdict counts when it is
// recorded as an outcome event.
//
// A started_at that is not a time leaves the loop without a time limit;
// orbit records the first time it saw the loop in first_seen_at, and the
// limit counts from there.
func Reconcile(ctx context.Context, ix *journal.Index, st *loop.State, now time.Time) (Reconciled, error) {
	var res Reconciled
	h, err := trust.Current(ctx, ix.Store)
	if err != nil {
		return res, err
	}
	sc, _, err := st.Int("correct_decisions")
	if err != nil {
		return res, err
	}
	si, _, err := st.Int("incorrect_decisions")
	if err != nil {
		return res, err
	}
	_, met, err := ix.Store.Adoption(ctx)
	if err != nil {
		return res, err
	}
	switch {
	case !met:
		bc, bi := max(sc-int64(h.Correct), 0), max(si-int64(h.Incorrect), 0)
		if err := recordBaseline(ctx, ix, bc, bi, sc, si, now); err != nil {
			return res, err
		}
		if h, err = trust.Current(ctx, ix.Store); err != nil {
			return res, err
		}
		if bc+bi > 0 {
			res.Adopted = true
			res.Notes = append(res.Notes, fmt.Sprintf("adopted the counters %s held before orbit came (%d correct, %d incorrect that no outcome in the journal explains) as a baseline: accuracy %s",
				project.StateFile, bc, bi, h.AccuracyText()))
		}
	case sc+si > int64(h.Scored()):
		// More verdicts than orbit knows of: counters moved by hand (the
		// seed's INSPECT phase bumps them). A correction of a verdict
		// keeps the total; only a verdict taken back lowers it.
		res.Notes = append(res.Notes, fmt.Sprintf("%s said %d correct, %d incorrect; orbit counts %d, %d (%s): a verdict counts when it is recorded as an outcome (orbit retro, or a line of %s), not by editing the counters",
			project.StateFile, sc, si, h.Correct, h.Incorrect, h.AccuracyText(), project.RetroFile))
	}
	res.Trust = h
	for _, kv := range []struct {
		k string
		v any
	}{{"correct_decisions", h.Correct}, {"incorrect_decisions", h.Incorrect}, {"trust_level", h.Level}} {
		if err := st.Set(kv.k, kv.v); err != nil {
			return res, err
		}
		res.Fields = append(res.Fields, kv.k)
	}
	if note, set, err := markFirstSeen(st, now); err != nil {
		return res, err
	} else if note != "" {
		res.Notes = append(res.Notes, note)
		if set {
			res.Fields = append(res.Fields, FirstSeenField)
		}
	}
	return res, nil
}

// AdoptBaseline meets the state file's counters (see Reconcile) before
// orbit writes anything, so that an outcome orbit is about to record counts
// as recorded since, not as part of what came before. It does nothing when
// orbit met them already (one read of the index) or there is no state
// file.
func AdoptBaseline(ctx context.Context, ix *journal.Index, now time.Time) error {
	if _, met, err := ix.Store.Adoption(ctx); err != nil || met {
		return err
	}
	st, err := loop.ReadState(ix.Project.Root, project.StateFile)
	if err != nil {
		// No loop yet, or a state its next reader reports: the write goes
		// ahead.
		return nil
	}
	sc, _, err1 := st.Int("correct_decisions")
	si, _, err2 := st.Int("incorrect_decisions")
	if err1 != nil || err2 != nil {
		return nil
	}
	h, err := trust.Current(ctx, ix.Store)
	if err != nil {
		return err
	}
	return recordBaseline(ctx, ix, max(sc-int64(h.Correct), 0), max(si-int64(h.Incorrect), 0), sc, si, now)
}

// recordBaseline appends the adopt event to the loop event journal (and
// indexes it).
func recordBaseline(ctx context.Context, ix *journal.Index, correct, incorrect, stateCorrect, stateIncorrect int64, now time.Time) error {
	detail := fmt.Sprintf("adopted %d correct, %d incorrect from before orbit as a baseline", correct, incorrect)
	if correct+incorrect == 0 {
		detail = "orbit keeps this loop's counters from here: the journal explains them (nothing to adopt)"
	}
	data, err := loop.Marshal(map[string]int64{
		"correct_decisions": correct, "incorrect_decisions": incorrect,
		"state_correct_decisions": stateCorrect, "state_incorrect_decisions": stateIncorrect,
	})
	if err != nil {
		return err
	}
	// The ORBIT loop's id is its framework's name (orbitloop.ID).
	e := loop.Event{TS: loop.ISOTime(now), Framework: loop.ORBIT, Loop: loop.ORBIT, Kind: loop.EventAdopt, Path: project.StateFile,
		Detail: detail, Data: data}
	h := &loop.History{Root: ix.Project.Root, Store: ix.Store}
	if err := h.Append(ctx, e); err != nil {
		return fmt.Errorf("record the adopted counters: %w", err)
	}
	return nil
}

// markFirstSeen records in st when orbit first saw a loop whose started_at
// it cannot read, and returns the warning to give ("" when started_at is a
// time, or absent).
func markFirstSeen(st *loop.State, now time.Time) (note string, set bool, err error) {
	started, ok, err := st.String("started_at")
	if err != nil || !ok || started == "" {
		return "", false, err
	}
	if _, err := time.Parse(time.RFC3339Nano, started); err == nil {
		return "", false, nil
	}
	seen, _, err := st.String(FirstSeenField)
	if err != nil {
		return "", false, err
	}
	if _, err := time.Parse(time.RFC3339Nano, seen); err != nil {
		seen = now.UTC().Format(time.RFC3339)
		if err := st.Set(FirstSeenField, seen); err != nil {
			return "", false, err
		}
		set = true
	}
	return StartedAtWarning(started, seen), set, nil
}

// StartedAtWarning says that started_at is not a time and where the time
// limit counts from instead.
func StartedAtWarning(startedAt, firstSeen string) string {
	return fmt.Sprintf("started_at %q in %s is not a time: the time limit counts from %s, when orbit first saw the loop; set started_at to when the loop began (RFC 3339)",
		startedAt, project.StateFile, firstSeen)
}

// EscalationCount is seed 000's depth_escalation_counter after iteration
// ended: how many iterations in a row, up to ended, recorded no decision
// deeper than trivial (the loop's own iterations only: from first_iteration,
// else from 1). It is derived from the journal, so that a Stop retried or an
// agent that bumps the counter too never counts twice.
func EscalationCount(ctx context.Context, ix *journal.Index, o LoopInfo, ended int64) (int64, error) {
	first := max(o.FirstIteration, 1)
	if ended < first {
		return 0, nil
	}
	deep, err := ix.Store.LastDeepIteration(ctx, first, ended)
	if err != nil {
		return 0, err
	}
	return ended - max(deep, first-1), nil
}
