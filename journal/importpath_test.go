package journal

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/internal/golden"
	"github.com/orbit-loop/orbit/project"
)

// indexDump is every row the index derives from the journals, as text:
// each table's rows in order (the full-text index as its vocabulary, term by
// column with document counts, after FTS5's integrity-check against the
// decisions), the sync state without what depends on the file's inode and
// time.
func (e *testEnv) indexDump() string {
	e.tb.Helper()
	var tables []string
	if err := e.store.DB.Select(&tables, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'
		AND name NOT LIKE '%fts%' AND name NOT IN ('goose_db_version', 'journal_files') ORDER BY name`); err != nil {
		e.tb.Fatal(err)
	}
	if _, err := e.store.DB.Exec(`INSERT INTO decisions_fts (decisions_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		e.tb.Fatalf("full-text index: %v", err)
	}
	if _, err := e.store.DB.Exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_vocab USING fts5vocab(main, decisions_fts, 'col')`); err != nil {
		e.tb.Fatal(err)
	}
	queries := []string{`SELECT path, kind, size, synced_offset, synced_lines, tail_hash, last_ts_ns, torn_line, torn_size, records, events, rejected, warnings FROM journal_files ORDER BY id`,
		`SELECT * FROM temp.fts_vocab ORDER BY term, col`}
	for _, t := range tables {
		queries = append(queries, `SELECT * FROM `+t)
	}
	var b strings.Builder
	for _, q := range queries {
		rows, err := e.store.DB.Queryx(q)
		if err != nil {
			e.tb.Fatalf("%s: %v", q, err)
		}
		fmt.Fprintf(&b, "%s\n", q)
		var out []string
		for rows.Next() {
			vals, err := rows.SliceScan()
			if err != nil {
				e.tb.Fatal(err)
			}
			var row strings.Builder
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&row, "%v\t", v)
			}
			out = append(out, row.String())
		}
		slices.Sort(out)
		b.WriteString(strings.Join(out, "\n") + "\n")
		if err := rows.Err(); err != nil {
			e.tb.Fatal(err)
		}
		rows.Close()
	}
	return b.String()
}

// Import indexes the lines it appends from the records it decoded from the
// source, sync from the lines it reads: the two must derive the same index
// from the same journal, row for row. The sources span more than one of
// import's flushes and hold outcomes (of decisions before and after them,
// and of none), a line in another field order, a pretty-printed record
// (compacted on the way in), rejected lines, a conflict and a re-import.
func TestImportIndexesAsSyncDoes(t *testing.T) {
	dir := t.TempDir()
	var gen bytes.Buffer
	outcomes := []string{"CORRECT", "INCORRECT", "N/A"}
	for i := 1; i <= ImportFlushRecords+2500; i++ {
		id := fmt.Sprintf("gen-%d", i)
		switch {
		case i%7 == 0:
			// An outcome of a decision before it, sometimes in an
			// earlier flush, sometimes of the line just before.
			gen.WriteString(retroDec(id, i/10, i%600, fmt.Sprintf("gen-%d", i-1-(i*31)%(i-1)), outcomes[i%3]))
		case i%1009 == 0:
			// An outcome of a decision further on (in the next flush).
			gen.WriteString(retroDec(id, i/10, i%600, fmt.Sprintf("gen-%d", i+3000), "CORRECT"))
		default:
			gen.WriteString(dec(id, i/10, i%600))
		}
		gen.WriteByte('\n')
	}
	big := filepath.Join(dir, "big.jsonl")
	if err := os.WriteFile(big, gen.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pretty := filepath.Join(dir, "pretty.jsonl")
	prettyText := strings.Replace(dec("pretty-1", 900, 1), `,"tier"`, ",\n  \"tier\"", 1) + "\n" +
		`{"iteration":901,"id":"reordered-1","ts":"2026-03-08T10:02:00.5+01:00","tier":"auto_approve","depth":"trivial","category":"quality","input":"reordered","decision":"APPROVED"}` + "\n" +
		retroDec("late-1", 902, 3, "pretty-1", "INCORRECT") + "\n" +
		retroDec("late-2", 902, 4, "nowhere", "CORRECT") + "\n"
	if err := os.WriteFile(pretty, []byte(prettyText), 0o644); err != nil {
		t.Fatal(err)
	}
	mixed := copyTestdata(t, "import-mixed.jsonl", dir)

	imported := newTestEnv(t)
	imported.write(project.RetroFile, lines(retroLine(0, "pretty-1", "CORRECT")))
	rep := imported.importFiles(ImportOptions{}, big, pretty, mixed, big)
	if got := rep.Files[0].Appended; got != ImportFlushRecords+2500 {
		t.Fatalf("appended %d of the generated journal", got)
	}
	if got := rep.Files[3].Skipped; got != ImportFlushRecords+2500 {
		t.Fatalf("re-import skipped %d", got)
	}
	if !rep.Failed() {
		t.Fatal("the mixed file's rejected lines do not fail the import")
	}

	synced := newTestEnv(t)
	// In the order import saw them: the retrograde journal synced before
	// the first line was appended (to the file the appender had created).
	synced.write(project.DecisionsFile, "")
	synced.write(project.RetroFile, imported.read(project.RetroFile))
	synced.sync()
	synced.write(project.DecisionsFile, imported.read(project.DecisionsFile))
	synced.sync()

	got, want := imported.indexDump(), synced.indexDump()
	if !strings.Contains(want, "pretty-1") || !strings.Contains(want, "reordered-1") {
		t.Fatal("the dump lacks the decisions it should hold")
	}
	if got != want {
		t.Errorf("the index import made differs from the one sync made of the same journal:\n%s", golden.FirstDiff(got, want))
	}
}
