package journal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/project"
)

// FileCheck is what verify found for one file.
type FileCheck struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
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
// line: same records in the same order with the same bytes (append-only
// intact), rejected lines and remarks from the index, torn tails, and lines
// not yet synced. It changes neither, but for one mark: a file whose past
// changed is marked in its sync state, so that the next sync compares it
// line by line and rebuilds it even when nothing in the file's size, inode
// or last bytes shows the change (an edit followed by an append).
func (ix *Index) Verify(ctx context.Context) (VerifyReport, error) {
	var rep VerifyReport
	stored, err := ix.Store.Findings(ctx)
	if err != nil {
		return rep, err
	}
	for _, spec := range ix.Files {
		fc, probs, err := ix.verifyFile(ctx, spec)
		if err != nil {
			return rep, err
		}
		rep.Files = append(rep.Files, fc)
		rep.Findings = append(rep.Findings, probs...)
		for _, f := range stored {
			if f.Path == spec.Path {
				rep.Findings = append(rep.Findings, Problem{File: f.Path, Line: int(f.Line), LineEnd: int(f.LineEnd), Severity: Severity(f.Severity),
					Code: f.Code, RecordID: f.RecordID, Message: f.Message})
			}
		}
		if c, ok := spec.Kind.(Checker); ok {
			st, found, err := ix.Store.FileState(ctx, spec.Path)
			if err != nil {
				return rep, err
			}
			if found {
				more, err := c.Check(ctx, ix.Store, st)
				if err != nil {
					return rep, err
				}
				rep.Findings = append(rep.Findings, more...)
			}
		}
	}
	return rep, nil
}

// difference is where a file first departs from what the index read of it.
type difference struct {
	line int
	what string
}

func (ix *Index) verifyFile(ctx context.Context, spec FileSpec) (FileCheck, []Problem, error) {
	fc := FileCheck{Path: spec.Path, Kind: spec.Kind.Name()}
	st, found, err := ix.Store.FileState(ctx, spec.Path)
	if err != nil {
		return fc, nil, err
	}
	f, err := project.Open(ix.Project.Root, spec.Path)
	if errors.Is(err, os.ErrNotExist) {
		if found && st.SyncedOffset > 0 {
			return fc, []Problem{{File: spec.Path, Line: 1, LineEnd: 1, Severity: SevError, Code: CodeGone,
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
	diff, next, err := ix.compare(ctx, r, spec.Kind, st, found, &fc)
	if err != nil {
		return fc, nil, err
	}
	if diff != nil {
		if err := ix.markPastChanged(ctx, st); err != nil {
			return fc, nil, err
		}
		probs = append(probs, Problem{File: spec.Path, Line: diff.line, LineEnd: diff.line, Severity: SevError, Code: CodeRewritten,
			Message: "append-only promise broken: " + diff.what + " (the next sync rebuilds the index from the file and saves what it held)"})
		return fc, probs, nil
	}
	// Lines the index has not read yet.
	for c := next; c != nil; {
		switch c.Kind {
		case Pending:
			probs = append(probs, Problem{File: spec.Path, Line: c.Line, LineEnd: c.Line, Severity: SevWarning, Code: CodeTorn,
				Message: "last line has no newline (a write in progress, or one cut short); not indexed"})
		case Record, Bad:
			fc.Unsynced++
			if c.Kind == Record && !cutShort(c.Text) {
				fc.Records++
			}
		}
		if c, err = nextChunk(r); err != nil {
			return fc, nil, err
		}
	}
	if fc.Unsynced > 0 {
		probs = append(probs, Problem{File: spec.Path, Line: int(st.SyncedLines) + 1, LineEnd: int(st.SyncedLines) + 1, Severity: SevWarning, Code: CodeUnsynced,
			Message: fmt.Sprintf("%d %s after the synced offset not indexed yet (the next orbit command syncs them)", fc.Unsynced, Plural(fc.Unsynced, "line", "lines"))})
	}
	return fc, probs, nil
}

// compare walks the index's lines of a file and the file's chunks together
// up to the synced offset st.SyncedOffset, and returns the first difference.
// Without one, next is the first chunk past the synced offset (nil at the
// end of the file), and r is just past it.
func (ix *Index) compare(ctx context.Context, r *Reader, kind Kind, st db.FileState, found bool, fc *FileCheck) (diff *difference, next *Chunk, err error) {
	if found {
		if diff, err = ix.compareIndexed(ctx, r, kind, st.ID, fc); err != nil || diff != nil {
			return diff, nil, err
		}
	}
	// After the last line the index holds, the synced bytes may hold only
	// lines that leave none: blank lines and torn fragments.
	for {
		c, err := nextChunk(r)
		if err != nil || c == nil || c.Offset >= st.SyncedOffset {
			return nil, c, err
		}
		if !leavesNoLine(*c) && !(c.Kind == Record && cutShort(c.Text)) {
			return &difference{line: c.Line, what: fmt.Sprintf("line %d changed (the index holds no record from it)", c.Line)}, nil, nil
		}
	}
}

// compareIndexed walks the lines the index holds of a file and the file's
// chunks together, and returns the first difference.
func (ix *Index) compareIndexed(ctx context.Context, r *Reader, kind Kind, fileID int64, fc *FileCheck) (*difference, error) {
	var diff *difference
	errStop := errors.New("stop")
	err := ix.Store.EachIndexedLine(ctx, kind.Records(), fileID, func(il db.IndexedLine) error {
		c, err := nextIndexed(r, int(il.Line))
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

// leavesNoLine reports whether sync keeps no line of a chunk in the index:
// a blank line, or a torn fragment (a warning, not a rejected line).
func leavesNoLine(c Chunk) bool {
	return c.Kind == Blank || c.Kind == Bad && c.Err.Severity == SevWarning
}

// nextIndexed returns the chunk that should hold the line the index holds
// at line: it skips blank lines, and the torn fragments before that line
// (sync keeps no line of either). A record before that line is checked for
// a torn fragment that ends in '}', which the decoder finds, not the reader:
// only there, so that verify does not decode every record twice.
func nextIndexed(r *Reader, line int) (Chunk, error) {
	for {
		c, err := r.Next()
		switch {
		case err != nil:
			return c, err
		case c.Kind == Blank:
		case c.Line < line && (leavesNoLine(c) || c.Kind == Record && cutShort(c.Text)):
		default:
			return c, nil
		}
	}
}

// nextChunk returns the next chunk, or nil at the end of the file.
func nextChunk(r *Reader) (*Chunk, error) {
	c, err := r.Next()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// pastDifference compares a file with what the index read of it, line by
// line, and returns the first difference (nil when everything the index
// read is still there) and the sync state it compared with.
func (ix *Index) pastDifference(ctx context.Context, spec FileSpec) (*difference, db.FileState, error) {
	st, found, err := ix.Store.FileState(ctx, spec.Path)
	if err != nil {
		return nil, st, err
	}
	f, err := project.Open(ix.Project.Root, spec.Path)
	if errors.Is(err, os.ErrNotExist) {
		return &difference{line: 1, what: "the file is gone"}, st, nil
	}
	if err != nil {
		return nil, st, fmt.Errorf("sync %s: %w", spec.Path, err)
	}
	defer f.Close()
	var fc FileCheck
	diff, _, err := ix.compare(ctx, NewReader(f, spec.Path, 0, 0), spec.Kind, st, found, &fc)
	return diff, st, err
}

// firstDifference finds where a file departs from the index, for the sync
// that found its past changed.
func (ix *Index) firstDifference(ctx context.Context, spec FileSpec) (difference, error) {
	diff, st, err := ix.pastDifference(ctx, spec)
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

// markPastChanged records in a file's sync state that bytes sync already
// read of it have changed, unless a sync has changed the state since seen
// was read: the next sync then compares the file line by line and rebuilds
// its part of the index.
func (ix *Index) markPastChanged(ctx context.Context, seen db.FileState) error {
	if seen.TailHash == pastChanged {
		return nil
	}
	return ix.Store.InTx(ctx, func(tx *db.Tx) error {
		st, found, err := tx.FileState(ctx, seen.Path)
		if err != nil || !found || st != seen {
			return err
		}
		st.TailHash = pastChanged
		return tx.SaveFileState(ctx, &st)
	})
}
