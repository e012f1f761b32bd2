package db

import (
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Enumerations the index stores as small integers (schema v7, migration
// 00007): a value's code is its position in its list, and the column of
// the same name (tier, category, outcome, …) is a virtual column that
// renders the text back, so every reader reads text as before. The lists
// are seed 000's (journal.Tiers and the others, which a line must match to
// be indexed), each ordered with its commonest value first: SQLite stores
// the integers 0 and 1 in no payload byte, 2 to 127 in one. A value not in
// its list (none is indexed today) would be stored as its text and
// rendered as it is, so a longer list in a later journal needs no new
// schema to be indexed correctly, only a new code to be indexed small.
//
// The codes are fixed by the schema: migration 00007's virtual columns
// spell them out, and db's tests check that they agree with these lists.
var codes = map[string][]string{
	"tier":          {"auto_approve", "quick_review", "deep_think", "escalate"},
	"depth":         {"trivial", "light", "medium", "heavy"},
	"category":      {"feature", "architecture", "quality", "scope", "deploy"},
	"decision":      {"APPROVED", "NEEDS_REVIEW", "REJECTED"},
	"verification":  {"PENDING", "CONFIRMED", "FAILED"},
	"retro_outcome": {"N/A", "CORRECT", "INCORRECT", "PENDING"},
	// outcome is the outcome of an event and of a current outcome
	// (outcome_events, decision_outcomes): the same list as retro_outcome.
	"outcome": {"N/A", "CORRECT", "INCORRECT", "PENDING"},
}

// CodedColumns are the columns stored as codes, in a fixed order.
var CodedColumns = []string{"tier", "depth", "category", "decision", "verification", "retro_outcome", "outcome"}

// CodeValues returns the values column's codes stand for, in code order.
func CodeValues(column string) []string {
	vs, ok := codes[column]
	if !ok {
		panic(fmt.Sprintf("db: no codes for column %q", column))
	}
	return slices.Clone(vs)
}

// Code returns what column_code stores for the text v: its code, or v
// itself when it has none. A filter compares the stored column with it,
// so that the query walks an index of the codes.
func Code(column, v string) any {
	if i := slices.Index(codes[column], v); i >= 0 {
		return i
	}
	return v
}

// CodeSQL is the SQL of what column_code stores for the text expression
// given (Code in SQL).
func CodeSQL(column, expr string) string {
	return caseSQL(column, expr, func(i int, v string) string { return fmt.Sprintf(" WHEN '%s' THEN %d", v, i) })
}

// TextSQL is the SQL of the text a code expression stands for: the
// expression of column's virtual column in migration 00007.
func TextSQL(column, expr string) string {
	return caseSQL(column, expr, func(i int, v string) string { return fmt.Sprintf(" WHEN %d THEN '%s'", i, v) })
}

// caseSQL maps expr through column's codes, one WHEN per code as when
// gives it, and leaves any other value as it is.
func caseSQL(column, expr string, when func(code int, text string) string) string {
	var b strings.Builder
	b.WriteString("CASE " + expr)
	for i, v := range CodeValues(column) {
		b.WriteString(when(i, v))
	}
	b.WriteString(" ELSE " + expr + " END")
	return b.String()
}

// ConfidenceCodeSQL is the SQL of what confidence_code stores for the
// confidence expression given: the confidence in hundredths, as an
// integer, when that is exact (0.85 is 85, read back as 85 / 100.0, which
// IEEE division rounds to the same double as the literal 0.85), the REAL
// itself otherwise (0.123, 0, -0: one byte or none against eight). NULL
// stays NULL.
func ConfidenceCodeSQL(expr string) string {
	return `iif(` + expr + ` > 0 AND ` + expr + ` = round(` + expr + ` * 100) / 100.0, CAST(round(` + expr + ` * 100) AS INTEGER), ` + expr + `)`
}

// EventTSTextSQL is the SQL of what an outcome event stores in ts_text for
// the ts text and at_ns expressions given: NULL when the text is the
// canonical UTC rendering of at_ns (the virtual column ts renders it back),
// the text otherwise, empty included (an event's at_ns is never NULL: a
// line without a valid ts takes the last valid one before it).
func EventTSTextSQL(ts, atNS string) string {
	return `CASE WHEN ` + ts + ` = strftime('%Y-%m-%dT%H:%M:%SZ', ` + atNS + ` / 1000000000, 'unixepoch') THEN NULL ELSE ` + ts + ` END`
}

// CategoryFilter is the condition that keeps the decisions (of the table
// aliased alias) of one category, and its argument for the category given:
// it compares the stored code, so that the query walks decisions_category
// (an index of the codes) rather than every row's rendered text.
func CategoryFilter(alias string) (cond string, arg func(category string) any) {
	return alias + ".category_code = ?", func(category string) any { return Code("category", category) }
}

// confidenceCode is ConfidenceCodeSQL in Go: hundredths as an integer when
// k / 100 is the very double given (Go and SQLite divide alike, IEEE
// rounding), the float otherwise, nil for none.
func confidenceCode(c sql.NullFloat64) any {
	if !c.Valid {
		return nil
	}
	if k := math.Round(c.Float64 * 100); c.Float64 > 0 && k/100 == c.Float64 {
		return int64(k)
	}
	return c.Float64
}

// appendCanonicalTS appends to b SQLite's strftime('%Y-%m-%dT%H:%M:%SZ',
// ns / 1000000000, 'unixepoch') for the times Go renders alike (1970 on: an
// int64 of nanoseconds ends in 2262), and reports false for the others. It
// renders digit by digit: an import renders two a line, and time.Format
// was 1% of its instructions.
func appendCanonicalTS(b []byte, ns int64) ([]byte, bool) {
	if ns < 0 {
		return b, false
	}
	t := time.Unix(ns/1e9, 0).UTC()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	two := func(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }
	b = two(two(b, y/100), y%100)
	b = two(append(b, '-'), int(mo))
	b = two(append(b, '-'), d)
	b = two(append(b, 'T'), h)
	b = two(append(b, ':'), mi)
	b = two(append(b, ':'), s)
	return append(b, 'Z'), true
}

// storedTSText is TSTextSQL in Go: "" when ts is the canonical rendering of
// ts_ns, ts otherwise (and where canonicalTS cannot tell: keeping the text
// is always right).
func storedTSText(ts string, ns sql.NullInt64) string {
	if ns.Valid && isCanonicalTS(ts, ns.Int64) {
		return ""
	}
	return ts
}

// isCanonicalTS reports whether ts is appendCanonicalTS's text of ns.
func isCanonicalTS(ts string, ns int64) bool {
	var buf [20]byte
	c, ok := appendCanonicalTS(buf[:0], ns)
	return ok && string(c) == ts
}

// storedEventTSText is EventTSTextSQL in Go: NULL when ts is the canonical
// rendering of at_ns, ts otherwise.
func storedEventTSText(ts string, atNS int64) any {
	if isCanonicalTS(ts, atNS) {
		return nil
	}
	return ts
}
