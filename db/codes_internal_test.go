package db

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// What InsertDecision and InsertEvent compute in Go is what the SQL of the
// same names stores (the migration and the benchmark's sqlite3 load use
// the SQL): the same codes, the same confidences, the ts text left out of
// the same rows (Go keeps it where it cannot tell, before 1970, which is
// always right).
func TestStoredGoAgreesWithSQL(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "orbit.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	eval := func(expr string, args ...any) any {
		t.Helper()
		var v any
		if err := s.DB.QueryRowContext(ctx, `SELECT `+expr, args...).Scan(&v); err != nil {
			t.Fatalf("SELECT %s: %v", expr, err)
		}
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		return v
	}
	same := func(what string, goV, sqlV any) {
		t.Helper()
		if i, ok := goV.(int); ok {
			goV = int64(i)
		}
		if fmt.Sprintf("%T %v", goV, goV) != fmt.Sprintf("%T %v", sqlV, sqlV) {
			t.Errorf("%s: Go stores %T %v, SQL %T %v", what, goV, goV, sqlV, sqlV)
		}
	}
	for _, c := range CodedColumns {
		for _, v := range append(CodeValues(c), "", "other", "0") {
			same(c+" "+v, Code(c, v), eval(CodeSQL(c, "?1"), v))
		}
	}
	confs := []float64{0, 1e-9, 0.005, 0.123, 1.5, 0.30000000000000004}
	for k := range 101 {
		confs = append(confs, float64(k)/100)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		confs = append(confs, r.Float64(), float64(r.IntN(1000))/1000)
	}
	for _, c := range confs {
		same(fmt.Sprint("confidence ", c), confidenceCode(sql.NullFloat64{Float64: c, Valid: true}), eval(ConfidenceCodeSQL("?1"), c))
	}
	same("no confidence", confidenceCode(sql.NullFloat64{}), eval(ConfidenceCodeSQL("?1"), nil))
	for _, ns := range []int64{0, 1772964166e9, 1772964166e9 + 5e8, math.MaxInt64, -1e9, -1} {
		canon := eval(`strftime('%Y-%m-%dT%H:%M:%SZ', ?1 / 1000000000, 'unixepoch')`, ns)
		for _, ts := range []any{canon, "", "2026-03-08T10:02:46+00:00"} {
			text, _ := ts.(string)
			goTS, goEv := storedTSText(text, sql.NullInt64{Int64: ns, Valid: true}), storedEventTSText(text, ns)
			sqlTS, sqlEv := eval(TSTextSQL("?1", "?2"), text, ns), eval(EventTSTextSQL("?1", "?2"), text, ns)
			if _, ok := canonicalTS(ns); !ok {
				if goTS != text || goEv != text {
					t.Errorf("ts %q at %d (out of Go's range): Go stores %q, %v; want the text", text, ns, goTS, goEv)
				}
				continue
			}
			same(fmt.Sprintf("ts %q at %d", text, ns), goTS, sqlTS)
			same(fmt.Sprintf("event ts %q at %d", text, ns), goEv, sqlEv)
		}
	}
	same("ts without ts_ns", storedTSText("x", sql.NullInt64{}), eval(TSTextSQL("?1", "?2"), "x", nil))
}
