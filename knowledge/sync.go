package knowledge

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// Paths, relative to the project root.
const (
	// DefaultDir is conductor's knowledge directory (seed 004).
	DefaultDir = "conductor/knowledge"
	// JournalFile is orbit's knowledge journal: what orbit learns about the
	// knowledge files (matches, exports, registered directories), append
	// only.
	JournalFile = ".claude/orbit-knowledge.jsonl"
	// ErrorsFile and PatternsFile are the names of the two knowledge files
	// in a knowledge directory.
	ErrorsFile   = "errors.json"
	PatternsFile = "patterns.md"
)

// Kinds of the knowledge files in the index (knowledge_files.kind).
const (
	fileErrors   = "errors"
	filePatterns = "patterns"
)

// KindJournal is the knowledge journal's kind in the index
// (journal_files.kind).
const KindJournal = "knowledge"

// maxFileBytes bounds a knowledge file read whole.
const maxFileBytes = 256 << 20

// Index is a project's knowledge files and the store derived from them.
type Index struct {
	Store   *db.Store
	Project project.Project
	// Now is read once per write, for the ts of journal lines and the
	// dates of new entries.
	Now func() time.Time
}

// New couples a project with its open store.
func New(store *db.Store, p project.Project) *Index {
	return &Index{Store: store, Project: p, Now: time.Now}
}

// SyncReport says what a sync read.
type SyncReport struct {
	// Files are the knowledge files re-read (or found gone) by this sync.
	Files []FileReport `json:"files"`
	// Problems are the remarks about the files re-read and the journal
	// lines new in this sync.
	Problems []Problem `json:"problems"`
	// Broken lists files that cannot be read at all; they are reported by
	// every sync until they change.
	Broken []Problem `json:"broken"`
	// Rewritten lists a knowledge journal whose past changed: its events
	// were re-read from the start, and those the index held from the first
	// differing line on saved to Recovered.
	Rewritten []Problem `json:"rewritten"`
	Recovered []string  `json:"recovered_files"`
}

// FileReport is what a sync found in one knowledge file.
type FileReport struct {
	Path    string `json:"path"`
	Kind    string `json:"kind"`
	Shape   string `json:"shape"`
	Entries int    `json:"entries"`
	// Regex counts the error entries with a usable regex; Unusable those
	// with an invalid or match-everything one; NoPattern those without.
	Regex     int    `json:"regex"`
	Unusable  int    `json:"unusable"`
	NoPattern int    `json:"no_pattern"`
	Gone      bool   `json:"gone"`
	Error     string `json:"error,omitempty"`
}

// Errors counts the problems of severity error.
func (r SyncReport) Errors() int {
	n := len(r.Broken) + len(r.Rewritten)
	for _, p := range r.Problems {
		if p.Severity == SevError {
			n++
		}
	}
	return n
}

func (r *SyncReport) merge(o SyncReport) {
	r.Files = append(r.Files, o.Files...)
	r.Problems = append(r.Problems, o.Problems...)
	r.Broken = append(r.Broken, o.Broken...)
	r.Rewritten = append(r.Rewritten, o.Rewritten...)
	r.Recovered = append(r.Recovered, o.Recovered...)
}

// fileState is a knowledge_files row.
type fileState struct {
	ID           int64  `db:"id"`
	Path         string `db:"path"`
	Kind         string `db:"kind"`
	Dev          int64  `db:"dev"`
	Ino          int64  `db:"ino"`
	Size         int64  `db:"size"`
	MtimeNS      int64  `db:"mtime_ns"`
	Hash         string `db:"hash"`
	Shape        string `db:"shape"`
	SyncedOffset int64  `db:"synced_offset"`
	SyncedLines  int64  `db:"synced_lines"`
	TailHash     string `db:"tail_hash"`
	Entries      int64  `db:"entries"`
	Error        string `db:"error"`
	SyncedAt     string `db:"synced_at"`
}

type queryer interface {
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}

func getFileState(ctx context.Context, q queryer, path string) (fileState, bool, error) {
	var st fileState
	err := q.GetContext(ctx, &st, `SELECT * FROM knowledge_files WHERE path = ?`, path)
	if errors.Is(err, sql.ErrNoRows) {
		return fileState{Path: path}, false, nil
	}
	if err != nil {
		return st, false, schemaHint(fmt.Errorf("knowledge: read file state of %s: %w", path, err))
	}
	return st, true, nil
}

func saveFileState(ctx context.Context, tx *db.Tx, st *fileState) error {
	st.SyncedAt = time.Now().UTC().Format(time.RFC3339Nano)
	if st.ID == 0 {
		res, err := tx.NamedExecContext(ctx, `INSERT INTO knowledge_files (path, kind, dev, ino, size, mtime_ns, hash, shape, synced_offset,
			synced_lines, tail_hash, entries, error, synced_at) VALUES (:path, :kind, :dev, :ino, :size, :mtime_ns, :hash, :shape,
			:synced_offset, :synced_lines, :tail_hash, :entries, :error, :synced_at)`, st)
		if err != nil {
			return schemaHint(fmt.Errorf("knowledge: save state of %s: %w", st.Path, err))
		}
		st.ID, err = res.LastInsertId()
		return err
	}
	_, err := tx.NamedExecContext(ctx, `UPDATE knowledge_files SET kind = :kind, dev = :dev, ino = :ino, size = :size, mtime_ns = :mtime_ns,
		hash = :hash, shape = :shape, synced_offset = :synced_offset, synced_lines = :synced_lines, tail_hash = :tail_hash,
		entries = :entries, error = :error, synced_at = :synced_at WHERE id = :id`, st)
	if err != nil {
		return fmt.Errorf("knowledge: save state of %s: %w", st.Path, err)
	}
	return nil
}

// schemaHint explains an index created before the knowledge tables existed.
func schemaHint(err error) error {
	if err != nil && strings.Contains(err.Error(), "no such table: knowledge_") {
		return fmt.Errorf("%w (the index predates the knowledge tables; run `orbit rebuild`)", err)
	}
	return err
}

// into records a stat in a knowledge file's state.
func into(s journal.FileStat, st *fileState) {
	st.Dev, st.Ino, st.Size, st.MtimeNS = s.Dev, s.Ino, s.Size, s.MtimeNS
}

// unchanged reports whether a knowledge file is as its state recorded it.
func unchanged(s journal.FileStat, st fileState) bool {
	return s.Same(journal.FileStat{Exists: true, Dev: st.Dev, Ino: st.Ino, Size: st.Size, MtimeNS: st.MtimeNS})
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Rel names a path as the index stores it: relative to the project root
// when inside it, else absolute.
func (k *Index) Rel(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if r, err := filepath.Rel(k.Project.Root, abs); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
		return r
	}
	return abs
}

// Abs is the absolute path of a stored path.
func (k *Index) Abs(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return k.Project.Path(rel)
}

// Dirs are the knowledge directories sync reads: the default, then those
// registered by import, in the order they were registered.
func (k *Index) Dirs(ctx context.Context) ([]string, error) {
	var reg []string
	if err := k.Store.DB.SelectContext(ctx, &reg, `SELECT path FROM knowledge_events WHERE event = 'source' GROUP BY path ORDER BY min(seq)`); err != nil {
		return nil, schemaHint(fmt.Errorf("knowledge: registered directories: %w", err))
	}
	dirs := []string{DefaultDir}
	for _, d := range reg {
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs, nil
}

// Sync brings the index up to date with the knowledge journal (through the
// journal's follower) and the knowledge files: one stat for each file that
// has not changed.
func (k *Index) Sync(ctx context.Context) (SyncReport, error) {
	var rep SyncReport
	if err := k.syncJournal(ctx, &rep); err != nil {
		return rep, err
	}
	dirs, err := k.Dirs(ctx)
	if err != nil {
		return rep, err
	}
	for _, d := range dirs {
		if err := k.syncFile(ctx, filepath.Join(d, ErrorsFile), fileErrors, &rep); err != nil {
			return rep, err
		}
		if err := k.syncFile(ctx, filepath.Join(d, PatternsFile), filePatterns, &rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// syncFile re-reads a whole knowledge file when its stat changed and its
// content hash differs from what the index holds.
func (k *Index) syncFile(ctx context.Context, rel, kind string, rep *SyncReport) error {
	abs := k.Abs(rel)
	st0, err := journal.Stat(abs)
	if err != nil {
		return err
	}
	prev, found, err := getFileState(ctx, k.Store.DB, rel)
	if err != nil {
		return err
	}
	if found && unchanged(st0, prev) {
		if prev.Error != "" {
			rep.Broken = append(rep.Broken, brokenProblem(rel, prev.Error))
		}
		return nil
	}
	if !found && !st0.Exists {
		return nil
	}
	var local SyncReport
	err = k.Store.InTx(ctx, func(tx *db.Tx) error {
		local = SyncReport{}
		st, found, err := getFileState(ctx, tx, rel)
		if err != nil {
			return err
		}
		cur, err := journal.Stat(abs)
		if err != nil {
			return err
		}
		if found && unchanged(cur, st) {
			return nil
		}
		st.Kind = kind
		if !cur.Exists {
			if err := deleteEntries(ctx, tx, st.ID); err != nil {
				return err
			}
			into(cur, &st)
			st.Hash, st.Shape, st.Entries, st.Error = "", "", 0, ""
			local.Files = append(local.Files, FileReport{Path: rel, Kind: kind, Gone: true})
			return saveFileState(ctx, tx, &st)
		}
		if cur.Size > maxFileBytes {
			return fmt.Errorf("knowledge: %s is %d bytes; at most %d are read", rel, cur.Size, maxFileBytes)
		}
		data, err := project.ReadFile(k.Project.Root, abs, maxFileBytes)
		if err != nil {
			return fmt.Errorf("knowledge: %w", err)
		}
		h := sha(data)
		into(cur, &st)
		if found && h == st.Hash {
			if st.Error != "" {
				local.Broken = append(local.Broken, brokenProblem(rel, st.Error))
			}
			return saveFileState(ctx, tx, &st)
		}
		st.Hash = h
		if !found {
			if err := saveFileState(ctx, tx, &st); err != nil {
				return err
			}
		}
		if err := deleteEntries(ctx, tx, st.ID); err != nil {
			return err
		}
		fr := FileReport{Path: rel, Kind: kind}
		var entries []Entry
		switch kind {
		case fileErrors:
			reg, perr := parseRegistry(rel, data)
			if perr != nil {
				st.Error, fr.Error = perr.Error(), perr.Error()
				local.Broken = append(local.Broken, brokenProblem(rel, perr.Error()))
				break
			}
			st.Error = ""
			entries, fr.Shape = reg.entries, reg.shape
			local.Problems = append(local.Problems, reg.problems...)
		case filePatterns:
			var probs []Problem
			entries, probs = parsePatterns(rel, data)
			st.Error, fr.Shape = "", patternsShape(entries)
			local.Problems = append(local.Problems, probs...)
		}
		if err := insertEntries(ctx, tx, st.ID, rel, entries); err != nil {
			return err
		}
		for _, e := range entries {
			if e.Kind != KindError {
				continue
			}
			switch {
			case e.State == StateOK:
				fr.Regex++
			case e.State == StateNone:
				fr.NoPattern++
			default:
				fr.Unusable++
			}
		}
		fr.Entries = len(entries)
		st.Shape, st.Entries = fr.Shape, int64(len(entries))
		local.Files = append(local.Files, fr)
		return saveFileState(ctx, tx, &st)
	})
	if err != nil {
		return err
	}
	rep.merge(local)
	return nil
}

func brokenProblem(rel, msg string) Problem {
	p := Problem{File: rel, Line: 1, Severity: SevError, Code: "unreadable", Message: msg}
	// The message already starts with file:line.
	if rest, ok := strings.CutPrefix(msg, rel+":"); ok {
		var line, col int
		if n, _ := fmt.Sscanf(rest, "%d:%d:", &line, &col); n == 2 {
			p.Line, p.Message = line, strings.TrimSpace(rest[len(fmt.Sprintf("%d:%d:", line, col)):])
		} else if n, _ := fmt.Sscanf(rest, "%d:", &line); n == 1 {
			p.Line, p.Message = line, strings.TrimSpace(rest[len(fmt.Sprintf("%d:", line)):])
		}
	}
	p.LineEnd = p.Line
	return p
}

// patternsShape names how a patterns.md is written.
func patternsShape(es []Entry) string {
	var sections, bullets int
	for _, e := range es {
		if e.Shape == "section" {
			sections++
		} else {
			bullets++
		}
	}
	switch {
	case sections == 0 && bullets == 0:
		return ShapeScaffold
	case bullets == 0:
		return "sections"
	case sections == 0:
		return "bullets"
	}
	return "mixed"
}

// deleteEntries forgets what the index holds from one knowledge file.
func deleteEntries(ctx context.Context, tx *db.Tx, fileID int64) error {
	if fileID == 0 {
		return nil
	}
	for _, q := range []string{
		`INSERT INTO knowledge_fts (knowledge_fts, rowid, name, symptom, solution)
			SELECT 'delete', id, name, symptom, solution FROM knowledge_patterns WHERE file_id = ? AND pattern_state <> 'ok'`,
		`DELETE FROM knowledge_atoms WHERE pattern_id IN (SELECT id FROM knowledge_patterns WHERE file_id = ?)`,
		`DELETE FROM knowledge_patterns WHERE file_id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, fileID); err != nil {
			return fmt.Errorf("knowledge: forget file %d: %w", fileID, err)
		}
	}
	return nil
}

// insertEntries indexes a file's entries: the rows, the regex prefilter
// (each regex under its rarest requirement in the file, each literal of it
// under its rarest trigram) and the full text of the entries without a
// usable regex.
func insertEntries(ctx context.Context, tx *db.Tx, fileID int64, rel string, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	// How many entries require each literal, and hold each trigram.
	shared := map[string]int{}
	freq := map[int64]int{}
	for _, e := range entries {
		seen := map[string]bool{}
		for _, req := range e.Reqs {
			for _, a := range req {
				if !seen[a] {
					seen[a] = true
					shared[a]++
					for _, t := range trigrams(a) {
						freq[t]++
					}
				}
			}
		}
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO knowledge_patterns (file_id, source_path, entry_id, ordinal, line, kind, name, pattern,
		pattern_state, pattern_error, specificity, category, track, symptom, solution, code_fix, occurrences, last_seen, raw)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("knowledge: index %s: %w", rel, err)
	}
	defer ins.Close()
	atom, err := tx.PrepareContext(ctx, `INSERT INTO knowledge_atoms (pattern_id, tri, atom) VALUES (?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("knowledge: index %s: %w", rel, err)
	}
	defer atom.Close()
	fts, err := tx.PrepareContext(ctx, `INSERT INTO knowledge_fts (rowid, name, symptom, solution) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("knowledge: index %s: %w", rel, err)
	}
	defer fts.Close()
	for _, e := range entries {
		res, err := ins.ExecContext(ctx, fileID, rel, e.Key, e.Ordinal, e.Line, e.Kind, e.Name, e.Pattern, storedState(e.State), e.StateWhy,
			e.Specificity, e.Category, e.Track, e.Symptom, e.Solution, e.CodeFix, e.Occurrences, e.LastSeen, e.Raw)
		if err != nil {
			return fmt.Errorf("knowledge: index %s:%d: %w", rel, e.Line, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if e.State != StateOK {
			if _, err := fts.ExecContext(ctx, id, e.Name, e.Symptom, e.Solution); err != nil {
				return fmt.Errorf("knowledge: index %s:%d: %w", rel, e.Line, err)
			}
			continue
		}
		atoms := rarest(e.Reqs, shared)
		if len(atoms) == 0 {
			if _, err := atom.ExecContext(ctx, id, -1, ""); err != nil {
				return fmt.Errorf("knowledge: index %s:%d: %w", rel, e.Line, err)
			}
			continue
		}
		for _, a := range atoms {
			tri := int64(-1)
			best := 0
			for _, t := range trigrams(a) {
				if f := freq[t]; tri < 0 || f < best {
					tri, best = t, f
				}
			}
			if _, err := atom.ExecContext(ctx, id, tri, a); err != nil {
				return fmt.Errorf("knowledge: index %s:%d: %w", rel, e.Line, err)
			}
		}
	}
	return nil
}

// rarest picks the requirement whose literals the fewest entries share (a
// literal under three bytes cannot be looked up, so it counts as shared by
// all); ties go to the longer literals.
func rarest(reqs [][]string, shared map[string]int) []string {
	var best []string
	bestCost := 0
	for _, req := range reqs {
		cost := 0
		for _, a := range req {
			if len(a) < 3 {
				cost += 1 << 20
			}
			cost += shared[a]
		}
		if best == nil || cost < bestCost || (cost == bestCost && minLen(req) > minLen(best)) {
			best, bestCost = req, cost
		}
	}
	return best
}

// journalLine is one line of the knowledge journal.
type journalLine struct {
	TS     string `json:"ts"`
	Event  string `json:"event"`
	File   string `json:"file,omitempty"`
	ID     string `json:"id,omitempty"`
	Dir    string `json:"dir,omitempty"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// IsHit reports whether a line the follower decoded from the knowledge
// journal (journal.DecodeChunk) is a match counted (an "event": "hit"), for
// another reader of the same lines (the hub).
func IsHit(d journal.Decoded) bool {
	ev, ok := d.Record.(journalLine)
	return ok && ev.Event == "hit"
}

// syncJournal indexes what was appended to the knowledge journal, through
// the journal's follower.
func (k *Index) syncJournal(ctx context.Context, rep *SyncReport) error {
	ix := &journal.Index{Store: k.Store, Project: k.Project, Files: []journal.FileSpec{followed}, Now: k.Now}
	jr, err := ix.Sync(ctx, journal.SyncOptions{})
	rep.Problems = append(append(rep.Problems, jr.Problems...), jr.Torn...)
	rep.Rewritten = append(rep.Rewritten, jr.Rewritten...)
	rep.Recovered = append(rep.Recovered, jr.Recovered...)
	return err
}

// followed is the knowledge journal as the journal's follower reads it.
var followed = journal.FileSpec{Path: JournalFile, Kind: journalKind{}}

func init() { journal.Register(followed) }

// journalKind reads the knowledge journal into knowledge_events; the
// follower does the rest (offset, tail check, rewritten past, torn lines).
type journalKind struct{}

func (journalKind) Name() string { return KindJournal }

func (journalKind) Decode(text []byte) journal.Decoded {
	ev, bad := parseJournalLine(text)
	return journal.Decoded{Record: ev, ID: ev.ID, Reject: bad}
}

func (journalKind) Begin(ctx context.Context, tx *db.Tx, st *db.FileState) (journal.Batch, error) {
	ins, err := tx.PrepareContext(ctx, `INSERT INTO knowledge_events (file_id, line, event, path, entry_id, ts, day, before_hash, after_hash, raw)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return nil, schemaHint(fmt.Errorf("knowledge: sync %s: %w", JournalFile, err))
	}
	return &journalBatch{ins: ins, fileID: st.ID}, nil
}

func (journalKind) Reset(ctx context.Context, tx *db.Tx, fileID int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM knowledge_events WHERE file_id = ?`, fileID); err != nil {
		return fmt.Errorf("knowledge: reset %s: %w", JournalFile, err)
	}
	return nil
}

func (journalKind) Records() string {
	return `SELECT line, raw AS text, entry_id AS record_id FROM knowledge_events WHERE file_id = ?1`
}

// journalBatch inserts knowledge events within one transaction (the
// statement closes with it).
type journalBatch struct {
	ins    *sql.Stmt
	fileID int64
}

func (b *journalBatch) Apply(ctx context.Context, c journal.Chunk, d journal.Decoded) (*journal.Problem, error) {
	ev := d.Record.(journalLine)
	if _, err := b.ins.ExecContext(ctx, b.fileID, c.Line, ev.Event, ev.path(), ev.ID, ev.TS, day(ev.TS), ev.Before, ev.After, string(c.Text)); err != nil {
		return nil, fmt.Errorf("knowledge: sync %s:%d: %w", JournalFile, c.Line, err)
	}
	return nil, nil
}

func (b *journalBatch) Done(context.Context) ([]journal.Problem, error) { return nil, nil }

// path is the file or directory an event is about, as the index keeps it.
func (ev journalLine) path() string {
	if ev.Event == "source" {
		return filepath.Clean(ev.Dir)
	}
	return filepath.Clean(ev.File)
}

// parseJournalLine decodes and checks one knowledge journal line. The
// problem, if any, is why it is rejected (the follower locates it).
func parseJournalLine(text []byte) (journalLine, *Problem) {
	var ev journalLine
	bad := func(msg string) (journalLine, *Problem) {
		return ev, &Problem{Severity: SevError, Code: journal.CodeInvalid, Message: msg}
	}
	if err := json.Unmarshal(text, &ev); err != nil {
		return bad("not a knowledge journal record: " + err.Error())
	}
	switch ev.Event {
	case "hit":
		if ev.File == "" || ev.ID == "" {
			return bad(`a hit needs "file" and "id"`)
		}
	case "export":
		if ev.File == "" || len(ev.Before) != 64 || len(ev.After) != 64 {
			return bad(`an export needs "file" and the sha256 "before" and "after"`)
		}
	case "source":
		if ev.Dir == "" {
			return bad(`a source needs "dir"`)
		}
	default:
		return bad(fmt.Sprintf("unknown event %q (allowed: hit, export, source)", ev.Event))
	}
	return ev, nil
}

// day is the date of an RFC 3339 ts, in UTC; "" when ts is not one.
func day(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}
