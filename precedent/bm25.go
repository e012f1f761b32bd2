package precedent

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/orbit-loop/orbit/db"
)

// bm25 parameters, as FTS5's bm25() has them.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// ftsStats are the totals FTS5 keeps for bm25: how many rows the index
// holds and their average length in tokens.
type ftsStats struct {
	rows  int64
	avgdl float64
	// newest is the newest decision's seq (0 for none): what a full pool's
	// span of the journal is counted from.
	newest int64
}

// fts5FormatVersion is the version of FTS5's storage format (its config
// table's 'version') whose averages record readStats decodes;
// TestFTS5RecordFormat fails if the linked SQLite writes another.
const fts5FormatVersion = 4

// ftsColumns is how many columns decisions_fts indexes.
const ftsColumns = 4

// readStats decodes the full-text index's averages record (its row 1: the
// row count, then each column's total token count, as SQLite varints) and
// reads the newest decision's seq, in one statement. A record of any other
// shape is an error, not a wrong score.
func readStats(ctx context.Context, store *db.Store) (ftsStats, error) {
	var blob []byte
	var newest int64
	err := store.DB.QueryRowContext(ctx, `SELECT (SELECT block FROM decisions_fts_data WHERE id = 1),
		(SELECT coalesce(max(seq), 0) FROM decisions)`).Scan(&blob, &newest)
	if err != nil {
		return ftsStats{}, fmt.Errorf("precedent: index totals: %w", err)
	}
	if blob == nil {
		return ftsStats{}, nil
	}
	st, err := decodeStats(blob)
	st.newest = newest
	return st, err
}

// Length is how many tokens the index counts in text (bm25's document
// length is the sum over a decision's columns).
func Length(text string) int {
	n := 0
	var buf []byte
	for i := 0; ; n++ {
		var ok bool
		if buf, i, ok = nextToken(text, i, buf); !ok {
			return n
		}
	}
}

// decodeStats decodes an averages record: a row count and ftsColumns token
// totals, as SQLite varints, and nothing else.
func decodeStats(blob []byte) (ftsStats, error) {
	var v [1 + ftsColumns]uint64
	off, got := 0, 0
	for ; got < len(v); got++ {
		n := 0
		if v[got], n = sqliteVarint(blob[off:]); n == 0 {
			break
		}
		off += n
	}
	if got != len(v) || off != len(blob) {
		return ftsStats{}, fmt.Errorf("precedent: index totals: FTS5's averages record (% x) is not a row count and %d column totals", blob, ftsColumns)
	}
	if v[0] == 0 {
		return ftsStats{}, nil
	}
	var total uint64
	for _, n := range v[1:] {
		total += n
	}
	return ftsStats{rows: int64(v[0]), avgdl: float64(total) / float64(v[0])}, nil
}

// sqliteVarint decodes SQLite's big-endian varint (1 to 9 bytes; the ninth
// contributes all 8 bits). n is 0 when b is too short.
func sqliteVarint(b []byte) (v uint64, n int) {
	for i := 0; i < len(b) && i < 9; i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

// idf is bm25's inverse document frequency, as FTS5 computes it.
func idf(rows int64, hits float64) float64 {
	v := math.Log((float64(rows) - hits + 0.5) / (hits + 0.5))
	// Not v <= 0: the totals and the hits are read by two queries, and a
	// write between them can leave more hits than rows (a NaN score, which
	// no JSON can carry).
	if !(v > 0) {
		return 1e-6
	}
	return v
}

// terms are the query's index terms, with what lets a document's words be
// checked against them without stemming every word.
type terms struct {
	stems []string
	// pairs are the first two bytes a word must start with to stem to one
	// of stems (as b0<<8|b1): a stem keeps its word's first byte, and its
	// second unless the stem is shorter or step 1c made a second "y" an
	// "i" ("eyed" stems to "ei"). singles are the stems of one byte.
	pairs   []uint16
	singles []byte
	sbuf    []byte
	// held maps each word met that may stem to a term to the terms it
	// stems to (bit c for stems[c]; maxTokens is 64): the scored texts
	// repeat their words, and stemming was a sixth of a search's CPU.
	held map[string]uint64
}

// A term's bit in terms.held: no more than 64 terms (a compile error if
// maxTokens grows past it).
const _ = uint64(1) << (maxTokens - 1)

func newTerms(tokens []string) *terms {
	t := &terms{stems: make([]string, len(tokens)), held: map[string]uint64{}}
	for i, tok := range tokens {
		t.sbuf = stem(t.sbuf, []byte(tok))
		s := string(t.sbuf)
		t.stems[i] = s
		switch {
		case len(s) == 1:
			t.singles = append(t.singles, s[0])
		case len(s) >= 2:
			t.pairs = append(t.pairs, uint16(s[0])<<8|uint16(s[1]))
			if s[1] == 'i' {
				t.pairs = append(t.pairs, uint16(s[0])<<8|'y')
			}
		}
	}
	return t
}

// mayStemToTerm is false for a word that cannot stem to any term.
func (t *terms) mayStemToTerm(w []byte) bool {
	if len(w) == 0 {
		return false // no term is empty: Tokens drops empty tokens
	}
	if slices.Contains(t.singles, w[0]) {
		return true
	}
	return len(w) >= 2 && slices.Contains(t.pairs, uint16(w[0])<<8|uint16(w[1]))
}

// scan tokenizes text as the index does (unicode61.go, porter.go), adds to
// tf how often each query term occurs in it, and returns how many tokens
// the text has.
func (t *terms) scan(text string, tf []int, buf []byte) (int, []byte) {
	n := 0
	for i := 0; ; {
		var ok bool
		buf, i, ok = nextToken(text, i, buf)
		if !ok {
			return n, buf
		}
		n++
		if !t.mayStemToTerm(buf) {
			continue
		}
		m, ok := t.held[string(buf)]
		if !ok {
			t.sbuf = stem(t.sbuf, buf)
			for c, s := range t.stems {
				if s == string(t.sbuf) {
					m |= 1 << c
				}
			}
			t.held[string(buf)] = m
		}
		for ; m != 0; m &= m - 1 {
			tf[bits.TrailingZeros64(m)]++
		}
	}
}
