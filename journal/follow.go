package journal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/project"
)

// The follower reads every append-only file orbit indexes: the decision
// and retrograde journals, and those the feature packages register (the
// loop events journal, the knowledge journal). It owns what is the same for
// all of them: the synced offset and the file's identity, the tail check, a
// rewritten past found and named by its first differing line, torn lines,
// the recovery file, the findings, and batches. A Kind plugs in only what
// its lines mean and where the index keeps them.

// Kind is one kind of append-only file: how to read one of its records and
// where the index keeps them. Everything else is the follower's.
type Kind interface {
	// Name is the kind as the index stores it (journal_files.kind).
	Name() string
	// Decode reads one record's text. It runs on the follower's decoding
	// goroutine while the index takes the lines before it, so it must not
	// touch the index.
	Decode(text []byte) Decoded
	// Begin starts indexing records of the file st in tx (one batch). The
	// batch may update st's Events and LastTSNS; the follower keeps the rest.
	Begin(ctx context.Context, tx *db.Tx, st *db.FileState) (Batch, error)
	// Reset forgets every record the index holds from a file, for it to be
	// read again from its first byte (the file's findings and sync state
	// are the follower's).
	Reset(ctx context.Context, tx *db.Tx, fileID int64) error
	// Records is the query of the records the index holds from file ?1,
	// one row per record: its line, its text as read (text) and its id
	// (record_id, "" when it has none). Verify compares them with the file,
	// and a rewritten past's recovery file is made of them.
	Records() string
}

// Decoded is one record as its Kind read it.
type Decoded struct {
	// Record is what the batch's Apply indexes.
	Record any
	// ID names the record in the findings about it ("" when it has none).
	ID string
	// Warnings are remarks that do not stop the record, and Reject, when
	// set, is why the line is not indexed (it stays in the file). Neither
	// names a file or line: the follower does.
	Warnings []Problem
	Reject   *Problem
}

// Batch indexes the records of one file within one transaction.
type Batch interface {
	// Apply indexes one record. A non-nil reject keeps it out of the index
	// (a duplicate id): the line is then a rejected line, as if Decode had
	// rejected it.
	Apply(ctx context.Context, c Chunk, d Decoded) (reject *Problem, err error)
	// Done ends the batch: statements for the whole batch, and warnings that
	// depend on more than one line (returned, not stored: they change as
	// the files grow).
	Done(ctx context.Context) ([]Problem, error)
}

// Checker is a Kind whose verify has findings beyond each line's own:
// verify asks it for them about each file of its kind.
type Checker interface {
	Check(ctx context.Context, store *db.Store, st db.FileState) ([]Problem, error)
}

// FileSpec names an append-only file (relative to the project root) and
// the kind of records it holds.
type FileSpec struct {
	Path string
	Kind Kind
}

var registry struct {
	sync.Mutex
	files []FileSpec
}

// Register adds an append-only file that every Index made by NewIndex
// follows. The packages that own a kind call it from init: journal knows no
// feature package. It panics on a path registered twice.
func Register(spec FileSpec) {
	registry.Lock()
	defer registry.Unlock()
	for _, f := range append(defaultFiles(), registry.files...) {
		if f.Path == spec.Path {
			panic(fmt.Sprintf("journal: %s registered twice", spec.Path))
		}
	}
	registry.files = append(registry.files, spec)
	slices.SortFunc(registry.files, func(a, b FileSpec) int { return strings.Compare(a.Path, b.Path) })
}

// Followed returns the files NewIndex follows: the decision journal, then
// the retrograde journal (so that outcome events find their decisions),
// then the registered ones by path (whatever order the packages' init
// ran in).
func Followed() []FileSpec {
	registry.Lock()
	defer registry.Unlock()
	return append(defaultFiles(), registry.files...)
}

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

// Index is a project's append-only files and the store derived from them.
type Index struct {
	Store   *db.Store
	Project project.Project
	// Files are the files Sync and Verify read, in order.
	Files []FileSpec
	// Now is the clock sync reads: to tell a last line still being written
	// from one cut short, and for the recovery file's name.
	Now func() time.Time
	// decoded holds records import has just decoded and appended, for the
	// sync that indexes them not to decode them again.
	decoded *decodedLines
	// bulk is the bulk load of the full-text index an import runs.
	bulk *bulkText
	// appended, while set, is the fsync of lines import has just written:
	// a sync batch indexes them meanwhile and waits for it before it
	// commits, so that the index is never ahead of the journal.
	appended *pendingFsync
}

// NewIndex couples a project with its open store, following every file
// (Followed).
func NewIndex(store *db.Store, p project.Project) *Index {
	return &Index{Store: store, Project: p, Files: Followed(), Now: time.Now}
}

// Following is an Index of the same project and store that reads only the
// files given: a feature package syncs its own journal with it.
func (ix *Index) Following(files ...FileSpec) *Index {
	c := *ix
	c.Files = files
	return &c
}

// SyncReport says what a sync did.
type SyncReport struct {
	Decisions int // decisions added
	Events    int // outcome events added
	// Added counts the records added, by kind (decisions, outcome lines of
	// the retrograde journal, loop events, knowledge events).
	Added map[string]int
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

// Merge adds what another sync did.
func (r *SyncReport) Merge(o SyncReport) {
	r.Decisions += o.Decisions
	r.Events += o.Events
	for k, n := range o.Added {
		r.add(k, n)
	}
	r.Problems = append(r.Problems, o.Problems...)
	r.Torn = append(r.Torn, o.Torn...)
	r.Rewritten = append(r.Rewritten, o.Rewritten...)
	r.Recovered = append(r.Recovered, o.Recovered...)
}

func (r *SyncReport) add(kind string, n int) {
	if n == 0 {
		return
	}
	if r.Added == nil {
		r.Added = map[string]int{}
	}
	r.Added[kind] += n
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
	// One query for the state of every file: the hook path's only read
	// when nothing changed.
	states, bulk, err := ix.Store.SyncStates(ctx)
	if err != nil {
		return rep, err
	}
	if bulk && ix.bulk == nil {
		// Another process's bulk load is pending (running, or cut short):
		// the full-text index lacks its decisions until it is finished.
		if err := ix.finishBulk(ctx); err != nil {
			return rep, err
		}
		// The scratch database of a load cut short by a crash (one still
		// running has it open, and finds its mark gone).
		if err := db.Remove(db.BulkTextPath(ix.Store.Path)); err != nil {
			return rep, err
		}
	}
	byPath := make(map[string]db.FileState, len(states))
	for _, st := range states {
		byPath[st.Path] = st
	}
	for _, f := range ix.Files {
		prev, found := byPath[f.Path]
		if err := ix.syncFile(ctx, f, prev, found, opts, &rep); err != nil {
			return rep, err
		}
	}
	if rep.Decisions >= mergeTextAfter {
		return rep, ix.Store.MergeText(ctx)
	}
	return rep, nil
}

// mergeTextAfter is how many decisions a sync or an import adds before it
// merges the full-text index into one segment (db.Store.MergeText): a
// search looks each word up in every segment, and loading a journal in
// batches leaves dozens (25 after importing 1M decisions, and 9-16% of an
// `orbit precedent`'s instructions spent seeking in them). The merge
// rewrites the whole full-text index, about 3 s at 1M.
var mergeTextAfter = 100_000

// FileStat is what a sync compares to decide whether a file changed: the
// file's identity (device, inode), size and modification time.
type FileStat struct {
	Exists   bool
	Dev, Ino int64
	Size     int64
	MtimeNS  int64
}

// Stat stats a file a sync reads, without following a link: a file that
// is absent (or under a path that is not a directory) is a FileStat that
// does not exist; anything but a regular file (a link in a journal's place
// included) is an error.
func Stat(path string) (FileStat, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return FileStat{}, nil
	}
	if err != nil {
		return FileStat{}, fmt.Errorf("sync %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return FileStat{}, fmt.Errorf("sync: %w", project.NotRegular(path, fi.Mode()))
	}
	s := FileStat{Exists: true, Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Dev, s.Ino = int64(sys.Dev), int64(sys.Ino)
	}
	return s, nil
}

// Same reports whether two stats show the same file unchanged.
func (s FileStat) Same(o FileStat) bool {
	return s.Dev == o.Dev && s.Ino == o.Ino && s.Size == o.Size && s.MtimeNS == o.MtimeNS
}

// stateStat is the stat a sync state recorded.
func stateStat(st db.FileState) FileStat {
	return FileStat{Exists: true, Dev: st.Dev, Ino: st.Ino, Size: st.Size, MtimeNS: st.MtimeNS}
}

// upToDate reports whether the file is as the last sync left it (same
// inode, size and modification time) with nothing to check in its past.
func (s FileStat) upToDate(st db.FileState) bool {
	return s.Same(stateStat(st)) && st.TailHash != pastChanged
}

// stale reports whether the file has gone unwritten for tornAfter by now: an
// unterminated last line in it is a write cut short, not one in progress.
func (s FileStat) stale(now time.Time) bool {
	return now.Sub(time.Unix(0, s.MtimeNS)) >= tornAfter
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

func (ix *Index) syncFile(ctx context.Context, spec FileSpec, prev db.FileState, found bool, opts SyncOptions, rep *SyncReport) error {
	now := ix.Now()
	st0, err := Stat(ix.Project.Path(spec.Path))
	if err != nil {
		return err
	}
	if found && st0.upToDate(prev) {
		if prev.TornLine > 0 && st0.stale(now) {
			rep.Torn = append(rep.Torn, tornProblem(spec.Path, prev.TornLine))
		}
		return nil
	}
	if !found && !st0.Exists {
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
		cur, err := Stat(abs)
		if err != nil {
			return err
		}
		if found && cur.upToDate(st) {
			done = true
			return nil
		}
		seen := st
		st.Kind = spec.Kind.Name()
		if !found {
			if err := tx.SaveFileState(ctx, &st); err != nil {
				return err
			}
		}
		if !cur.Exists {
			if st.SyncedOffset > 0 {
				return &errRewritten{reason: "the file is gone", st: seen}
			}
			done = true
			return nil
		}
		f, err := project.Open(ix.Project.Root, abs)
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
		batch, err := spec.Kind.Begin(ctx, tx, &st)
		if err != nil {
			return err
		}
		if b, ok := batch.(*decisionBatch); ok {
			b.bulk = ix.bulk
		}
		in := ingester{tx: tx, file: spec.Path, st: &st, rep: &local, batch: batch}
		records, events := st.Records, st.Events
		st.TornLine, st.TornSize = 0, 0
		n := 0
		kind := spec.Kind
		if ix.decoded != nil {
			kind = knownKind{Kind: kind, lines: ix.decoded}
		}
		err = produce(ctx, NewReader(f, spec.Path, st.SyncedOffset, int(st.SyncedLines)), kind, batchRecords, func(p *parsed) error {
			if p.c.Kind == Pending {
				st.TornLine, st.TornSize = int64(p.c.Line), cur.Size-p.c.Offset
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
				opts.Progress(spec.Path, st.SyncedOffset, cur.Size)
			}
			return nil
		})
		if err != nil {
			return err
		}
		done = n < batchRecords
		remarks, err := batch.Done(ctx)
		if err != nil {
			return err
		}
		local.Problems = append(local.Problems, remarks...)
		if opts.Progress != nil {
			opts.Progress(spec.Path, st.SyncedOffset, cur.Size)
		}
		if st.TailHash, err = tailHash(f, st.SyncedOffset); err != nil {
			return fmt.Errorf("sync %s: %w", spec.Path, err)
		}
		local.add(st.Kind, int(st.Records-records))
		local.Events = int(st.Events - events)
		if st.Kind == KindDecisions {
			local.Decisions = int(st.Records - records)
		}
		if done {
			st.Dev, st.Ino, st.Size, st.MtimeNS = cur.Dev, cur.Ino, cur.Size, cur.MtimeNS
		} else {
			// More to read: leave the stat unmatched so the next batch runs.
			st.Size = -1
		}
		st.SyncedAt = time.Now().UTC().Format(time.RFC3339Nano)
		if ix.appended != nil {
			if err := ix.appended.wait(); err != nil {
				return err
			}
		}
		return tx.SaveFileState(ctx, &st)
	})
	if ix.bulk != nil {
		ix.bulk.ended(err == nil)
	}
	if err != nil {
		return false, err
	}
	rep.Merge(local)
	return done, nil
}

// decodedLines are lines of a journal with their records, in the order they
// were appended.
type decodedLines struct {
	kind  string
	texts []string
	recs  []Decoded
	next  int
}

// knownKind decodes a line from decodedLines when its text is the next one
// there, and with its Kind otherwise. A Kind's Decode is a function of the
// text alone, so the record is the one Decode would return.
type knownKind struct {
	Kind
	lines *decodedLines
}

func (k knownKind) Decode(text []byte) Decoded {
	l := k.lines
	if k.Name() == l.kind && l.next < len(l.texts) && string(text) == l.texts[l.next] {
		l.next++
		return l.recs[l.next-1]
	}
	return k.Kind.Decode(text)
}

// checkPast verifies that the bytes sync already read are still there,
// reading only the last of them so that syncing a grown file costs O(new
// bytes). An append always grows a file in place, so a file that changed
// without growing, or was replaced, is suspect: the caller compares it line
// by line, unless it found intact the past of this very state.
func checkPast(f *os.File, cur FileStat, st db.FileState, intact *db.FileState) error {
	if st.SyncedOffset == 0 {
		return nil
	}
	if cur.Size < st.SyncedOffset {
		return &errRewritten{reason: fmt.Sprintf("the file shrank from at least %d to %d bytes", st.SyncedOffset, cur.Size), st: st}
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
func suspectPast(cur FileStat, st db.FileState) string {
	switch {
	case st.TailHash == pastChanged:
		return "bytes already indexed have changed (found by orbit verify)"
	case st.Size < 0:
		// The last sync left more to read and its stat unmatched on purpose.
		return ""
	case st.Ino != 0 && (cur.Dev != st.Dev || cur.Ino != st.Ino):
		return "the file was replaced by another (a new inode)"
	case cur.Size == st.Size && cur.MtimeNS != st.MtimeNS:
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

// ingester turns parsed chunks into index rows within one transaction: the
// findings here, the records through the kind's batch.
type ingester struct {
	tx    *db.Tx
	file  string
	st    *db.FileState
	rep   *SyncReport
	batch Batch
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
	if p.d.Reject != nil {
		return in.finding(ctx, c, locate(*p.d.Reject, in.file, c, ""))
	}
	reject, err := in.batch.Apply(ctx, c, p.d)
	if err != nil {
		return err
	}
	if reject != nil {
		return in.finding(ctx, c, locate(*reject, in.file, c, ""))
	}
	in.st.Records++
	for _, w := range p.d.Warnings {
		if err := in.finding(ctx, c, locate(w, in.file, c, p.d.ID)); err != nil {
			return err
		}
	}
	return nil
}

// locate names the file and lines of a remark about chunk c, and the record
// it is about when it names none.
func locate(p Problem, file string, c Chunk, id string) Problem {
	p.File, p.Line, p.LineEnd = file, c.Line, c.LineEnd
	if p.RecordID == "" {
		p.RecordID = id
	}
	return p
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
		raws, err := tx.TextFrom(ctx, spec.Kind.Records(), st.ID, int64(first.line))
		if err != nil {
			return err
		}
		// Reset before writing a file: a damaged index fails here, when no
		// file has changed and the command may run again on a fresh index.
		if err := spec.Kind.Reset(ctx, tx, st.ID); err != nil {
			return err
		}
		if err := tx.ForgetFile(ctx, st.ID); err != nil {
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
	rep.Rewritten = append(rep.Rewritten, Problem{File: spec.Path, Line: first.line, LineEnd: first.line, Severity: SevError, Code: CodeRewritten, Message: msg})
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
	if err := WriteFileAtomic(ix.Project.Root, rel, buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	return rel, nil
}
