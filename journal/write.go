package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Marshal renders a record as one JSONL line (with its newline), in the
// field order of its type, without HTML escaping (as jq writes it).
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode record: %w", err)
	}
	return b.Bytes(), nil
}

// LineTooLongError is a record whose line would be longer than a journal
// line may be (MaxLineBytes): written, it would be rejected by every sync.
type LineTooLongError struct{ Bytes int }

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("the record would be a %d-byte line, longer than the journal's %d-byte limit: shorten its text fields", e.Bytes, MaxLineBytes)
}

// CheckRecord reports whether a record can be appended: a record that
// encodes to a line longer than MaxLineBytes is a *LineTooLongError.
func CheckRecord(v any) error {
	line, err := Marshal(v)
	if err != nil {
		return err
	}
	return checkLine(line)
}

func checkLine(line []byte) error {
	if n := len(bytes.TrimSuffix(line, []byte("\n"))); n > MaxLineBytes {
		return &LineTooLongError{Bytes: n}
	}
	return nil
}

// IDs hands out decision ids (iter-{iteration}-{n}, n the next number in
// that iteration) while the journal's lock is held, so that parallel hooks
// never collide.
type IDs struct {
	ix    *Index
	taken map[int64]int64
}

// PreviewIDs hands out the ids decisions would take if recorded now, for a
// dry run: without the journal's lock, another writer may take them first.
func (ix *Index) PreviewIDs() *IDs { return &IDs{ix: ix, taken: map[int64]int64{}} }

// Next returns the next id of an iteration.
func (ids *IDs) Next(ctx context.Context, iteration int64) (string, error) {
	n, ok := ids.taken[iteration]
	if !ok {
		existing, err := ids.ix.Store.IDsOfIteration(ctx, iteration)
		if err != nil {
			return "", err
		}
		prefix := fmt.Sprintf("iter-%d-", iteration)
		for _, id := range existing {
			if v, err := strconv.ParseInt(strings.TrimPrefix(id, prefix), 10, 64); err == nil && strings.HasPrefix(id, prefix) && v > n {
				n = v
			}
		}
	}
	for {
		n++
		id := fmt.Sprintf("iter-%d-%d", iteration, n)
		// An id hand-written into another iteration must not be reused.
		found, err := ids.ix.Store.DecisionExists(ctx, id)
		if err != nil {
			return "", err
		}
		if !found {
			ids.taken[iteration] = n
			return id, nil
		}
	}
}

// NextID is the id the next decision of an iteration would get now: a
// hint for an agent that appends its own line (without the journal's
// lock, two writers may both take it; Record's ids are the ones to trust).
func (ix *Index) NextID(ctx context.Context, iteration int64) (string, error) {
	return (&IDs{ix: ix, taken: map[int64]int64{}}).Next(ctx, iteration)
}

// Record appends the decisions that build returns to the journal and syncs
// them, all under the journal's exclusive lock: build runs with the index
// up to date, so the ids it takes from ids are free. It returns the sync's
// report (what the new lines became in the index).
func (ix *Index) Record(ctx context.Context, build func(ctx context.Context, ids *IDs) ([]Decision, error)) (SyncReport, error) {
	path := ix.DecisionsFile()
	app, err := OpenAppender(ix.Project.Root, ix.Project.Path(path))
	if err != nil {
		return SyncReport{}, err
	}
	defer app.Close()
	before, err := ix.Sync(ctx, SyncOptions{})
	if err != nil {
		return before, err
	}
	ds, err := build(ctx, &IDs{ix: ix, taken: map[int64]int64{}})
	if err != nil || len(ds) == 0 {
		return before, err
	}
	var buf bytes.Buffer
	for i := range ds {
		line, err := Marshal(&ds[i])
		if err != nil {
			return before, err
		}
		if err := checkLine(line); err != nil {
			return before, fmt.Errorf("decision %s: %w", ds[i].ID, err)
		}
		buf.Write(line)
	}
	if err := app.Append(buf.Bytes()); err != nil {
		return before, err
	}
	after, err := ix.Sync(ctx, SyncOptions{})
	if err != nil {
		return merge(before, after), err
	}
	// What was appended must now be in the index: a line the sync rejected
	// would be acknowledged but invisible, and its id handed out again.
	for i := range ds {
		if found, err := ix.Store.DecisionExists(ctx, ds[i].ID); err != nil {
			return merge(before, after), err
		} else if !found {
			return merge(before, after), fmt.Errorf("decision %s was appended to %s but the sync did not index it (`orbit verify` names the line)", ds[i].ID, path)
		}
	}
	return merge(before, after), nil
}

// RecordOutcome appends an outcome to the retrograde journal under its lock
// and syncs it.
func (ix *Index) RecordOutcome(ctx context.Context, rec OutcomeRecord) (SyncReport, error) {
	return ix.appendRetro(ctx, &rec, "outcome for "+rec.DecisionID)
}

// RecordVoid appends a void (or a void taken back) to the retrograde
// journal under its lock and syncs it.
func (ix *Index) RecordVoid(ctx context.Context, rec VoidRecord) (SyncReport, error) {
	return ix.appendRetro(ctx, &rec, "void of "+rec.DecisionID)
}

// appendRetro appends one record to the retrograde journal and syncs it;
// what names the record in errors.
func (ix *Index) appendRetro(ctx context.Context, rec any, what string) (SyncReport, error) {
	path := ix.fileOf(KindRetro)
	if path == "" {
		return SyncReport{}, fmt.Errorf("record %s: no retrograde journal configured", what)
	}
	line, err := Marshal(rec)
	if err != nil {
		return SyncReport{}, err
	}
	if err := checkLine(line); err != nil {
		return SyncReport{}, fmt.Errorf("%s: %w", what, err)
	}
	app, err := OpenAppender(ix.Project.Root, ix.Project.Path(path))
	if err != nil {
		return SyncReport{}, err
	}
	defer app.Close()
	if err := app.Append(line); err != nil {
		return SyncReport{}, err
	}
	return ix.Sync(ctx, SyncOptions{})
}

func merge(a, b SyncReport) SyncReport {
	a.Merge(b)
	return a
}
