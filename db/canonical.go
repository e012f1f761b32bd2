package db

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
)

// appendCanonicalDecision appends to b the canonical text of d's fields as
// CanonicalDecisionSQL renders it (SQLite's json_quote and integers), so
// that an insert can tell in Go whether the line is its canonical text, the
// confidence as conf renders it. It reports false where conf cannot tell:
// keeping the line's text is then always right.
func appendCanonicalDecision(b []byte, d *DecisionRow, conf func(float64) (string, bool)) ([]byte, bool) {
	b = append(b, `{"id":`...)
	b = appendJSONQuote(b, d.ID)
	b = append(b, `,"iteration":`...)
	b = strconv.AppendInt(b, d.Iteration, 10)
	b = appendField(b, `,"ts":`, d.TS)
	b = appendField(b, `,"tier":`, d.Tier)
	b = appendField(b, `,"depth":`, d.Depth)
	b = appendField(b, `,"category":`, d.Category)
	b = appendField(b, `,"input":`, d.Input)
	b = appendField(b, `,"decision":`, d.Decision)
	b = appendField(b, `,"reason":`, d.Reason)
	b = appendField(b, `,"next_action":`, d.NextAction)
	b = appendField(b, `,"verification":`, d.Verification)
	b = append(b, `,"retrograde":{"previous_id":`...)
	if d.RetroPrevID.Valid {
		b = appendJSONQuote(b, d.RetroPrevID.String)
	} else {
		b = append(b, "null"...)
	}
	b = appendField(b, `,"outcome":`, d.RetroOutcome)
	b = append(b, '}')
	if d.Confidence.Valid {
		b = append(b, `,"confidence":`...)
		text, ok := conf(d.Confidence.Float64)
		if !ok {
			return b, false
		}
		b = append(b, text...)
	}
	for _, f := range [...]struct{ key, v string }{{`,"requestor":`, d.Requestor}, {`,"context":`, d.Context}, {`,"request_id":`, d.RequestID}} {
		if f.v != "" {
			b = appendField(b, f.key, f.v)
		}
	}
	return append(b, '}'), true
}

func appendField(b []byte, key, v string) []byte {
	return appendJSONQuote(append(b, key...), v)
}

// jsonPlain marks the bytes json_quote copies as they are.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONQuote is SQLite's json_quote of a text value (jsonAppendString):
// '"' and '\' escaped with a backslash; the control characters below 0x20
// as \b, \t, \n, \f, \r or \u00xx (lower-case hex); every other byte as it
// is (U+2028, DEL and invalid UTF-8 included).
func appendJSONQuote(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if jsonPlain[c] {
			continue
		}
		b = append(b, s[start:i]...)
		start = i + 1
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, `\b`...)
		case '\t':
			b = append(b, `\t`...)
		case '\n':
			b = append(b, `\n`...)
		case '\f':
			b = append(b, `\f`...)
		case '\r':
			b = append(b, `\r`...)
		default:
			const hex = "0123456789abcdef"
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// confidenceTexts caches the confidences as CanonicalDecisionSQL renders
// them (confidenceTextSQL), asked of SQLite once per value: its json_quote
// of a REAL is printf's %!.17g, shortened only where a shorter text reads
// back as the same double, which is Go's shortest form for 0.85 but not
// for 0.830701009759958. A journal holds few distinct confidences; past
// maxConfidenceTexts, a new one is a value Go cannot tell.
var confidenceTexts = struct {
	sync.Mutex
	m map[float64]string
}{m: map[float64]string{}}

// maxConfidenceTexts bounds the cache (a variable for the tests).
var maxConfidenceTexts = 4096

// confidenceText returns SQLite's rendering of the confidence c, and false
// when it is not known (not cached and the cache is full).
func (tx *Tx) confidenceText(ctx context.Context, c float64) (string, bool, error) {
	confidenceTexts.Lock()
	text, ok := confidenceTexts.m[c]
	full := len(confidenceTexts.m) >= maxConfidenceTexts
	confidenceTexts.Unlock()
	if ok || full || math.IsNaN(c) {
		return text, ok, nil
	}
	st, rowCtx, err := tx.stmt(ctx, `SELECT `+confidenceTextSQL("?1"))
	if err != nil {
		return "", false, err
	}
	if err := st.QueryRowContext(rowCtx, c).Scan(&text); err != nil {
		return "", false, fmt.Errorf("render confidence %v: %w", c, err)
	}
	confidenceTexts.Lock()
	confidenceTexts.m[c] = text
	confidenceTexts.Unlock()
	return text, true, nil
}

// storedRaw is what InsertDecision stores in raw (RawTextSQL in Go): "" when
// the line is the canonical text of the row's fields, the line otherwise
// (and where Go cannot tell the canonical text).
func (tx *Tx) storedRaw(ctx context.Context, d *DecisionRow) (string, error) {
	var err error
	conf := func(c float64) (string, bool) {
		text, ok, cerr := tx.confidenceText(ctx, c)
		err = cerr
		return text, ok
	}
	var ok bool
	tx.canon, ok = appendCanonicalDecision(tx.canon[:0], d, conf)
	if err != nil {
		return "", err
	}
	if ok && string(tx.canon) == d.Raw {
		return "", nil
	}
	return d.Raw, nil
}
