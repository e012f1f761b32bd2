package journal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/project"
)

// File kinds.
const (
	KindDecisions = "decisions"
	KindRetro     = "retro"
)

// tailWindow is how many bytes before the synced offset the tail hash covers.
const tailWindow = 4096

// pastChanged is a tail hash that matches no file: verify found that bytes
// sync already read have changed, so the next sync compares the file line by
// line with the index (and rebuilds it) whatever its size and last bytes.
const pastChanged = "past-changed"

// tornAfter is how long a file must go unwritten before sync reports its
// unterminated last line as torn: until then a writer may still be finishing
// it (orbit's appenders write a whole line at once, other tools may not).
const tornAfter = 5 * time.Second

// batchRecords bounds one sync transaction, so that a large backlog neither
// holds SQLite's write lock for long nor grows memory with the file.
const batchRecords = 20000

// FileSpec names an authoritative file (relative to the project root) and
// what it holds.
type FileSpec struct {
	Path string
	Kind string
}

// DefaultFiles are the files sync reads, decisions first so that outcome
// events find their decisions.
var DefaultFiles = []FileSpec{
	{Path: project.DecisionsFile, Kind: KindDecisions},
	{Path: project.RetroFile, Kind: KindRetro},
}

// Index is a project's authoritative files and the store derived from them.
type Index struct {
	Store   *db.Store
	Project project.Project
	Files   []FileSpec
	// Now is the clock sync reads: to tell a last line still being written
	// from one cut short, and for the recovery file's name.
	Now func() time.Time
}

// NewIndex couples a project with its open store.
func NewIndex(store *db.Store, p project.Project) *Index {
	return &Index{Store: store, Project: p, Files: DefaultFiles, Now: time.Now}
}

// SyncReport says what a sync did.
type SyncReport struct {
	Decisions int // decisions added
	Events    int // outcome events added
	// Problems are the findings new in this sync: rejected lines and remarks.
	Problems []Problem
	// Torn lists unterminated last lines of files unwritten for tornAfter:
	// writes cut short, not writes in progress.
	Torn []Problem
	// Rewritten lists files whose past changed: the index was rebuilt from
	// them, and what the index held beyond the change saved to Recovered.
	Rewritten []Problem
	Recovered []string
}

// Errors counts the rejected lines among Problems.
func (r SyncReport) Errors() int {
	n := 0
	for _, p := range r.Problems {
		if p.Severity == SevError {
			n++
		}
	}
	return n
}

// SyncOptions tune Sync.
type SyncOptions struct {
	// Progress, if set, is called as bytes are read: done of total for the
	// file named.
	Progress func(file string, done, total int64)
}

// Sync brings the index up to date with the files: for each file, one stat
// when it has not changed; when it grew, it reads only the bytes after the
// synced offset. A file that changed without growing, or was replaced, is
// compared line by line with the index first. A file whose past changed is
// reported and re-read from its start.
func (ix *Index) Sync(ctx context.Context, opts SyncOptions) (SyncReport, error) {
	var rep SyncReport
	for _, f := range ix.Files {
		if err := ix.syncFile(ctx, f, opts, &rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// stat is what sync compares to decide whether a file changed.
type stat struct {
	exists   bool
	dev, ino int64
	size     int64
	mtimeNS  int64
}

func statFile(path string) (stat, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return stat{}, nil
	}
	if err != nil {
		return stat{}, fmt.Errorf("sync %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return stat{}, fmt.Errorf("sync %s: not a regular file (%s)", path, fi.Mode().Type())
	}
	s := stat{exists: true, size: fi.Size(), mtimeNS: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino = int64(sys.Dev), int64(sys.Ino)
	}
	return s, nil
}

// upToDate reports whether the file is as the last sync left it (same
// inode, size and modification time) with nothing to check in its past.
func (s stat) upToDate(st db.FileState) bool {
	return s.dev == st.Dev && s.ino == st.Ino && s.size == st.Size && s.mtimeNS == st.MtimeNS && st.TailHash != pastChanged
}

// stale reports whether the file has gone unwritten for tornAfter by now: an
// unterminated last line in it is a write cut short, not one in progress.
func (s stat) stale(now time.Time) bool {
	return now.Sub(time.Unix(0, s.mtimeNS)) >= tornAfter
}

// errRewritten signals that a file's synced past no longer matches, or, when
// suspect, may not: a line-by-line comparison with the index settles it.
type errRewritten struct {
	reason  string
	suspect bool
	// st is the file's sync state when the change was found.
	st db.FileState
	// diff is the first difference, when a comparison found it already.
	diff *difference
}

func (e *errRewritten) Error() string { return e.reason }

func (ix *Index) syncFile(ctx context.Context, spec FileSpec, opts SyncOptions, rep *SyncReport) error {
	abs := ix.Project.Path(spec.Path)
	now := ix.Now()
	st0, err := statFile(abs)
	if err != nil {
		return err
	}
	prev, found, err := ix.Store.FileState(ctx, spec.Path)
	if err != nil {
		return err
	}
	if found && st0.upToDate(prev) {
		if prev.TornLine > 0 && st0.stale(now) {
			rep.Torn = append(rep.Torn, tornProblem(spec.Path, prev.TornLine))
		}
		return nil
	}
	if !found && !st0.exists {
		return nil
	}
	// intact is the sync state whose past a comparison found intact: the
	// batches that follow need not compare it again.
	var intact *db.FileState
	for {
		done, err := ix.syncBatch(ctx, spec, opts, now, intact, rep)
		var rw *errRewritten
		if errors.As(err, &rw) {
			if rw.suspect {
				diff, _, err := ix.pastDifference(ctx, spec)
				if err != nil {
					return err
				}
				if diff == nil {
					intact = &rw.st
					continue
				}
				rw.diff = diff
			}
			if err := ix.recoverRewritten(ctx, spec, rw, rep); err != nil {
				return err
			}
			continue
		}
		if err != nil || done {
			return err
		}
	}
}

func tornProblem(path string, line int64) Problem {
	return Problem{File: path, Line: int(line), LineEnd: int(line), Severity: SevWarning, Code: CodeTorn,
		Message: fmt.Sprintf("last line has no newline and the file has not been written for %v (a write cut short?); kept unindexed, and the next append starts on a fresh line", tornAfter)}
}

// syncBatch ingests up to batchRecords chunks in one transaction. done is
// false when more remain.
func (ix *Index) syncBatch(ctx context.Context, spec FileSpec, opts SyncOptions, now time.Time, intact *db.FileState, rep *SyncReport) (done bool, err error) {
	abs := ix.Project.Path(spec.Path)
	var local SyncReport
	err = ix.Store.InTx(ctx, func(tx *db.Tx) error {
		local = SyncReport{}
		st, found, err := tx.FileState(ctx, spec.Path)
		if err != nil {
			return err
		}
		cur, err := statFile(abs)
		if err != nil {
			return err
		}
		if found && cur.upToDate(st) {
			done = true
			return nil
		}
		seen := st
		st.Kind = spec.Kind
		if !found {
			if err := tx.SaveFileState(ctx, &st); err != nil {
				return err
			}
		}
		if !cur.exists {
			if st.SyncedOffset > 0 {
				return &errRewritten{reason: "the file is gone", st: seen}
			}
			done = true
			return nil
		}
		f, err := os.Open(abs)
		if err != nil {
			return fmt.Errorf("sync %s: %w", spec.Path, err)
		}
		defer f.Close()
		if err := checkPast(f, cur, seen, intact); err != nil {
			return err
		}
		if _, err := f.Seek(st.SyncedOffset, io.SeekStart); err != nil {
			return fmt.Errorf("sync %s: %w", spec.Path, err)
		}
		dmark, emark, err := tx.Marks(ctx)
		if err != nil {
			return err
		}
		in := ingester{tx: tx, file: spec.Path, st: &st, rep: &local}
		st.TornLine, st.TornSize = 0, 0
		n := 0
		err = produce(ctx, NewReader(f, spec.Path, st.SyncedOffset, int(st.SyncedLines)), spec.Kind, batchRecords, func(p *parsed) error {
			if p.c.Kind == Pending {
				st.TornLine, st.TornSize = int64(p.c.Line), cur.size-p.c.Offset
				if cur.stale(now) {
					local.Torn = append(local.Torn, tornProblem(spec.Path, st.TornLine))
				}
				return nil
			}
			if err := in.chunk(ctx, p); err != nil {
				return err
			}
			st.SyncedOffset, st.SyncedLines = p.c.End(), int64(p.c.LineEnd)
			if n++; opts.Progress != nil && n%1024 == 0 {
				opts.Progress(spec.Path, st.SyncedOffset, cur.size)
			}
			return nil
		})
		if err != nil {
			return err
		}
		done = n < batchRecords
		if err := in.orphans(ctx, emark); err != nil {
			return err
		}
		if opts.Progress != nil {
			opts.Progress(spec.Path, st.SyncedOffset, cur.size)
		}
		if st.TailHash, err = tailHash(f, st.SyncedOffset); err != nil {
			return fmt.Errorf("sync %s: %w", spec.Path, err)
		}
		if local.Decisions > 0 {
			if err := tx.IndexText(ctx, dmark); err != nil {
				return err
			}
		}
		if local.Decisions > 0 || local.Events > 0 {
			if err := tx.RefreshOutcomes(ctx, dmark, emark); err != nil {
				return err
			}
		}
		if done {
			st.Dev, st.Ino, st.Size, st.MtimeNS = cur.dev, cur.ino, cur.size, cur.mtimeNS
		} else {
			// More to read: leave the stat unmatched so the next batch runs.
			st.Size = -1
		}
		st.SyncedAt = time.Now().UTC().Format(time.RFC3339Nano)
		return tx.SaveFileState(ctx, &st)
	})
	if err != nil {
		return false, err
	}
	rep.Decisions += local.Decisions
	rep.Events += local.Events
	rep.Problems = append(rep.Problems, local.Problems...)
	rep.Torn = append(rep.Torn, local.Torn...)
	return done, nil
}

// checkPast verifies that the bytes sync already read are still there,
// reading only the last of them so that syncing a grown file costs O(new
// bytes). An append always grows a file in place, so a file that changed
// without growing, or was replaced, is suspect: the caller compares it line
// by line, unless it found intact the past of this very state.
func checkPast(f *os.File, cur stat, st db.FileState, intact *db.FileState) error {
	if st.SyncedOffset == 0 {
		return nil
	}
	if cur.size < st.SyncedOffset {
		return &errRewritten{reason: fmt.Sprintf("the file shrank from at least %d to %d bytes", st.SyncedOffset, cur.size), st: st}
	}
	if st.TailHash != pastChanged {
		h, err := tailHash(f, st.SyncedOffset)
		if err != nil {
			return err
		}
		if h != st.TailHash {
			return &errRewritten{reason: "bytes already indexed have changed", st: st}
		}
	}
	compared := intact != nil && *intact == st
	if why := suspectPast(cur, st); why != "" && !compared {
		return &errRewritten{reason: why, suspect: true, st: st}
	}
	return nil
}

// suspectPast says why the bytes sync already read of a file that did not
// shrink may have changed, or "" when nothing suggests it.
func suspectPast(cur stat, st db.FileState) string {
	switch {
	case st.TailHash == pastChanged:
		return "bytes already indexed have changed (found by orbit verify)"
	case st.Size < 0:
		// The last sync left more to read and its stat unmatched on purpose.
		return ""
	case st.Ino != 0 && (cur.dev != st.Dev || cur.ino != st.Ino):
		return "the file was replaced by another (a new inode)"
	case cur.size == st.Size && cur.mtimeNS != st.MtimeNS:
		return "the file was written without growing (an append grows it)"
	}
	return ""
}

// tailHash hashes up to tailWindow bytes before off.
func tailHash(f *os.File, off int64) (string, error) {
	start := max(off-tailWindow, 0)
	buf := make([]byte, off-start)
	if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:]), nil
}

// ingester turns parsed chunks into index rows within one transaction.
type ingester struct {
	tx   *db.Tx
	file string
	st   *db.FileState
	rep  *SyncReport
	// events are the outcome events added in this transaction, by seq, for
	// the check that their decisions exist.
	events map[int64]eventSource
}

type eventSource struct {
	c     Chunk
	field string
}

func (in *ingester) chunk(ctx context.Context, p *parsed) error {
	c := p.c
	switch c.Kind {
	case Blank:
		return nil
	case Bad:
		return in.finding(ctx, c, *c.Err)
	}
	for _, w := range c.Warnings {
		if err := in.finding(ctx, c, w); err != nil {
			return err
		}
	}
	if p.bad != nil {
		return in.finding(ctx, c, p.bad.at(in.file, c, ""))
	}
	if p.kind == KindRetro {
		return in.outcome(ctx, p)
	}
	return in.decision(ctx, p)
}

func (in *ingester) decision(ctx context.Context, pc *parsed) error {
	c, p := pc.c, pc.dec
	row := decisionRow(p, c, in.st.ID)
	if !p.TSTime.IsZero() {
		in.st.LastTSNS = p.TSTime.UnixNano()
	}
	ok, err := in.tx.InsertDecision(ctx, &row)
	if err != nil {
		return err
	}
	if !ok {
		path, line, err := in.tx.DecisionLocation(ctx, p.ID)
		if err != nil {
			return err
		}
		return in.finding(ctx, c, Problem{File: in.file, Line: c.Line, LineEnd: c.LineEnd, Severity: SevError, Code: CodeDuplicate, RecordID: p.ID,
			Message: fmt.Sprintf("duplicate id %q (first at %s:%d); not indexed", p.ID, path, line)})
	}
	in.rep.Decisions++
	in.st.Records++
	for _, w := range pc.warns {
		if err := in.finding(ctx, c, w.at(in.file, c, p.ID)); err != nil {
			return err
		}
	}
	if !p.Event {
		return nil
	}
	return in.event(ctx, c, *p.Retrograde.PreviousID, p.Retrograde.Outcome, p.TS, "", p.ID, "")
}

func (in *ingester) outcome(ctx context.Context, pc *parsed) error {
	c, p := pc.c, pc.out
	for _, w := range pc.warns {
		if err := in.finding(ctx, c, w.at(in.file, c, p.DecisionID)); err != nil {
			return err
		}
	}
	if !p.TSTime.IsZero() {
		in.st.LastTSNS = p.TSTime.UnixNano()
	}
	in.st.Records++
	return in.event(ctx, c, p.DecisionID, p.Outcome, p.TS, p.Evidence, "", string(c.Text))
}

// event records an outcome for decisionID at the current event time of the
// file: the line's ts, or the last valid ts before it.
func (in *ingester) event(ctx context.Context, c Chunk, decisionID, outcome, ts, evidence, recordedBy, raw string) error {
	rank, field := int64(1), "decision_id"
	if recordedBy != "" {
		rank, field = 0, "retrograde.previous_id"
	}
	e := db.EventRow{DecisionID: decisionID, Outcome: outcome, AtNS: in.st.LastTSNS, SrcRank: rank, TS: ts, Evidence: evidence,
		FileID: in.st.ID, Line: int64(c.Line), RecordedBy: recordedBy, Raw: raw}
	if err := in.tx.InsertEvent(ctx, &e); err != nil {
		return err
	}
	in.rep.Events++
	in.st.Events++
	if in.events == nil {
		in.events = map[int64]eventSource{}
	}
	in.events[e.Seq] = eventSource{c: c, field: field}
	return nil
}

// orphans reports the events added since mark whose decision is not in the
// journal: one query for the whole batch. The warning is not stored, since
// whether the decision exists changes as the files grow; verify computes it
// from the index as it stands.
func (in *ingester) orphans(ctx context.Context, mark int64) error {
	if len(in.events) == 0 {
		return nil
	}
	orphans, err := in.tx.OrphanEvents(ctx, mark)
	if err != nil {
		return err
	}
	for _, o := range orphans {
		if src, ok := in.events[o.Seq]; ok {
			in.rep.Problems = append(in.rep.Problems, orphanProblem(in.file, src.c.Line, src.c.LineEnd, src.field, o.DecisionID))
		}
	}
	return nil
}

func orphanProblem(file string, line, end int, field, id string) Problem {
	return Problem{File: file, Line: line, LineEnd: end, Severity: SevWarning, Code: CodeUnknownID, RecordID: id,
		Message: fmt.Sprintf("%s %q names no decision in the journal (yet); the outcome is kept", field, id)}
}

func (in *ingester) finding(ctx context.Context, c Chunk, p Problem) error {
	f := db.FindingRow{FileID: in.st.ID, Line: int64(p.Line), LineEnd: int64(p.LineEnd), ByteOffset: c.Offset, Length: c.Length,
		Severity: string(p.Severity), Code: p.Code, RecordID: p.RecordID, Message: p.Message, Excerpt: excerpt(c.Text)}
	if err := in.tx.InsertFinding(ctx, &f); err != nil {
		return err
	}
	if p.Severity == SevError {
		in.st.Rejected++
	} else {
		in.st.Warnings++
	}
	in.rep.Problems = append(in.rep.Problems, p)
	return nil
}

// excerpt keeps the start of a rejected line for reports.
func excerpt(b []byte) string {
	const n = 200
	if len(b) > n {
		b = b[:n]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func decisionRow(p Parsed, c Chunk, fileID int64) db.DecisionRow {
	d := p.Decision
	row := db.DecisionRow{
		ID: d.ID, FileID: fileID, Line: int64(c.Line), LineEnd: int64(c.LineEnd), ByteOffset: c.Offset,
		Iteration: d.Iteration, TS: d.TS, Tier: d.Tier, Depth: d.Depth, Category: d.Category, Input: d.Input,
		Decision: d.Decision, Reason: d.Reason, NextAction: d.NextAction, Verification: d.Verification,
		RetroOutcome: d.Retrograde.Outcome, Requestor: d.Requestor, Context: d.Context, RequestID: d.RequestID, Raw: string(c.Text),
	}
	if !p.TSTime.IsZero() {
		row.TSNS = sql.NullInt64{Int64: p.TSTime.UnixNano(), Valid: true}
	}
	if d.Retrograde.PreviousID != nil {
		row.RetroPrevID = sql.NullString{String: *d.Retrograde.PreviousID, Valid: true}
	}
	if d.Confidence != nil {
		row.Confidence = sql.NullFloat64{Float64: *d.Confidence, Valid: true}
	}
	return row
}

// recoverRewritten handles a file whose past changed: it finds the first
// line that differs, saves what the index holds from there on (so nothing
// acknowledged is lost even if the file lost it), and resets the file's part
// of the index for the caller to re-read. If another sync has changed the
// file's state since the change was found, it leaves the file to the next
// batch, which checks it again.
func (ix *Index) recoverRewritten(ctx context.Context, spec FileSpec, rw *errRewritten, rep *SyncReport) error {
	var first difference
	if rw.diff != nil {
		first = *rw.diff
	} else {
		var err error
		if first, err = ix.firstDifference(ctx, spec); err != nil {
			return err
		}
	}
	var saved string
	handled := false
	err := ix.Store.InTx(ctx, func(tx *db.Tx) error {
		st, found, err := tx.FileState(ctx, spec.Path)
		if err != nil || !found || st != rw.st {
			return err
		}
		handled = true
		raws, err := tx.RawFrom(ctx, st.ID, int64(first.line))
		if err != nil {
			return err
		}
		// Reset before writing a file: a damaged index fails here, when no
		// file has changed and the command may run again on a fresh index.
		if err := tx.ResetFile(ctx, st.ID); err != nil {
			return err
		}
		saved, err = ix.saveRecovered(spec, raws)
		return err
	})
	if err != nil || !handled {
		return err
	}
	msg := fmt.Sprintf("append-only promise broken: %s; first differing line %d (%s); the index is rebuilt from the file as it is now", rw.reason, first.line, first.what)
	if saved != "" {
		msg += "; the records the index held from that line on are saved in " + saved
		rep.Recovered = append(rep.Recovered, saved)
	}
	rep.Rewritten = append(rep.Rewritten, Problem{File: spec.Path, Line: first.line, LineEnd: first.line, Severity: SevError, Code: "rewritten", Message: msg})
	return nil
}

// saveRecovered writes raw records the index held for a file to a recovery
// file beside the journal, and returns its path relative to the root (""
// when there was nothing to save).
func (ix *Index) saveRecovered(spec FileSpec, raws []string) (string, error) {
	if len(raws) == 0 {
		return "", nil
	}
	base := strings.TrimSuffix(filepath.Base(spec.Path), filepath.Ext(spec.Path))
	rel := filepath.Join(filepath.Dir(spec.Path), fmt.Sprintf("orbit-recovered-%s-%s.jsonl", base, ix.Now().UTC().Format("20060102T150405.000000000Z")))
	var buf bytes.Buffer
	for _, r := range raws {
		buf.WriteString(compactLine(r))
		buf.WriteByte('\n')
	}
	if err := WriteFileAtomic(ix.Project.Path(rel), buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	return rel, nil
}
