package db_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/db"
)

// indexFile adds a decision journal's sync state and returns its id.
func indexFile(t *testing.T, store *db.Store) int64 {
	t.Helper()
	st := db.FileState{Path: ".claude/ceo-loop-decisions.jsonl", Kind: "decisions"}
	if err := store.InTx(context.Background(), func(tx *db.Tx) error { return tx.SaveFileState(context.Background(), &st) }); err != nil {
		t.Fatal(err)
	}
	return st.ID
}

// The virtual columns of schema v7 render every value of every list from
// its code, and the codes the schema spells out are db's: each value is
// stored as its position in db.CodeValues (an integer), and a value with no
// code is stored and read back as its text.
func TestCodesRoundTrip(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	fileID := indexFile(t, store)
	type row struct{ tier, depth, category, decision, verification, retro string }
	var rows []row
	n := 0
	for _, c := range db.CodedColumns {
		n = max(n, len(db.CodeValues(c)))
	}
	pick := func(c string, i int) string { vs := db.CodeValues(c); return vs[i%len(vs)] }
	for i := range n + 1 {
		r := row{pick("tier", i), pick("depth", i), pick("category", i), pick("decision", i), pick("verification", i), pick("retro_outcome", i)}
		if i == n {
			// Values no list holds (never indexed from a journal, which is
			// checked against seed 000's lists first): kept as text.
			r = row{"tier x", "0", "1", "APPROVED ", "pending", "correct"}
		}
		rows = append(rows, r)
	}
	err := store.InTx(ctx, func(tx *db.Tx) error {
		for i, r := range rows {
			d := db.DecisionRow{ID: fmt.Sprintf("d-%d", i), FileID: fileID, Line: int64(2*i + 1), LineEnd: int64(2*i + 1 + i%2),
				Iteration: 1, TS: "2026-03-08T10:00:00Z", Tier: r.tier, Depth: r.depth, Category: r.category, Input: "x",
				Decision: r.decision, Verification: r.verification, RetroOutcome: r.retro, Raw: "{}"}
			if _, err := tx.InsertDecision(ctx, &d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		var got row
		var lineEnd int64
		err := store.DB.QueryRowContext(ctx, `SELECT tier, depth, category, decision, verification, retro_outcome, line_end FROM decisions WHERE id = ?`,
			fmt.Sprintf("d-%d", i)).Scan(&got.tier, &got.depth, &got.category, &got.decision, &got.verification, &got.retro, &lineEnd)
		if err != nil {
			t.Fatal(err)
		}
		if got != r || lineEnd != int64(2*i+1+i%2) {
			t.Errorf("row %d read back as %+v, line_end %d; want %+v, %d", i, got, lineEnd, r, 2*i+1+i%2)
		}
		want := "integer"
		if i == n {
			want = "text"
		}
		for _, c := range []string{"tier", "depth", "category", "decision", "verification", "retro_outcome"} {
			var typ string
			var code any
			if err := store.DB.QueryRowContext(ctx, `SELECT typeof(`+c+`_code), `+c+`_code FROM decisions WHERE id = ?`, fmt.Sprintf("d-%d", i)).Scan(&typ, &code); err != nil {
				t.Fatal(err)
			}
			if typ != want {
				t.Errorf("row %d: %s_code is a %s (%v); want %s", i, c, typ, code, want)
			}
		}
	}
	// The virtual columns' expressions are db.TextSQL's, in every table.
	for table, cols := range map[string][]string{
		"decisions":         {"tier", "depth", "category", "decision", "verification", "retro_outcome"},
		"outcome_events":    {"outcome"},
		"decision_outcomes": {"outcome"},
	} {
		var schema string
		if err := store.DB.GetContext(ctx, &schema, `SELECT sql FROM sqlite_schema WHERE name = ?`, table); err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			if want := c + " TEXT    GENERATED ALWAYS AS (" + db.TextSQL(c, c+"_code") + ") VIRTUAL"; !strings.Contains(squeeze(schema), squeeze(want)) {
				t.Errorf("%s's schema does not render %s as db.TextSQL does:\n%s\nwant it to hold\n%s", table, c, schema, want)
			}
		}
	}
}

// squeeze collapses runs of spaces.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

// A confidence is stored in hundredths only when that reads back as the
// very same double; every other value keeps its REAL.
func TestConfidenceRoundTrip(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	fileID := indexFile(t, store)
	tenth, fifth := 0.1, 0.2
	values := []float64{0.85, 0.3, 0.07, 0.1, 0.29, 0.57, 1, 0.99, 0.01, 0.123, 0.005, 1e-9, tenth + fifth, 0}
	hundredths := 9 // the first nine are
	err := store.InTx(ctx, func(tx *db.Tx) error {
		for i := range len(values) + 1 {
			conf := sql.NullFloat64{} // the last decision has none
			if i < len(values) {
				conf = sql.NullFloat64{Float64: values[i], Valid: true}
			}
			d := db.DecisionRow{ID: fmt.Sprintf("d-%d", i), FileID: fileID, Line: int64(i + 1), LineEnd: int64(i + 1), Iteration: 1,
				Tier: "auto_approve", Depth: "trivial", Category: "feature", Input: "x", Decision: "APPROVED", Verification: "PENDING",
				RetroOutcome: "N/A", Confidence: conf, Raw: "{}"}
			if _, err := tx.InsertDecision(ctx, &d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		var got sql.NullFloat64
		var typ string
		if err := store.DB.QueryRowContext(ctx, `SELECT confidence, typeof(confidence_code) FROM decisions WHERE id = ?`, fmt.Sprintf("d-%d", i)).Scan(&got, &typ); err != nil {
			t.Fatal(err)
		}
		if !got.Valid || math.Float64bits(got.Float64) != math.Float64bits(v) {
			t.Errorf("confidence %v (%#x) read back as %v (%#x)", v, math.Float64bits(v), got.Float64, math.Float64bits(got.Float64))
		}
		if want := map[bool]string{true: "integer", false: "real"}[i < hundredths]; typ != want {
			t.Errorf("confidence %v stored as %s; want %s", v, typ, want)
		}
	}
	var missing sql.NullFloat64
	if err := store.DB.QueryRowContext(ctx, `SELECT confidence FROM decisions WHERE id = ?`, fmt.Sprintf("d-%d", len(values))).Scan(&missing); err != nil || missing.Valid {
		t.Errorf("no confidence read back as %v, %v; want NULL", missing, err)
	}
}

// An outcome event keeps its ts text only when at_ns does not render it.
func TestEventTSRoundTrip(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	fileID := indexFile(t, store)
	at := int64(1772964166) * 1e9 // 2026-03-08T10:02:46Z
	for i, c := range []struct {
		ts     string
		stored bool
	}{
		{"2026-03-08T10:02:46Z", false},
		{"", true},
		{"2026-03-08T11:02:46+01:00", true},
		{"2026-03-08T10:02:46.000Z", true},
		{"not a time", true},
	} {
		e := db.EventRow{DecisionID: "d-1", Outcome: "INCORRECT", AtNS: at, SrcRank: 1, TS: c.ts, FileID: fileID, Line: int64(i + 1), Raw: "{}"}
		if err := store.InTx(ctx, func(tx *db.Tx) error { return tx.InsertEvent(ctx, &e) }); err != nil {
			t.Fatal(err)
		}
		var ts, outcome string
		var stored bool
		if err := store.DB.QueryRowContext(ctx, `SELECT ts, outcome, ts_text IS NOT NULL FROM outcome_events WHERE seq = ?`, e.Seq).Scan(&ts, &outcome, &stored); err != nil {
			t.Fatal(err)
		}
		if ts != c.ts || outcome != "INCORRECT" || stored != c.stored {
			t.Errorf("event with ts %q read back as %q, %s (text stored %v); want %q, INCORRECT, stored %v", c.ts, ts, outcome, stored, c.ts, c.stored)
		}
	}
}

// A filter by category walks the index of the codes, not every row.
func TestCategoryFilterPlan(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	cond, arg := db.CategoryFilter("d")
	for _, q := range []string{
		`SELECT d.seq FROM decisions d WHERE ` + cond + ` ORDER BY d.seq DESC LIMIT 20`,
		// trust's scored decisions of a category (trust.loadFiltered).
		`SELECT d.seq, d.tier, o.outcome = 'CORRECT' FROM decision_outcomes o JOIN decisions d ON d.seq = o.decision_seq
			WHERE NOT EXISTS (SELECT 1 FROM decision_voids v WHERE v.decision_id = d.id AND v.void) AND ` + cond + `
			AND o.outcome IN ('CORRECT', 'INCORRECT') ORDER BY d.seq`,
	} {
		plan := explain(t, store, q, arg("deploy"))
		if !strings.Contains(plan, "USING INDEX decisions_category (category_code=?)") && !strings.Contains(plan, "USING COVERING INDEX decisions_category (category_code=?)") || strings.Contains(plan, "SCAN") {
			t.Errorf("plan of %s:\n%s\nwant a search of decisions_category and no scan", q, plan)
		}
	}
	if got, err := store.LatestDecisions(ctx, db.DecisionFilter{Category: "deploy"}); err != nil || len(got) != 0 {
		t.Errorf("LatestDecisions(category deploy) = %v, %v", got, err)
	}
}

// explain returns the query plan of q, one step a line.
func explain(t *testing.T, store *db.Store, q string, args ...any) string {
	t.Helper()
	rows, err := store.DB.Query(`EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "\n")
	}
	return b.String()
}
