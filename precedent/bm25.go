package precedent

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"unicode"
	"unicode/utf8"

	porterstemmer "github.com/blevesearch/go-porterstemmer"

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
}

// readStats decodes the full-text index's averages record (its row 1: the
// row count, then each column's total token count, as SQLite varints).
func readStats(ctx context.Context, store *db.Store) (ftsStats, error) {
	var blob []byte
	err := store.DB.QueryRowxContext(ctx, `SELECT block FROM decisions_fts_data WHERE id = 1`).Scan(&blob)
	if errors.Is(err, sql.ErrNoRows) {
		return ftsStats{}, nil
	}
	if err != nil {
		return ftsStats{}, fmt.Errorf("precedent: index totals: %w", err)
	}
	rows, n := sqliteVarint(blob)
	if n == 0 || rows <= 0 {
		return ftsStats{}, nil
	}
	var total uint64
	for off := n; off < len(blob); {
		v, k := sqliteVarint(blob[off:])
		if k == 0 {
			break
		}
		total += v
		off += k
	}
	return ftsStats{rows: int64(rows), avgdl: float64(total) / float64(rows)}, nil
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

// stem is the term the index's tokenizer (porter over unicode61) makes of a
// lower-cased word: porter leaves words under 3 or over 64 bytes alone.
func stem(word string) string {
	if len(word) < 3 || len(word) > 64 {
		return word
	}
	return porterstemmer.StemString(word)
}

// terms are the query's index terms, with what lets a document's words be
// checked against them without stemming every word.
type terms struct {
	stems []string
	// byPrefix maps the first two bytes of a stem (the whole stem when
	// shorter) to the stems that start so: a word's stem keeps the word's
	// first two bytes, so only words starting so can stem to one of them.
	byPrefix map[string][]int
}

func newTerms(tokens []string) terms {
	t := terms{stems: make([]string, len(tokens)), byPrefix: map[string][]int{}}
	for i, tok := range tokens {
		s := stem(tok)
		t.stems[i] = s
		p := prefix2(s)
		t.byPrefix[p] = append(t.byPrefix[p], i)
	}
	return t
}

func prefix2(s string) string {
	if len(s) > 2 {
		return s[:2]
	}
	return s
}

// scan tokenizes text as the index does (runs of letters and digits,
// lower-cased), adds to tf how often each query term occurs in it, and
// returns how many tokens the text has.
func (t terms) scan(text string, tf []int, buf []byte) (int, []byte) {
	n := 0
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			i += w
			continue
		}
		buf = buf[:0]
		for i < len(text) {
			r, w = utf8.DecodeRuneInString(text[i:])
			if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
				break
			}
			if r < utf8.RuneSelf {
				if 'A' <= r && r <= 'Z' {
					r += 'a' - 'A'
				}
				buf = append(buf, byte(r))
			} else {
				buf = utf8.AppendRune(buf, unicode.ToLower(r))
			}
			i += w
		}
		n++
		cands, ok := t.byPrefix[prefix2(string(buf))]
		if !ok {
			continue
		}
		s := stem(string(buf))
		for _, c := range cands {
			if t.stems[c] == s {
				tf[c]++
			}
		}
	}
	return n, buf
}
