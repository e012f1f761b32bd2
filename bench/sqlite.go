package bench

import (
	"bufio"
	"fmt"
	"github.com/orbit-loop/orbit/db"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orbit-loop/orbit/migrations"
)

// Schema returns the Up part of every goose migration orbit carries, in
// version order: the exact schema orbit's index has.
func Schema() (string, error) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return "", err
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		src, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			return "", err
		}
		up, ok := upSection(string(src))
		if !ok {
			return "", fmt.Errorf("migration %s: no -- +goose Up section", name)
		}
		fmt.Fprintf(&b, "-- %s\n%s\n", name, up)
	}
	return b.String(), nil
}

// upSection returns the lines between "-- +goose Up" and "-- +goose Down".
func upSection(src string) (string, bool) {
	var b strings.Builder
	in, found := false, false
	sc := bufio.NewScanner(strings.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		switch strings.TrimSpace(line) {
		case "-- +goose Up":
			in, found = true, true
			continue
		case "-- +goose Down":
			in = false
			continue
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String(), found
}

// loadSQL is how a user of the sqlite3 shell would build orbit's index from
// a JSONL journal: every line into a temporary table with .import, then one
// INSERT ... SELECT per table, pulling the fields out with ->>. Same rows as
// orbit's sync: decisions (with their byte offsets), the full-text entries,
// one outcome event per retrograde field, and the current outcome of each
// decision (its latest event), all in one transaction. Like orbit, it stores
// what db.DecisionStoredSQL says (a line's raw text only when it differs
// from the canonical form of its fields, its ts text only when it differs
// from the canonical rendering of ts_ns, the enumerations as codes).
const loadSQL = `BEGIN IMMEDIATE;
%[1]s
CREATE TEMP TABLE raw (line TEXT);
.mode ascii
.separator "\037" "\n"
.import %[2]s raw
INSERT INTO journal_files (id, path, kind) VALUES (1, '.claude/ceo-loop-decisions.jsonl', 'decisions');
INSERT INTO decisions (seq, %[3]s)
SELECT seq, %[4]s
FROM (SELECT rowid AS seq, line->>'$.id' AS id, 1 AS file_id, rowid AS line, rowid AS line_end,
    sum(length(CAST(line AS BLOB)) + 1) OVER (ORDER BY rowid) - length(CAST(line AS BLOB)) - 1 AS byte_offset,
    line->>'$.iteration' AS iteration, coalesce(line->>'$.ts', '') AS ts, unixepoch(line->>'$.ts') * 1000000000 AS ts_ns,
    line->>'$.tier' AS tier, line->>'$.depth' AS depth, line->>'$.category' AS category, line->>'$.input' AS input,
    line->>'$.decision' AS decision, coalesce(line->>'$.reason', '') AS reason, coalesce(line->>'$.next_action', '') AS next_action,
    coalesce(line->>'$.verification', 'PENDING') AS verification, line->>'$.retrograde.previous_id' AS retro_prev_id,
    coalesce(line->>'$.retrograde.outcome', 'N/A') AS retro_outcome, line->>'$.confidence' AS confidence,
    coalesce(line->>'$.requestor', '') AS requestor, coalesce(line->>'$.context', '') AS context,
    coalesce(line->>'$.request_id', '') AS request_id, line AS raw
  FROM raw ORDER BY rowid);
INSERT INTO decisions_fts (rowid, input, reason, next_action, context)
SELECT seq, input, reason, next_action, context FROM decisions;
INSERT INTO outcome_events (decision_id, outcome_code, at_ns, src_rank, ts_text, evidence, file_id, line, recorded_by, raw)
SELECT retro_prev_id, retro_outcome_code, ts_ns, 0, %[5]s, '', 1, line, id, ''
FROM decisions WHERE retro_prev_id IS NOT NULL ORDER BY seq;
INSERT INTO decision_outcomes (decision_id, decision_seq, outcome_code, event_seq, at_ns, src_rank, line)
SELECT e.decision_id, d.seq, e.outcome_code, e.seq, e.at_ns, e.src_rank, e.line
FROM (SELECT *, row_number() OVER (PARTITION BY decision_id ORDER BY at_ns DESC, src_rank DESC, line DESC) AS rn
      FROM outcome_events) e
LEFT JOIN decisions d ON d.id = e.decision_id
WHERE e.rn = 1;
UPDATE journal_files SET synced_lines = (SELECT count(*) FROM raw),
    synced_offset = (SELECT sum(length(CAST(line AS BLOB)) + 1) FROM raw) WHERE id = 1;
COMMIT;
`

// LoadScript is the sqlite3 shell script that builds orbit's index from the
// journal at path; pageSize 0 keeps the shell's default page size. The
// connection pragmas are orbit's.
func LoadScript(schema, path string, pageSize int) string {
	var b strings.Builder
	if pageSize > 0 {
		fmt.Fprintf(&b, "PRAGMA page_size = %d;\n", pageSize)
	}
	b.WriteString("PRAGMA journal_mode = WAL;\nPRAGMA synchronous = NORMAL;\nPRAGMA foreign_keys = ON;\n")
	cols, vals := db.DecisionStoredSQL(func(c string) string { return c })
	fmt.Fprintf(&b, loadSQL, schema, `"`+path+`"`, strings.Join(cols, ", "), strings.Join(vals, ",\n    "), db.EventTSTextSQL("ts", "ts_ns"))
	return b.String()
}

// SQLite3Cmd returns a command that runs the sqlite3 shell on dbPath with the
// script at scriptPath as its input, stopping at the first error.
func SQLite3Cmd(sqlite3, dbPath, scriptPath string) (*exec.Cmd, error) {
	in, err := os.Open(scriptPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(sqlite3, "-bail", dbPath)
	cmd.Stdin = in
	return cmd, nil
}

// countsSQL is what both indexes must agree on after a load. The full-text
// index keeps no per-row record (columnsize=0): FTS5's integrity-check with
// rank 1 compares it with the decisions, token by token, and fails the
// script when an entry is missing or wrong, so the count of full-text
// entries is the count of decisions it checked.
const countsSQL = `INSERT INTO decisions_fts (decisions_fts, rank) VALUES ('integrity-check', 1);
SELECT (SELECT count(*) FROM decisions) || ' decisions, ' ||
  (SELECT count(*) FROM decisions) || ' full-text entries (FTS5 integrity-check against them: passed), ' ||
  (SELECT count(*) FROM outcome_events) || ' outcome events, ' ||
  (SELECT count(*) FROM decision_outcomes) || ' current outcomes (' ||
  (SELECT group_concat(outcome || ' ' || n, ', ') FROM (SELECT outcome, n FROM outcome_totals ORDER BY outcome)) || '), ' ||
  (SELECT count(*) FROM findings) || ' findings';`

// IndexCounts describes what the index at dbPath holds, read with the sqlite3
// shell.
func IndexCounts(sqlite3, dbPath string) (string, error) {
	out, err := exec.Command(sqlite3, "-bail", dbPath, countsSQL).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("count %s: %w: %s", filepath.Base(dbPath), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}
