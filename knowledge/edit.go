package knowledge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/orbit-loop/orbit/jsonedit"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// RequestError is a request orbit refuses before writing anything: Field
// names the input at fault (a flag of `orbit knowledge add`).
type RequestError struct {
	Field string
	Msg   string
}

func (e *RequestError) Error() string { return e.Msg }

// AddRequest is a new known error.
type AddRequest struct {
	// Dir is the knowledge directory whose errors.json gets the entry
	// (default DefaultDir), as stored: relative to the project root, or
	// absolute. A directory sync does not read yet is registered.
	Dir      string
	Pattern  string
	Solution string
	CodeFix  string
	Category string
	Track    string
	// Problem is what causes the error (problem in the template shape,
	// symptom in the free-form one).
	Problem string
}

// Added is where a new entry went.
type Added struct {
	ID      string `json:"id"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	Shape   string `json:"shape"`
	Created bool   `json:"created"`
	// Sync is what the sync after the write found.
	Sync SyncReport `json:"-"`
}

// Add appends a known error to an errors.json in the file's own shape,
// with the next id (err-NNN), by an atomic rewrite that leaves every other
// byte as it was. It refuses a pattern RE2 cannot compile, one that matches
// any text, and one the file already holds (compared case-insensitively, as
// patterns match).
func (k *Index) Add(ctx context.Context, req AddRequest) (Added, error) {
	if req.Dir == "" {
		req.Dir = DefaultDir
	}
	file := filepath.Join(req.Dir, ErrorsFile)
	req.Pattern = strings.TrimSpace(req.Pattern)
	req.Solution = strings.TrimSpace(req.Solution)
	if req.Solution == "" {
		return Added{}, &RequestError{Field: "solution", Msg: "--solution is empty: an entry is a known solution"}
	}
	switch state, why, _, _ := classify(req.Pattern, true); state {
	case StateOK:
	case StateNone:
		return Added{}, &RequestError{Field: "pattern", Msg: "--pattern is empty: it would match every error"}
	default:
		return Added{}, &RequestError{Field: "pattern", Msg: fmt.Sprintf("--pattern %q: %s", req.Pattern, why)}
	}
	// The knowledge journal's lock serialises orbit's rewrites of
	// knowledge files (add, export).
	app, err := journal.OpenAppender(k.Project.Root, JournalFile)
	if err != nil {
		return Added{}, err
	}
	defer app.Close()
	var rep SyncReport
	if err := k.register(ctx, app, req.Dir, &rep); err != nil {
		return Added{}, err
	}
	abs := k.Abs(file)
	data, err := project.ReadFile(k.Project.Root, abs, maxFileBytes)
	created := errors.Is(err, os.ErrNotExist)
	perm := os.FileMode(0o644)
	switch {
	case created:
		data = []byte("{\n  \"version\": 1,\n  \"errors\": []\n}\n")
	case err != nil:
		return Added{}, fmt.Errorf("knowledge: add: %w", err)
	default:
		if fi, err := os.Lstat(abs); err == nil {
			perm = fi.Mode().Perm()
		}
	}
	reg, err := parseRegistry(file, data)
	if err != nil {
		return Added{}, fmt.Errorf("%w; fix the file before adding to it", err)
	}
	for _, e := range reg.entries {
		if e.HasPattern && strings.EqualFold(strings.TrimSpace(e.Pattern), req.Pattern) {
			return Added{}, &RequestError{Field: "pattern", Msg: fmt.Sprintf("--pattern %q is already in %s:%d (%s)", req.Pattern, file, e.Line, e.Key)}
		}
	}
	id := nextID(reg.entries)
	today := k.Now().UTC().Format(time.DateOnly)
	fields := newEntryFields(reg.shape, id, today, req)
	out, line, err := reg.appendEntry(fields)
	if err != nil {
		return Added{}, err
	}
	if err := journal.WriteFileAtomic(k.Project.Root, abs, out, perm); err != nil {
		return Added{}, err
	}
	shape := reg.shape
	if shape == ShapeScaffold || shape == ShapeUnknown {
		shape = ShapeTemplate
	}
	added := Added{ID: id, File: file, Line: line, Shape: shape, Created: created}
	s, err := k.Sync(ctx)
	rep.merge(s)
	added.Sync = rep
	return added, err
}

var errID = lazyRegexp(`^err-0*(\d{1,9})$`)

// nextID is err-NNN after the highest err- number in the file (not the
// entry count, which repeats ids once an entry is removed).
func nextID(es []Entry) string {
	n := 0
	for _, e := range es {
		if m := errID().FindStringSubmatch(e.Key); m != nil {
			if v, _ := strconv.Atoi(m[1]); v > n {
				n = v
			}
		}
	}
	return fmt.Sprintf("err-%03d", n+1)
}

// jsonValue encodes v as the knowledge files hold it.
func jsonValue(v any) string {
	b, _ := jsonedit.Marshal(v)
	return string(b)
}

// newEntryFields lays out a new entry in a registry's shape.
func newEntryFields(shape, id, today string, r AddRequest) []jsonedit.KV {
	var out []jsonedit.KV
	add := func(key string, v any, always bool) {
		if s, ok := v.(string); ok && s == "" && !always {
			return
		}
		out = append(out, jsonedit.KV{Key: key, Val: jsonValue(v)})
	}
	switch shape {
	case ShapeFreeForm:
		add("id", id, true)
		add("date", today, true)
		add("track", r.Track, false)
		add("pattern", r.Pattern, true)
		add("category", r.Category, false)
		add("symptom", r.Problem, false)
		add("resolution", r.Solution, true)
		add("code_fix", r.CodeFix, false)
	case ShapeLoopFixer:
		add("id", id, true)
		add("pattern", r.Pattern, true)
		add("category", r.Category, false)
		add("problem", r.Problem, false)
		add("solution", r.Solution, true)
		add("code_fix", r.CodeFix, false)
		add("discovered_in", r.Track, false)
		add("last_seen", today, true)
	default: // the retrospective template, also for a scaffold
		add("id", id, true)
		add("pattern", r.Pattern, true)
		add("category", r.Category, false)
		add("problem", r.Problem, false)
		add("solution", r.Solution, true)
		add("code_fix", r.CodeFix, false)
		out = append(out, jsonedit.KV{Key: "occurrences", Val: "1"})
		add("last_seen", today, true)
		add("discovered_in", r.Track, false)
	}
	return out
}

// appendEntry returns the document with a new object at the end of the
// errors array, laid out like its neighbours, and the new entry's line.
func (r *registry) appendEntry(fields []jsonedit.KV) ([]byte, int, error) {
	d := r.data
	arr := r.arr
	if !bytes.Contains(bytes.TrimSpace(d), []byte("\n")) {
		// A one-line file: insert compactly, then lay the whole document
		// out as JSON.stringify(errors, null, 2) does.
		obj := renderObject(fields, "", "", ": ", false)
		var ins string
		if len(arr.Elems) == 0 {
			ins = obj
		} else {
			ins = "," + obj
		}
		at := arr.End - 1
		if len(arr.Elems) > 0 {
			at = arr.Elems[len(arr.Elems)-1].End
		}
		doc := slices.Concat(d[:at], []byte(ins), d[at:])
		var b bytes.Buffer
		if err := json.Indent(&b, bytes.TrimSpace(doc), "", "  "); err != nil {
			return nil, 0, fmt.Errorf("knowledge: add: %w", err)
		}
		b.WriteByte('\n')
		out := b.Bytes()
		reg, err := parseRegistry("", out)
		if err != nil {
			return nil, 0, fmt.Errorf("knowledge: add: %w", err)
		}
		last := reg.arr.Elems[len(reg.arr.Elems)-1]
		return out, reg.lines.Line(last.Start), nil
	}
	unit := jsonedit.IndentUnit(r.data, r.root)
	sep := r.separator()
	var elemIndent, ins string
	var at, end int
	if len(arr.Elems) > 0 {
		last := arr.Elems[len(arr.Elems)-1]
		elemIndent = jsonedit.IndentOf(r.data, arr.Elems[0].Start)
		obj := renderObject(fields, elemIndent, unit, sep, true)
		at, end = last.End, last.End
		ins = ",\n" + elemIndent + obj
	} else {
		close := jsonedit.IndentOf(r.data, arr.Start)
		elemIndent = close + unit
		obj := renderObject(fields, elemIndent, unit, sep, true)
		at, end = arr.Start, arr.End
		ins = "[\n" + elemIndent + obj + "\n" + close + "]"
	}
	out := slices.Concat(d[:at], []byte(ins), d[end:])
	line := r.lines.Line(at) + strings.Count(ins[:strings.IndexByte(ins, '{')], "\n")
	return out, line, nil
}

// renderObject writes an object: on several lines, each member at
// indent+unit, or on one line.
func renderObject(fields []jsonedit.KV, indent, unit, sep string, multiline bool) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		if multiline {
			b.WriteString("\n" + indent + unit)
		}
		b.WriteString(jsonValue(f.Key))
		b.WriteString(sep)
		b.WriteString(f.Val)
	}
	if multiline {
		b.WriteString("\n" + indent)
	}
	b.WriteByte('}')
	return b.String()
}

// separator is what the file writes between a key and its value.
func (r *registry) separator() string {
	var first *jsonedit.Member
	if r.root.Kind == '{' && len(r.root.Members) > 0 {
		first = &r.root.Members[0]
	}
	for _, n := range r.nodes {
		if n != nil && len(n.Members) > 0 {
			first = &n.Members[0]
			break
		}
	}
	if first == nil {
		return ": "
	}
	sep := string(r.data[first.KeyEnd:first.Val.Start])
	if strings.TrimSpace(sep) != ":" || strings.Contains(sep, "\n") {
		return ": "
	}
	return sep
}

// ExportOptions tune Export.
type ExportOptions struct {
	// DryRun says what would change and writes nothing.
	DryRun bool
}

// ExportFile is what export did to one errors.json.
type ExportFile struct {
	Path string `json:"path"`
	// Updated counts the entries whose occurrences and last_seen changed;
	// Hits the matches folded into them.
	Updated int   `json:"updated"`
	Hits    int64 `json:"hits"`
	// Orphans counts matches of entries no longer in the file (dropped).
	Orphans int64  `json:"orphan_hits"`
	Backup  string `json:"backup,omitempty"`
	// Unchanged is true when the file was left as it was, byte for byte.
	Unchanged bool `json:"unchanged"`
	// Error says why the file was not exported (it cannot be read); its
	// matches stay pending.
	Error string `json:"error,omitempty"`
}

// ExportReport is what export did.
type ExportReport struct {
	DryRun bool          `json:"dry_run"`
	Files  []*ExportFile `json:"files"`
	Sync   SyncReport    `json:"-"`
}

// Export writes the matches recorded since the last export back into each
// errors.json: occurrences plus the matches, last_seen the day of the
// latest. The rewrite is atomic and changes only those values (a missing
// field is added after the entry's last one, laid out like it); every other
// byte, field and the file's shape stay. The file as it was is kept beside
// it as errors.json.bak. A file without new matches is not touched.
func (k *Index) Export(ctx context.Context, opts ExportOptions) (ExportReport, error) {
	rep := ExportReport{DryRun: opts.DryRun, Files: []*ExportFile{}}
	app, err := journal.OpenAppender(k.Project.Root, JournalFile)
	if err != nil {
		return rep, err
	}
	defer app.Close()
	if rep.Sync, err = k.Sync(ctx); err != nil {
		return rep, err
	}
	var files []fileState
	if err := k.Store.DB.SelectContext(ctx, &files, `SELECT * FROM knowledge_files WHERE kind = 'errors' AND hash <> '' ORDER BY id`); err != nil {
		return rep, fmt.Errorf("knowledge: export: %w", err)
	}
	marks, err := k.exportMarks(ctx)
	if err != nil {
		return rep, err
	}
	changed := false
	for _, st := range files {
		ef, did, err := k.exportFile(ctx, app, st, marks[st.Path], opts)
		if err != nil {
			return rep, err
		}
		changed = changed || did
		rep.Files = append(rep.Files, ef)
	}
	if changed {
		s, err := k.Sync(ctx)
		rep.Sync.merge(s)
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func (k *Index) exportFile(ctx context.Context, app *journal.Appender, st fileState, mark int64, opts ExportOptions) (*ExportFile, bool, error) {
	ef := &ExportFile{Path: st.Path, Unchanged: true}
	if st.Error != "" {
		ef.Error = st.Error
		return ef, false, nil
	}
	rs, err := k.List(ctx, Filter{File: st.Path})
	if err != nil {
		return ef, false, err
	}
	var pendingTotal int64
	if err := k.Store.DB.GetContext(ctx, &pendingTotal, `SELECT count(*) FROM knowledge_events WHERE event = 'hit' AND path = ? AND seq > ?`, st.Path, mark); err != nil {
		return ef, false, fmt.Errorf("knowledge: export: %w", err)
	}
	byKey := map[string]Record{}
	var folded int64
	for _, r := range rs {
		if r.Pending > 0 {
			byKey[r.Key] = r
			folded += r.Pending
		}
	}
	ef.Orphans = pendingTotal - folded
	if pendingTotal == 0 {
		return ef, false, nil
	}
	abs := k.Abs(st.Path)
	data, err := project.ReadFile(k.Project.Root, abs, maxFileBytes)
	if err != nil {
		return ef, false, fmt.Errorf("knowledge: export: %w", err)
	}
	before := sha(data)
	if before != st.Hash {
		return ef, false, fmt.Errorf("knowledge: export: %s changed while orbit read it; nothing written, run the export again", st.Path)
	}
	reg, err := parseRegistry(st.Path, data)
	if err != nil {
		return ef, false, err
	}
	var edits []jsonedit.Edit
	for i, e := range reg.entries {
		r, ok := byKey[e.Key]
		if !ok || reg.nodes[i] == nil {
			continue
		}
		set := []jsonedit.KV{{Key: "occurrences", Val: strconv.FormatInt(r.Occurrences, 10)}}
		if r.LastSeen != "" {
			set = append(set, jsonedit.KV{Key: "last_seen", Val: jsonValue(r.LastSeen)})
		}
		edits = append(edits, jsonedit.SetMembers(reg.data, reg.root, reg.nodes[i], set)...)
		ef.Updated++
		ef.Hits += r.Pending
	}
	out := jsonedit.Apply(data, edits)
	after := sha(out)
	ef.Unchanged = after == before
	if opts.DryRun {
		return ef, false, nil
	}
	perm := os.FileMode(0o644)
	if fi, err := os.Lstat(abs); err == nil {
		perm = fi.Mode().Perm()
	}
	if !ef.Unchanged {
		ef.Backup = st.Path + ".bak"
		if err := journal.WriteFileAtomic(k.Project.Root, abs+".bak", data, perm); err != nil {
			return ef, false, err
		}
		if cur, err := project.ReadFile(k.Project.Root, abs, maxFileBytes); err != nil || sha(cur) != before {
			return ef, false, fmt.Errorf("knowledge: export: %s changed while orbit rewrote it; nothing written, run the export again", st.Path)
		}
	}
	// The export line goes first: if the rename below never happens, the
	// file still holds the bytes of "before" and the line is void.
	line, err := journal.Marshal(journalLine{TS: k.now(), Event: "export", File: st.Path, Before: before, After: after})
	if err != nil {
		return ef, false, err
	}
	if err := app.Append(line); err != nil {
		return ef, false, err
	}
	if !ef.Unchanged {
		if err := journal.WriteFileAtomic(k.Project.Root, abs, out, perm); err != nil {
			return ef, false, err
		}
	}
	return ef, true, nil
}

// register appends a source line for dir to the knowledge journal (whose
// lock app holds) unless sync reads it already.
func (k *Index) register(ctx context.Context, app *journal.Appender, dir string, rep *SyncReport) error {
	if err := k.syncJournal(ctx, rep); err != nil {
		return err
	}
	dirs, err := k.Dirs(ctx)
	if err != nil || slices.Contains(dirs, dir) {
		return err
	}
	line, err := journal.Marshal(journalLine{TS: k.now(), Event: "source", Dir: dir})
	if err != nil {
		return err
	}
	return app.Append(line)
}

// Register makes sync read the knowledge directory dir (as stored: relative
// to the project root, or absolute) from now on, and syncs, reading dir's
// files again even if unchanged so that the report covers all of them.
func (k *Index) Register(ctx context.Context, dir string) (SyncReport, error) {
	app, err := journal.OpenAppender(k.Project.Root, JournalFile)
	if err != nil {
		return SyncReport{}, err
	}
	defer app.Close()
	var rep SyncReport
	if err := k.register(ctx, app, dir, &rep); err != nil {
		return rep, err
	}
	err = k.Store.InTx(ctx, func(tx *db.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE knowledge_files SET size = -1, hash = '' WHERE path IN (?, ?)`,
			filepath.Join(dir, ErrorsFile), filepath.Join(dir, PatternsFile))
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("knowledge: register %s: %w", dir, err)
	}
	s, err := k.Sync(ctx)
	rep.merge(s)
	return rep, err
}
