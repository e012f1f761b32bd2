package knowledge

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Record is an indexed entry with what orbit has counted for it.
type Record struct {
	Key          string `json:"id" db:"entry_id"`
	File         string `json:"file" db:"source_path"`
	Line         int    `json:"line" db:"line"`
	Kind         string `json:"kind" db:"kind"`
	Name         string `json:"name" db:"name"`
	Pattern      string `json:"pattern" db:"pattern"`
	PatternState string `json:"pattern_state" db:"pattern_state"`
	PatternError string `json:"pattern_error" db:"pattern_error"`
	Category     string `json:"category" db:"category"`
	Track        string `json:"track" db:"track"`
	Symptom      string `json:"symptom" db:"symptom"`
	Solution     string `json:"solution" db:"solution"`
	CodeFix      string `json:"code_fix" db:"code_fix"`
	// Occurrences is the file's count plus the matches recorded since the
	// last export; LastSeen likewise.
	Occurrences int64  `json:"occurrences" db:"occurrences"`
	LastSeen    string `json:"last_seen" db:"last_seen"`
	// Pending counts the matches recorded since the last export (what
	// `orbit knowledge export` would add); Hits every match orbit recorded.
	Pending int64 `json:"pending_hits" db:"-"`
	Hits    int64 `json:"hits" db:"-"`

	ID          int64 `json:"-" db:"id"`
	Ordinal     int   `json:"-" db:"ordinal"`
	Specificity int   `json:"-" db:"specificity"`
}

// RecordFields are the JSON field names of a Record.
var RecordFields = []string{"id", "file", "line", "kind", "name", "pattern", "pattern_state", "pattern_error", "category", "track",
	"symptom", "solution", "code_fix", "occurrences", "last_seen", "pending_hits", "hits"}

// Usable reports whether the record's regex is used for matching.
func (r *Record) Usable() bool { return r.PatternState == StateOK }

const recordColumns = `id, entry_id, source_path, line, ordinal, kind, name, pattern, pattern_state, pattern_error, specificity,
	category, track, symptom, solution, code_fix, occurrences, last_seen`

// Filter selects records for List.
type Filter struct {
	// Kind is KindError, KindPattern, or "" for both.
	Kind string
	// Unusable keeps the error entries without a usable regex.
	Unusable bool
	// NeverMatched keeps the error entries orbit never matched.
	NeverMatched bool
	// File keeps the entries of one file (as stored: relative to the root).
	File string
}

// List returns the indexed entries in file order, with their counts.
func (k *Index) List(ctx context.Context, f Filter) ([]Record, error) {
	var where []string
	var args []any
	if f.Kind != "" {
		where = append(where, "kind = ?")
		args = append(args, f.Kind)
	}
	if f.Unusable {
		where = append(where, "kind = 'error' AND pattern_state <> 'ok'")
	}
	if f.File != "" {
		where = append(where, "source_path = ?")
		args = append(args, f.File)
	}
	q := `SELECT ` + recordColumns + ` FROM knowledge_patterns`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += ` ORDER BY file_id, ordinal`
	var rs []Record
	if err := k.Store.DB.SelectContext(ctx, &rs, q, args...); err != nil {
		return nil, schemaHint(fmt.Errorf("knowledge: list: %w", err))
	}
	readStates(rs)
	if err := k.count(ctx, rs); err != nil {
		return nil, err
	}
	if f.NeverMatched {
		kept := rs[:0]
		for _, r := range rs {
			if r.Kind == KindError && r.Hits == 0 {
				kept = append(kept, r)
			}
		}
		rs = kept
	}
	return rs, nil
}

// readStates sets each record's state as the entry has it (readState).
func readStates(rs []Record) {
	for i := range rs {
		rs[i].PatternState = readState(rs[i].PatternState, rs[i].Pattern)
	}
}

// records loads the records with the given row ids, in no order.
func (k *Index) records(ctx context.Context, ids []int64) ([]Record, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	arr, _ := json.Marshal(ids)
	var rs []Record
	if err := k.Store.DB.SelectContext(ctx, &rs, `SELECT `+recordColumns+` FROM knowledge_patterns WHERE id IN (SELECT value FROM json_each(?))`, string(arr)); err != nil {
		return nil, fmt.Errorf("knowledge: read entries: %w", err)
	}
	readStates(rs)
	return rs, nil
}

// exportMarks returns, for each errors.json, the seq of the export that
// folded its hits in last: hits after it are pending. An export whose file
// still holds the bytes it read (it appended its line, then was cut short
// before the rename) did not happen.
func (k *Index) exportMarks(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		Path   string         `db:"path"`
		Seq    int64          `db:"seq"`
		Before string         `db:"before_hash"`
		After  string         `db:"after_hash"`
		Hash   sql.NullString `db:"hash"`
	}
	if err := k.Store.DB.SelectContext(ctx, &rows, `SELECT e.path, e.seq, e.before_hash, e.after_hash, f.hash FROM knowledge_events e
		LEFT JOIN knowledge_files f ON f.path = e.path WHERE e.event = 'export' ORDER BY e.seq DESC`); err != nil {
		return nil, schemaHint(fmt.Errorf("knowledge: exports: %w", err))
	}
	marks := map[string]int64{}
	for _, r := range rows {
		if _, done := marks[r.Path]; done {
			continue
		}
		if r.Hash.String == r.Before && r.Before != r.After {
			continue // void: the file never got the new bytes
		}
		marks[r.Path] = r.Seq
	}
	return marks, nil
}

// hitCount is what the knowledge journal says about one entry.
type hitCount struct {
	Path    string         `db:"path"`
	Key     string         `db:"entry_id"`
	Hits    int64          `db:"hits"`
	Pending int64          `db:"pending"`
	LastDay sql.NullString `db:"last_day"`
}

// count fills the counts of records from the knowledge journal's hits.
func (k *Index) count(ctx context.Context, rs []Record) error {
	if len(rs) == 0 {
		return nil
	}
	marks, err := k.exportMarks(ctx)
	if err != nil {
		return err
	}
	type pk struct{ path, key string }
	want := map[pk][]int{}
	var keys [][2]string
	for i, r := range rs {
		p := pk{r.File, r.Key}
		if _, ok := want[p]; !ok {
			keys = append(keys, [2]string{r.File, r.Key})
		}
		want[p] = append(want[p], i)
	}
	mk := make([][2]any, 0, len(marks))
	for p, s := range marks {
		mk = append(mk, [2]any{p, s})
	}
	marksJSON, _ := json.Marshal(mk)
	q := `WITH marks(path, seq) AS (SELECT value->>0, value->>1 FROM json_each(?))
		SELECT h.path, h.entry_id, count(*) AS hits, sum(h.seq > coalesce(m.seq, 0)) AS pending,
			max(CASE WHEN h.seq > coalesce(m.seq, 0) THEN h.day END) AS last_day
		FROM knowledge_events h LEFT JOIN marks m ON m.path = h.path
		WHERE h.event = 'hit'`
	args := []any{string(marksJSON)}
	if len(keys) <= 500 {
		kj, _ := json.Marshal(keys)
		q += ` AND (h.path, h.entry_id) IN (SELECT value->>0, value->>1 FROM json_each(?))`
		args = append(args, string(kj))
	}
	q += ` GROUP BY h.path, h.entry_id`
	var counts []hitCount
	if err := k.Store.DB.SelectContext(ctx, &counts, q, args...); err != nil {
		return fmt.Errorf("knowledge: count hits: %w", err)
	}
	for _, c := range counts {
		for _, i := range want[pk{c.Path, c.Key}] {
			r := &rs[i]
			r.Hits, r.Pending = c.Hits, c.Pending
			r.Occurrences += c.Pending
			if c.LastDay.Valid && c.LastDay.String > r.LastSeen {
				r.LastSeen = c.LastDay.String
			}
		}
	}
	return nil
}

// Stats are the figures of `orbit knowledge stats`.
type Stats struct {
	Files    []FileStat `json:"files"`
	Entries  int        `json:"entries"`
	Errors   int        `json:"errors"`
	Patterns int        `json:"patterns"`
	// Regex counts the error entries with a usable regex; NoPattern those
	// without one (full-text only); Unsupported the JavaScript regexes RE2
	// cannot run (full-text only); Invalid and MatchesAll the refused ones.
	Regex       int `json:"regex"`
	NoPattern   int `json:"no_pattern"`
	Unsupported int `json:"unsupported"`
	Invalid     int `json:"invalid"`
	MatchesAll  int `json:"matches_all"`
	// Hits counts every match orbit recorded, Pending those not exported
	// yet; Occurrences sums what the files say plus Pending.
	Hits        int64 `json:"hits"`
	Pending     int64 `json:"pending_hits"`
	Occurrences int64 `json:"occurrences"`
	// NeverMatched are the error entries orbit never matched; Unusable the
	// error entries without a usable regex; Top the most matched.
	NeverMatched []Brief `json:"never_matched"`
	Unusable     []Brief `json:"unusable"`
	Top          []Brief `json:"top"`
}

// StatsFields are the JSON field names of Stats.
var StatsFields = []string{"files", "entries", "errors", "patterns", "regex", "no_pattern", "unsupported", "invalid", "matches_all", "hits",
	"pending_hits", "occurrences", "never_matched", "unusable", "top"}

// FileStat is one knowledge file in the index.
type FileStat struct {
	Path    string `json:"path" db:"path"`
	Kind    string `json:"kind" db:"kind"`
	Shape   string `json:"shape" db:"shape"`
	Entries int    `json:"entries" db:"entries"`
	Error   string `json:"error" db:"error"`
}

// Brief names an entry in a list.
type Brief struct {
	ID          string `json:"id"`
	File        string `json:"file"`
	Line        int    `json:"line"`
	State       string `json:"pattern_state,omitempty"`
	Why         string `json:"why,omitempty"`
	Occurrences int64  `json:"occurrences"`
	Hits        int64  `json:"hits"`
}

func brief(r Record) Brief {
	return Brief{ID: r.Key, File: r.File, Line: r.Line, State: r.PatternState, Why: r.PatternError, Occurrences: r.Occurrences, Hits: r.Hits}
}

// Stats summarises the indexed knowledge.
func (k *Index) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	if err := k.Store.DB.SelectContext(ctx, &s.Files, `SELECT path, kind, shape, entries, error FROM knowledge_files
		WHERE kind <> 'journal' AND (size > 0 OR error <> '' OR entries > 0) ORDER BY id`); err != nil {
		return s, schemaHint(fmt.Errorf("knowledge: stats: %w", err))
	}
	rs, err := k.List(ctx, Filter{})
	if err != nil {
		return s, err
	}
	s.NeverMatched, s.Unusable, s.Top = []Brief{}, []Brief{}, []Brief{}
	var top []Record
	for _, r := range rs {
		s.Entries++
		if r.Kind == KindPattern {
			s.Patterns++
			continue
		}
		s.Errors++
		switch r.PatternState {
		case StateOK:
			s.Regex++
		case StateNone:
			s.NoPattern++
		case StateUnsupported:
			s.Unsupported++
		case StateInvalid:
			s.Invalid++
		case StateMatchesAll:
			s.MatchesAll++
		}
		if r.PatternState != StateOK {
			s.Unusable = append(s.Unusable, brief(r))
		}
		s.Hits += r.Hits
		s.Pending += r.Pending
		s.Occurrences += r.Occurrences
		if r.Hits == 0 {
			s.NeverMatched = append(s.NeverMatched, brief(r))
		} else {
			top = append(top, r)
		}
	}
	// The five most matched, most first, then file order.
	slices.SortStableFunc(top, func(a, b Record) int { return cmp.Compare(b.Hits, a.Hits) })
	for i := 0; i < len(top) && i < 5; i++ {
		s.Top = append(s.Top, brief(top[i]))
	}
	return s, nil
}
