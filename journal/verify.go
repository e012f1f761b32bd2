package journal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/orbit-loop/orbit/db"
)

// FileCheck is what verify found for one file.
type FileCheck struct {
	Path string `json:"path"`
	// Records is the number of lines in the file that hold a record.
	Records int `json:"records"`
	// Indexed is the number of those the index holds.
	Indexed int `json:"indexed"`
	// Rejected counts lines the index holds as rejected.
	Rejected int `json:"rejected"`
	// Unsynced counts non-blank lines past the synced offset.
	Unsynced int `json:"unsynced"`
}

// VerifyReport compares the files with the index.
type VerifyReport struct {
	Files    []FileCheck `json:"files"`
	Findings []Problem   `json:"findings"`
}

// OK reports whether every finding is benign (warnings and torn fragments).
func (r VerifyReport) OK() bool {
	for _, p := range r.Findings {
		if !p.Benign() {
			return false
		}
	}
	return true
}

// Verify reads every file in full and compares it with the index, line by
// line, without changing either: same records in the same order with the
// same bytes (append-only intact), rejected lines and remarks from the
// index, torn tails, and lines not yet synced.
func (ix *Index) Verify(ctx context.Context) (VerifyReport, error) {
	var rep VerifyReport
	for _, spec := range ix.Files {
		fc, probs, err := ix.verifyFile(ctx, spec)
		if err != nil {
			return rep, err
		}
		rep.Files = append(rep.Files, fc)
		rep.Findings = append(rep.Findings, probs...)
	}
	stored, err := ix.Store.Findings(ctx)
	if err != nil {
		return rep, err
	}
	for _, f := range stored {
		rep.Findings = append(rep.Findings, Problem{File: f.Path, Line: int(f.Line), LineEnd: int(f.LineEnd), Severity: Severity(f.Severity),
			Code: f.Code, RecordID: f.RecordID, Message: f.Message})
	}
	orphans, err := ix.Store.OrphanEvents(ctx)
	if err != nil {
		return rep, err
	}
	for _, o := range orphans {
		field := "decision_id"
		if o.RecordedBy != "" {
			field = "retrograde.previous_id"
		}
		rep.Findings = append(rep.Findings, orphanProblem(o.Path, int(o.Line), int(o.Line), field, o.DecisionID))
	}
	return rep, nil
}

// difference is where a file first departs from what the index read of it.
type difference struct {
	line int
	what string
}

func (ix *Index) verifyFile(ctx context.Context, spec FileSpec) (FileCheck, []Problem, error) {
	fc := FileCheck{Path: spec.Path}
	st, found, err := ix.Store.FileState(ctx, spec.Path)
	if err != nil {
		return fc, nil, err
	}
	f, err := os.Open(ix.Project.Path(spec.Path))
	if errors.Is(err, os.ErrNotExist) {
		if found && st.SyncedOffset > 0 {
			return fc, []Problem{{File: spec.Path, Line: 1, LineEnd: 1, Severity: SevError, Code: "missing",
				Message: "the file is gone, but the index holds what was read from it (`orbit export` recovers it)"}}, nil
		}
		return fc, nil, nil
	}
	if err != nil {
		return fc, nil, fmt.Errorf("verify %s: %w", spec.Path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fc, nil, fmt.Errorf("verify %s: not a regular file", spec.Path)
	}
	var probs []Problem
	r := NewReader(f, spec.Path, 0, 0)
	diff, err := ix.compare(ctx, r, st.ID, found, &fc)
	if err != nil {
		return fc, nil, err
	}
	if diff != nil {
		probs = append(probs, Problem{File: spec.Path, Line: diff.line, LineEnd: diff.line, Severity: SevError, Code: "rewritten",
			Message: "append-only promise broken: " + diff.what + " (the next sync rebuilds the index from the file and saves what it held)"})
		return fc, probs, nil
	}
	// Lines the index has not read yet.
	for {
		c, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fc, nil, err
		}
		switch c.Kind {
		case Pending:
			probs = append(probs, Problem{File: spec.Path, Line: c.Line, LineEnd: c.Line, Severity: SevWarning, Code: CodeTorn,
				Message: "last line has no newline (a write in progress, or one cut short); not indexed"})
		case Record, Bad:
			fc.Unsynced++
			if c.Kind == Record {
				fc.Records++
			}
		}
	}
	if fc.Unsynced > 0 {
		probs = append(probs, Problem{File: spec.Path, Line: int(st.SyncedLines) + 1, LineEnd: int(st.SyncedLines) + 1, Severity: SevWarning, Code: "unsynced",
			Message: fmt.Sprintf("%d %s after the synced offset not indexed yet (the next orbit command syncs them)", fc.Unsynced, plural(fc.Unsynced, "line", "lines"))})
	}
	return fc, probs, nil
}

// compare walks the index's lines of a file and the file's chunks together
// up to the synced offset, and returns the first difference.
func (ix *Index) compare(ctx context.Context, r *Reader, fileID int64, found bool, fc *FileCheck) (*difference, error) {
	if !found {
		return nil, nil
	}
	var diff *difference
	errStop := errors.New("stop")
	err := ix.Store.EachIndexedLine(ctx, fileID, func(il db.IndexedLine) error {
		c, err := nextNonBlank(r)
		if errors.Is(err, io.EOF) || (err == nil && c.Kind == Pending) {
			diff = &difference{line: int(il.Line), what: fmt.Sprintf("line %d is gone (the index holds %s from it)", il.Line, describe(il))}
			return errStop
		}
		if err != nil {
			return err
		}
		switch {
		case c.Line != int(il.Line):
			line := min(c.Line, int(il.Line))
			diff = &difference{line: line, what: fmt.Sprintf("line %d holds what the index read at line %d or lines were removed or inserted", line, max(c.Line, int(il.Line)))}
		case il.Kind == "record" && string(c.Text) != il.Text:
			diff = &difference{line: c.Line, what: fmt.Sprintf("line %d changed (the index holds %s from it)", c.Line, describe(il))}
		case il.Kind == "rejected" && excerpt(c.Text) != il.Text:
			diff = &difference{line: c.Line, what: fmt.Sprintf("line %d changed (it was a rejected line)", c.Line)}
		}
		if diff != nil {
			return errStop
		}
		if il.Kind == "record" {
			fc.Records++
			fc.Indexed++
		} else {
			fc.Rejected++
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	return diff, nil
}

func describe(il db.IndexedLine) string {
	if il.Kind == "record" {
		return fmt.Sprintf("record %q", il.RecordID)
	}
	return "a rejected line"
}

func nextNonBlank(r *Reader) (Chunk, error) {
	for {
		c, err := r.Next()
		if err != nil || c.Kind != Blank {
			return c, err
		}
	}
}

// firstDifference finds where a file departs from the index, for the sync
// that found its past changed.
func (ix *Index) firstDifference(ctx context.Context, spec FileSpec) (difference, error) {
	st, found, err := ix.Store.FileState(ctx, spec.Path)
	if err != nil {
		return difference{}, err
	}
	f, err := os.Open(ix.Project.Path(spec.Path))
	if errors.Is(err, os.ErrNotExist) {
		return difference{line: 1, what: "the file is gone"}, nil
	}
	if err != nil {
		return difference{}, fmt.Errorf("sync %s: %w", spec.Path, err)
	}
	defer f.Close()
	var fc FileCheck
	diff, err := ix.compare(ctx, NewReader(f, spec.Path, 0, 0), st.ID, found, &fc)
	if err != nil {
		return difference{}, err
	}
	if diff == nil {
		// Every record is intact; the change is in blank lines or the bytes
		// just before the synced offset.
		return difference{line: int(st.SyncedLines), what: "only whitespace between records changed"}, nil
	}
	return *diff, nil
}
