package knowledge

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/precedent"
)

// MaxTextBytes bounds the error text a match reads.
const MaxTextBytes = 64 << 10

// maxTextTerms bounds the words of the full-text part of a match.
const maxTextTerms = 32

// minTextRelevance drops full-text matches weaker than this fraction of the
// best one: an error text shares a common word with many entries.
const minTextRelevance = 0.2

// How an entry matched.
const (
	ViaRegex = "regex"
	ViaText  = "text"
)

// MatchOptions tune Match.
type MatchOptions struct {
	// K is how many solutions to return (default 5).
	K int
	// Record appends the regex matches to the knowledge journal, so that
	// they count as occurrences.
	Record bool
}

// MaxK bounds how many solutions one match returns.
const MaxK = 100

// CheckMatch refuses a lookup that cannot mean anything: an empty error
// text, K outside 1..MaxK (0 takes the default).
func CheckMatch(text string, opts MatchOptions) error {
	if opts.K < 0 || opts.K > MaxK {
		return fmt.Errorf("-k %d: must be between 1 and %d", opts.K, MaxK)
	}
	if strings.TrimSpace(text) == "" {
		return errors.New("the error text is empty")
	}
	return nil
}

// Match is a known solution for an error text.
type Match struct {
	Rank int `json:"rank"`
	// Via is "regex" (the entry's pattern matched) or "text" (full-text
	// relevance, for entries without a usable regex).
	Via string `json:"match"`
	// Score is the regex's specificity (how many literal characters it
	// requires) or the bm25 relevance.
	Score float64 `json:"score"`
	// Matched is the text the regex matched.
	Matched string `json:"matched,omitempty"`
	Record
}

// MatchFields are the JSON field names of a Match.
var MatchFields = append([]string{"rank", "match", "score", "matched"}, RecordFields...)

// Match returns the known solutions for an error text, best first: the
// entries whose regex matches it (the most specific first, then the most
// seen, then file order), then the entries without a usable regex whose
// symptom, problem or solution share its words (bm25). A regex is tried
// only when the text holds a literal the regex requires (a trigram index
// finds those), so the cost does not grow with the size of the registry.
func (k *Index) Match(ctx context.Context, text string, opts MatchOptions) ([]Match, error) {
	if opts.K <= 0 {
		opts.K = 5
	}
	if len(text) > MaxTextBytes {
		text = strings.ToValidUTF8(text[:MaxTextBytes], "")
	}
	out, err := k.regexMatches(ctx, text)
	if err != nil {
		return nil, err
	}
	if len(out) > opts.K {
		out = out[:opts.K]
	}
	regex := len(out)
	if len(out) < opts.K {
		more, err := k.textMatches(ctx, text, opts.K-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	for i := range out {
		out[i].Rank = i + 1
	}
	if opts.Record && regex > 0 {
		if err := k.recordHits(out[:regex]); err != nil {
			return out, err
		}
	}
	return out, nil
}

// countMatches fills the counts of the matches' records.
func (k *Index) countMatches(ctx context.Context, ms []Match) error {
	rs := make([]Record, len(ms))
	for i := range ms {
		rs[i] = ms[i].Record
	}
	if err := k.count(ctx, rs); err != nil {
		return err
	}
	for i := range ms {
		ms[i].Record = rs[i]
	}
	return nil
}

// regexMatches runs the regexes whose required literals occur in text.
func (k *Index) regexMatches(ctx context.Context, text string) ([]Match, error) {
	folded := fold(text)
	tris := trigrams(folded)
	triJSON, _ := json.Marshal(tris)
	var atoms []struct {
		ID   int64  `db:"pattern_id"`
		Atom string `db:"atom"`
	}
	err := k.Store.DB.SelectContext(ctx, &atoms, `SELECT pattern_id, atom FROM knowledge_atoms WHERE tri IN (SELECT value FROM json_each(?))
		UNION ALL SELECT pattern_id, atom FROM knowledge_atoms WHERE tri = -1`, string(triJSON))
	if err != nil {
		return nil, schemaHint(fmt.Errorf("knowledge: match: %w", err))
	}
	seen := map[int64]bool{}
	var ids []int64
	for _, a := range atoms {
		if seen[a.ID] || !strings.Contains(folded, a.Atom) {
			continue
		}
		seen[a.ID] = true
		ids = append(ids, a.ID)
	}
	rs, err := k.records(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []Match
	for _, r := range rs {
		re, err := compilePattern(r.Pattern)
		if err != nil {
			continue // cannot happen: the pattern compiled when indexed
		}
		loc := re.FindStringIndex(text)
		if loc == nil {
			continue
		}
		m := text[loc[0]:loc[1]]
		if len(m) > 200 {
			m = strings.ToValidUTF8(m[:200], "") + "…"
		}
		out = append(out, Match{Via: ViaRegex, Score: float64(r.Specificity), Matched: m, Record: r})
	}
	if err := k.countMatches(ctx, out); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Match) int {
		return cmp.Or(
			cmp.Compare(b.Specificity, a.Specificity),
			cmp.Compare(b.Occurrences, a.Occurrences),
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Ordinal, b.Ordinal),
		)
	})
	return out, nil
}

// textMatches ranks the entries without a usable regex by bm25 over their
// name, symptom and solution.
func (k *Index) textMatches(ctx context.Context, text string, n int) ([]Match, error) {
	tokens := precedent.Tokens(text)
	if len(tokens) > maxTextTerms {
		tokens = tokens[:maxTextTerms]
	}
	if len(tokens) == 0 || n <= 0 {
		return nil, nil
	}
	var hits []struct {
		ID    int64   `db:"rowid"`
		Score float64 `db:"score"`
	}
	err := k.Store.DB.SelectContext(ctx, &hits, `SELECT rowid, bm25(knowledge_fts, 2.0, 1.5, 1.0) AS score FROM knowledge_fts
		WHERE knowledge_fts MATCH ? ORDER BY score, rowid LIMIT ?`, precedent.MatchAny(tokens), n)
	if err != nil {
		return nil, schemaHint(fmt.Errorf("knowledge: match: %w", err))
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	rs, err := k.records(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := map[int64]Record{}
	for _, r := range rs {
		byID[r.ID] = r
	}
	out := make([]Match, 0, len(hits))
	for _, h := range hits {
		if len(hits) > 0 && h.Score > hits[0].Score*minTextRelevance {
			break // bm25 is negative: weaker than a fraction of the best
		}
		if r, ok := byID[h.ID]; ok {
			out = append(out, Match{Via: ViaText, Score: -h.Score, Record: r})
		}
	}
	return out, k.countMatches(ctx, out)
}

// recordHits appends one hit line per regex match to the knowledge journal,
// in one write under its lock. Unlike a decision, a hit is not fsynced: it
// is a counter's increment on the hook path, where an fsync on a busy disk
// costs more than the whole lookup, and a power cut that loses the last
// few hits (the OS writes them moments later otherwise) costs nothing
// worth that. If the index got ahead of a file that lost its tail, the
// next sync sees the file shrink and re-reads it.
func (k *Index) recordHits(ms []Match) error {
	ts := k.now()
	var buf bytes.Buffer
	for _, m := range ms {
		line, err := journal.Marshal(journalLine{TS: ts, Event: "hit", File: m.File, ID: m.Key})
		if err != nil {
			return err
		}
		buf.Write(line)
	}
	// The one appender: locked, one write starting on a fresh line, fsynced.
	app, err := journal.OpenAppender(k.Project.Root, JournalFile)
	if err != nil {
		return fmt.Errorf("knowledge: record matches: %w", err)
	}
	defer app.Close()
	if err := app.Append(buf.Bytes()); err != nil {
		return fmt.Errorf("knowledge: record matches: %w", err)
	}
	return nil
}

// now is the current time as the journal writes it.
func (k *Index) now() string {
	return k.Now().UTC().Format(time.RFC3339)
}
