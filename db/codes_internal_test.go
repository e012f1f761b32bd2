package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	nss := []int64{0, 1772964166e9, 1772964166e9 + 5e8, math.MaxInt64, -1e9, -1, 951782400e9 /* 2000-02-29 */}
	for range 200 {
		nss = append(nss, r.Int64())
	}
	for _, ns := range nss {
		canon := eval(`strftime('%Y-%m-%dT%H:%M:%SZ', ?1 / 1000000000, 'unixepoch')`, ns)
		for _, ts := range []any{canon, "", "2026-03-08T10:02:46+00:00"} {
			text, _ := ts.(string)
			goTS, goEv := storedTSText(text, sql.NullInt64{Int64: ns, Valid: true}), storedEventTSText(text, ns)
			sqlTS, sqlEv := eval(TSTextSQL("?1", "?2"), text, ns), eval(EventTSTextSQL("?1", "?2"), text, ns)
			if _, ok := appendCanonicalTS(nil, ns); !ok {
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

// decisionArgs are d's fields in decisionParams' order, for the SQL of
// DecisionStoredSQL with numbered parameters (?1 id … ?23 raw).
func decisionArgs(d *DecisionRow) []any {
	return []any{d.ID, d.FileID, d.Line, d.LineEnd, d.ByteOffset, d.Iteration, d.TS, d.TSNS, d.Tier, d.Depth,
		d.Category, d.Input, d.Decision, d.Reason, d.NextAction, d.Verification, d.RetroPrevID, d.RetroOutcome, d.Confidence,
		d.Requestor, d.Context, d.RequestID, d.Raw}
}

func numbered(c string) string { return fmt.Sprintf("?%d", slices.Index(decisionParams, c)+1) }

// corpusDecisions are the decision lines of every JSONL file of the
// repository's testdata and demo, and of ../shared/examples when it is
// beside the checkout, as rows (decoded by encoding/json: the journal's
// decoder is held to it), each with its line as raw.
func corpusDecisions(t *testing.T) []DecisionRow {
	t.Helper()
	var files []string
	for _, dir := range []string{"../testdata", "../demo", "../../shared/examples", "../../../shared/examples"} {
		filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(path, ".jsonl") {
				files = append(files, path)
			}
			return nil
		})
	}
	var rows []DecisionRow
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			var r struct {
				ID, TS, Tier, Depth, Category, Input, Decision, Reason, Verification, Requestor, Context string
				Iteration                                                                                int64
				NextAction                                                                               string   `json:"next_action"`
				RequestID                                                                                string   `json:"request_id"`
				Confidence                                                                               *float64 `json:"confidence"`
				Retro                                                                                    struct {
					PreviousID *string `json:"previous_id"`
					Outcome    string  `json:"outcome"`
				} `json:"retrograde"`
			}
			if json.Unmarshal([]byte(line), &r) != nil || r.ID == "" || r.Tier == "" {
				continue
			}
			d := DecisionRow{ID: r.ID, FileID: 1, Line: int64(len(rows) + 1), LineEnd: int64(len(rows) + 1), Iteration: r.Iteration, TS: r.TS,
				Tier: r.Tier, Depth: r.Depth, Category: r.Category, Input: r.Input, Decision: r.Decision, Reason: r.Reason,
				NextAction: r.NextAction, Verification: r.Verification, RetroOutcome: r.Retro.Outcome, Requestor: r.Requestor,
				Context: r.Context, RequestID: r.RequestID, Raw: line}
			if r.Retro.PreviousID != nil {
				d.RetroPrevID = sql.NullString{String: *r.Retro.PreviousID, Valid: true}
			}
			if r.Confidence != nil {
				d.Confidence = sql.NullFloat64{Float64: *r.Confidence, Valid: true}
			}
			rows = append(rows, d)
		}
	}
	if len(rows) < 1500 {
		t.Fatalf("found %d decision lines in %d files: the corpus is missing", len(rows), len(files))
	}
	return rows
}

// hostileDecisions are rows whose text SQLite's json_quote escapes (every
// byte below 0x80, quotes, backslashes, U+2028, invalid UTF-8), whose
// numbers print at the edges of its rendering, and whose optional fields
// are set or not.
func hostileDecisions() []DecisionRow {
	base := DecisionRow{ID: "iter-1-1", FileID: 1, Iteration: 1, TS: "2026-03-08T10:02:46Z", Tier: "auto_approve", Depth: "trivial",
		Category: "feature", Input: "in", Decision: "APPROVED", Reason: "because", NextAction: "next", Verification: "PENDING",
		RetroOutcome: "N/A", Confidence: sql.NullFloat64{Float64: 0.9, Valid: true}}
	var rows []DecisionRow
	texts := []string{"", `"`, `\`, `'`, `\"'`, "a\u2028b\u2029", "é€😀", "\xff\xfe", "\x7f", `<&>`, "/", `\u0041`, strings.Repeat("x\"", 50)}
	for c := range 0x20 {
		texts = append(texts, string(rune(c)), "a"+string(rune(c))+"b")
	}
	for i, s := range texts {
		d := base
		d.Input, d.Reason, d.Context = s, "r"+s, s
		d.ID, d.TS, d.Requestor, d.RequestID = fmt.Sprintf("id-%d%s", i, s), s, s, s+"x"
		d.RetroPrevID = sql.NullString{String: s, Valid: i%2 == 0}
		rows = append(rows, d)
	}
	confs := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 0.1, 0.85, 0.95, 0.123, 1e-7, 1e-5, 1e-4, 0.0001234, 0.30000000000000004,
		0.1234567890123456, 0.123456789012345, 123456.789, 12345678901234.5, 999999999999999, 1e15, 1e15 + 0.5, 1e20, 1.5e300,
		math.MaxInt64, -0.25, 2.5, 100, 1200.5, 5e-324, math.SmallestNonzeroFloat64 * 3}
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		confs = append(confs, r.Float64(), float64(r.IntN(1000))/1000, float64(r.IntN(100000))/100000, r.NormFloat64()*1e6)
	}
	for i, c := range confs {
		d := base
		d.ID, d.Confidence = fmt.Sprintf("c-%d", i), sql.NullFloat64{Float64: c, Valid: true}
		rows = append(rows, d)
	}
	for i, it := range []int64{0, -5, math.MaxInt64, math.MinInt64} {
		d := base
		d.ID, d.Iteration, d.Confidence = fmt.Sprintf("it-%d", i), it, sql.NullFloat64{}
		rows = append(rows, d)
	}
	return rows
}

// InsertDecision stores, column for column, what DecisionStoredSQL (the
// benchmark's sqlite3 load) stores for the same fields: the canonical text
// Go renders is SQLite's, byte for byte, wherever Go says it can tell, so a
// line is stored as an empty string exactly when SQL would store it so; where Go cannot
// tell, it keeps the line (always right). Every line of the repository's
// journals is one Go can tell.
func TestInsertDecisionStoresWhatSQLStores(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "orbit.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cols, vals := DecisionStoredSQL(numbered)
	canonSQL := canonicalDecisionSQL(numbered)
	corpus := corpusDecisions(t)
	rows := slices.Clone(corpus)
	// Each hostile row three times: raw its canonical text as SQL renders
	// it, that text with a space added, and the empty object.
	for _, d := range hostileDecisions() {
		var canon string
		if err := s.DB.QueryRowContext(ctx, `SELECT `+canonSQL, decisionArgs(&d)...).Scan(&canon); err != nil {
			t.Fatal(err)
		}
		for i, raw := range []string{canon, canon[:len(canon)-1] + " }", "{}"} {
			d := d
			d.ID, d.Raw = fmt.Sprintf("%s/%d", d.ID, i), raw
			rows = append(rows, d)
		}
	}
	unsure, canonical := 0, 0
	err = s.InTx(ctx, func(tx *Tx) error {
		st := FileState{Path: "decisions.jsonl", Kind: "decisions"}
		if err := tx.SaveFileState(ctx, &st); err != nil {
			return err
		}
		// Each row is deleted once checked: the corpus repeats ids.
		del, err := tx.PrepareContext(ctx, `DELETE FROM decisions WHERE seq = ?`)
		if err != nil {
			return err
		}
		for i := range rows {
			d := &rows[i]
			d.FileID, d.Line, d.LineEnd = st.ID, int64(i+1), int64(i+1)
			goCanon, ok := appendCanonicalDecision(nil, d, func(c float64) (string, bool) {
				text, ok, err := tx.confidenceText(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				return text, ok
			})
			var sqlCanon string
			if err := tx.QueryRowContext(ctx, `SELECT `+canonSQL, decisionArgs(d)...).Scan(&sqlCanon); err != nil {
				return err
			}
			if ok && string(goCanon) != sqlCanon {
				t.Errorf("row %d: Go renders the canonical text\n%q\nSQL\n%q", i, goCanon, sqlCanon)
			}
			if !ok && i < len(corpus) {
				t.Errorf("corpus line %q: Go cannot tell its canonical text", d.Raw)
			}
			if !ok {
				unsure++
			}
			if inserted, err := tx.InsertDecision(ctx, d); err != nil || !inserted {
				return fmt.Errorf("insert row %d: %v, %w", i, inserted, err)
			}
			want, got := make([]any, len(cols)), make([]any, len(cols))
			for j := range cols {
				want[j], got[j] = new(any), new(any)
			}
			if err := tx.QueryRowContext(ctx, `SELECT `+strings.Join(vals, ", "), decisionArgs(d)...).Scan(want...); err != nil {
				return err
			}
			if err := tx.QueryRowContext(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM decisions WHERE seq = ?`, d.Seq).Scan(got...); err != nil {
				return err
			}
			for j, c := range cols {
				g, w := fmt.Sprintf("%T %q", *got[j].(*any), *got[j].(*any)), fmt.Sprintf("%T %q", *want[j].(*any), *want[j].(*any))
				switch {
				case c == "raw" && !ok:
					// Go cannot tell: it keeps the line.
					if line := fmt.Sprintf("%T %q", "", d.Raw); g != line {
						t.Errorf("row %d: Go cannot tell the canonical text and stores raw %s, not the line %s", i, g, line)
					}
				case g != w:
					t.Errorf("row %d (%q): Go stores %s %s, SQL %s", i, d.Raw, c, g, w)
				case c == "raw" && w == fmt.Sprintf("%T %q", "", ""):
					canonical++
				}
			}
			if _, err := del.ExecContext(ctx, d.Seq); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The checks above can fail: many lines are canonical, and Go tells
	// the canonical text of every row while its cache of confidences has
	// room.
	if canonical < 1000 || unsure > 0 {
		t.Errorf("of %d rows, %d lines are canonical (want 1,000 or more) and Go could not tell %d (want none)", len(rows), canonical, unsure)
	}
	t.Logf("%d rows (%d corpus lines), %d canonical", len(rows), len(corpus), canonical)

	// With the cache full, a new confidence is one Go cannot tell: the
	// line is kept, even where it is the canonical text.
	defer func(n int) { maxConfidenceTexts = n }(maxConfidenceTexts)
	confidenceTexts.Lock()
	maxConfidenceTexts = len(confidenceTexts.m)
	confidenceTexts.Unlock()
	d := hostileDecisions()[0]
	d.ID, d.Confidence = "full", sql.NullFloat64{Float64: 0.123456789, Valid: true}
	var canon string
	if err := s.DB.QueryRowContext(ctx, `SELECT `+canonSQL, decisionArgs(&d)...).Scan(&canon); err != nil {
		t.Fatal(err)
	}
	d.Raw = canon
	err = s.InTx(ctx, func(tx *Tx) error {
		got, err := tx.storedRaw(ctx, &d)
		if got != canon {
			t.Errorf("with the cache full, Go stores raw %q, want the line %q", got, canon)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
