package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/orbit-loop/orbit/project"
)

// ImportFlushRecords bounds how many accepted records import holds before it
// appends them to the journal and syncs them: memory stays flat whatever the
// size of the file, and ids already imported are found in the index.
const ImportFlushRecords = 10000

// ImportOptions tune Import.
type ImportOptions struct {
	// DryRun reads and checks everything and appends nothing to the
	// journal. (It still syncs the index with what others appended, the
	// one ingest path, so that "already present" and conflicts are right.)
	DryRun bool
	// Progress, if set, is called as each source file is read.
	Progress func(file string, done, total int64)
}

// ImportFile is what import did with one source file.
type ImportFile struct {
	Path      string `json:"path"`
	Records   int    `json:"records"`
	Appended  int    `json:"appended"`
	Skipped   int    `json:"skipped"`
	Conflicts int    `json:"conflicts"`
	Rejected  int    `json:"rejected"`
}

// ImportReport is what import did.
type ImportReport struct {
	Files []*ImportFile `json:"files"`
	// Problems are the rejected lines and conflicts, located in the source
	// files.
	Problems []Problem `json:"problems"`
	// Sync is what the syncs of the appended lines found, located in the
	// journal.
	Sync SyncReport `json:"-"`
}

// Failed reports whether any line was rejected or conflicted.
func (r ImportReport) Failed() bool {
	for _, f := range r.Files {
		if f.Rejected > 0 || f.Conflicts > 0 {
			return true
		}
	}
	return false
}

// Import adds the decision records of other JSONL journals to this project's
// journal: appended to the authoritative file under its lock, then synced. A
// record whose id is already present with the same content is skipped; the
// same id with different content is a conflict and is not appended. Invalid
// lines are reported by file:line and the valid ones still import.
func (ix *Index) Import(ctx context.Context, paths []string, opts ImportOptions) (ImportReport, error) {
	var rep ImportReport
	im := importer{ix: ix, opts: opts, rep: &rep, seen: map[string]seenRecord{}}
	if !opts.DryRun {
		app, err := OpenAppender(ix.Project.Root, ix.Project.Path(ix.DecisionsFile()))
		if err != nil {
			return rep, err
		}
		defer app.Close()
		im.app = app
	}
	// Catch up under the lock, so that ids appended by others are known.
	if err := im.sync(ctx); err != nil {
		return rep, err
	}
	if !opts.DryRun {
		// Into an empty index, the full-text index is built on another
		// core while the rows go in (bulk.go).
		b, err := ix.startBulkText(ctx)
		if err != nil {
			return rep, err
		}
		if b != nil {
			ix.bulk = b
			defer func() {
				if ix.bulk != nil {
					ix.bulk = nil
					b.abort()
				}
			}()
		}
	}
	for _, p := range paths {
		if err := im.file(ctx, p); err != nil {
			return rep, err
		}
	}
	// Each flush's sync adds fewer than mergeTextAfter: the import merges
	// the full-text index once, at its end (a bulk load, in its scratch
	// database before the copy).
	merge := !opts.DryRun && rep.Sync.Decisions >= mergeTextAfter
	if b := ix.bulk; b != nil {
		ix.bulk = nil
		copied, err := ix.endBulkText(ctx, b, merge)
		if err != nil {
			return rep, err
		}
		merge = merge && !copied
	}
	if merge {
		return rep, ix.Store.MergeText(ctx)
	}
	return rep, nil
}

// DecisionsFile is the path of the decision journal the index follows.
func (ix *Index) DecisionsFile() string {
	if path := ix.fileOf(KindDecisions); path != "" {
		return path
	}
	return project.DecisionsFile
}

// fileOf is the path of the first file of a kind the index follows ("" if
// none).
func (ix *Index) fileOf(kind string) string {
	for _, f := range ix.Files {
		if f.Kind.Name() == kind {
			return f.Path
		}
	}
	return ""
}

type importer struct {
	ix   *Index
	opts ImportOptions
	rep  *ImportReport
	app  *Appender
	// batch holds records read but not yet resolved against the index.
	batch []candidate
	// seen maps the ids accepted in a dry run to their text and place (in a
	// real run they are in the index after each flush).
	seen map[string]seenRecord
}

// candidate is a valid record of a source file, not yet checked for its id.
type candidate struct {
	file *ImportFile
	c    Chunk
	id   string
	line string
	// d is the record as read from the source: the sync that indexes the
	// line appended takes it rather than decoding the line again, when the
	// line is the source's text (one line, not compacted).
	d     Decoded
	exact bool
}

// seenRecord is a record's text and where it stands (file:line, formatted
// only for a conflict's message).
type seenRecord struct {
	text, file string
	line       int64
}

func (r seenRecord) where() string { return fmt.Sprintf("%s:%d", r.file, r.line) }

func (im *importer) sync(ctx context.Context) error {
	rep, err := im.ix.Sync(ctx, SyncOptions{})
	im.rep.Sync.Merge(rep)
	return err
}

// flush resolves the batch against the index (one query), appends the
// records that are new in one write, and syncs them.
func (im *importer) flush(ctx context.Context) error {
	if len(im.batch) == 0 {
		return nil
	}
	ids := make([]string, len(im.batch))
	for i, c := range im.batch {
		ids[i] = c.id
	}
	if b := im.ix.bulk; b != nil {
		var err error
		if ids, err = b.indexed(ctx, im.ix.Store, ids); err != nil {
			return err
		}
	}
	indexed, err := im.ix.Store.DecisionsByID(ctx, ids)
	if err != nil {
		return err
	}
	size := 0
	for _, c := range im.batch {
		size += len(c.line) + 1
	}
	var buf bytes.Buffer
	buf.Grow(size)
	known := &decodedLines{kind: KindDecisions, texts: make([]string, 0, len(im.batch)), recs: make([]Decoded, 0, len(im.batch))}
	inBatch := make(map[string]seenRecord, len(im.batch))
	for _, c := range im.batch {
		prev, found := im.seen[c.id]
		if !found {
			prev, found = inBatch[c.id]
		}
		if !found {
			if r, ok := indexed[c.id]; ok {
				prev, found = seenRecord{text: r.Raw, file: im.ix.DecisionsFile(), line: r.Line}, true
			}
		}
		if found {
			if sameRecord(prev.text, c.line) {
				c.file.Skipped++
				continue
			}
			c.file.Conflicts++
			im.rep.Problems = append(im.rep.Problems, Problem{File: c.file.Path, Line: c.c.Line, LineEnd: c.c.LineEnd, Severity: SevError, Code: CodeConflict, RecordID: c.id,
				Message: fmt.Sprintf("id %q is already in the journal (%s) with different content; not imported", c.id, prev.where())})
			continue
		}
		c.file.Appended++
		here := seenRecord{text: c.line, file: c.file.Path, line: int64(c.c.Line)}
		if im.opts.DryRun {
			im.seen[c.id] = here
			continue
		}
		inBatch[c.id] = here
		buf.WriteString(c.line)
		buf.WriteByte('\n')
		if c.exact {
			known.texts = append(known.texts, c.line)
			known.recs = append(known.recs, c.d)
		}
	}
	clear(im.batch)
	im.batch = im.batch[:0]
	if buf.Len() == 0 {
		return nil
	}
	if err := im.app.Write(buf.Bytes()); err != nil {
		return err
	}
	// The fsync runs while the sync indexes the lines: it waits for it
	// before it commits them (a 1M import waited 1.2 s for its fsyncs).
	fsynced := startFsync(im.app)
	im.ix.decoded, im.ix.appended = known, fsynced
	err = im.sync(ctx)
	im.ix.decoded, im.ix.appended = nil, nil
	if serr := fsynced.wait(); err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	if afterImportFlush != nil {
		return afterImportFlush()
	}
	return nil
}

// pendingFsync is an Appender's fsync running on its own goroutine.
type pendingFsync struct {
	done chan struct{}
	err  error
}

func startFsync(a *Appender) *pendingFsync {
	p := &pendingFsync{done: make(chan struct{})}
	go func() {
		p.err = a.Sync()
		close(p.done)
	}()
	return p
}

// wait returns the fsync's error once it has ended.
func (p *pendingFsync) wait() error {
	<-p.done
	return p.err
}

// afterImportFlush, when set (by tests), runs after each flush of an
// import has been appended and synced: an error stops the import there, as
// a crash would.
var afterImportFlush func() error

func (im *importer) file(ctx context.Context, path string) error {
	f, err := project.OpenRegular(path)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("import %s: %w", path, err)
	}
	first := len(im.rep.Problems)
	fr := &ImportFile{Path: path}
	im.rep.Files = append(im.rep.Files, fr)
	var src io.Reader = f
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		src = csvLines(f, path)
	}
	r := NewReader(src, path, 0, 0)
	r.AcceptUnterminated = true
	n := 0
	err = produce(ctx, r, decisionKind{}, math.MaxInt, func(p *parsed) error {
		c := p.c
		if n++; im.opts.Progress != nil && n%1024 == 0 {
			im.opts.Progress(path, c.End(), fi.Size())
		}
		switch c.Kind {
		case Blank:
			return nil
		case Bad:
			// A line of a source file that is not imported is rejected,
			// a torn fragment too (a warning in a journal): the import
			// fails, so that someone looks at the file.
			fr.Rejected++
			rejected := *c.Err
			rejected.Severity = SevError
			im.rep.Problems = append(im.rep.Problems, rejected)
			return nil
		}
		fr.Records++
		for _, w := range c.Warnings {
			im.rep.Problems = append(im.rep.Problems, w)
		}
		if p.d.Reject != nil {
			fr.Rejected++
			im.rep.Problems = append(im.rep.Problems, locate(*p.d.Reject, path, c, ""))
			return nil
		}
		text := string(p.c.Text)
		line := compactLine(text)
		c.Text = nil
		im.batch = append(im.batch, candidate{file: fr, c: c, id: p.d.ID, line: line, d: p.d, exact: line == text})
		if len(im.batch) >= ImportFlushRecords {
			return im.flush(ctx)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("import %s: %w", path, err)
	}
	if im.opts.Progress != nil {
		im.opts.Progress(path, fi.Size(), fi.Size())
	}
	err = im.flush(ctx)
	// Conflicts are found at flush time: put this file's problems in line order.
	slices.SortStableFunc(im.rep.Problems[first:], func(a, b Problem) int { return a.Line - b.Line })
	return err
}

// sameRecord reports whether two record texts hold the same JSON object,
// whatever their spacing or field order.
func sameRecord(a, b string) bool {
	if a == b || compactLine(a) == compactLine(b) {
		return true
	}
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
