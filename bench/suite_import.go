package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/orbit-loop/orbit/journal"
)

// orbitPageSize is the page size orbit creates its index with (db.DSN).
const orbitPageSize = 16384

// contender is one tool timed in a suite.
type contender struct {
	name    string
	run     func(round int) (Sample, error)
	samples []Sample
}

// runImport times `orbit import` of the large journal into a fresh project
// against the sqlite3 shell building the same index from the same file.
func runImport(ctx context.Context, e *Env) (string, error) {
	n := e.Large()
	src, err := e.Journal(n)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return "", err
	}
	var notes []string
	var counts []string // what each index holds after the first round
	cs := []*contender{{name: "`orbit import`", run: func(round int) (Sample, error) {
		keep := round == 0 && e.SQLite3 != ""
		s, dir, err := e.ImportOrbit(n, keep)
		if err != nil || !keep {
			return s, err
		}
		c, err := IndexCounts(e.SQLite3, IndexPath(dir))
		if err != nil {
			return s, err
		}
		counts = append(counts, "orbit: "+c)
		return s, os.RemoveAll(dir)
	}}}
	var script string
	if e.SQLite3 == "" {
		notes = append(notes, MissingTool("sqlite3"))
	} else {
		schema, err := Schema()
		if err != nil {
			return "", err
		}
		def, err := defaultPageSize(e.SQLite3)
		if err != nil {
			return "", err
		}
		script = LoadScript(schema, src, orbitPageSize)
		for _, page := range []int{0, orbitPageSize} {
			name := fmt.Sprintf("sqlite3 shell, page size %d (its default)", def)
			if page != 0 {
				name = fmt.Sprintf("sqlite3 shell, page size %d (orbit's)", page)
			}
			cs = append(cs, &contender{name: name, run: func(round int) (Sample, error) {
				s, c, err := e.loadSQLite3(schema, src, page, round == 0)
				if c != "" {
					counts = append(counts, fmt.Sprintf("sqlite3 (page size %d): %s", max(page, def), c))
				}
				return s, err
			}})
		}
	}

	e.Logf("import: %d rounds of %d tools on %s decisions", e.Runs.Import, len(cs), SizeLabel(n))
	for round := range e.Runs.Import {
		for _, c := range cs {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			s, err := c.run(round)
			if err != nil {
				return "", err
			}
			e.Logf("  round %d %s: %s, CPU %s, %s", round+1, c.name, Dur(s.Wall), Dur(s.CPU), MB(s.MaxRSSKB))
			c.samples = append(c.samples, s)
		}
	}
	e.imports[n] = cs[0].samples
	if len(cs) > 1 {
		e.sqliteImports[n] = cs[1].samples
	}

	orbit := Summarize(cs[0].samples)
	t := Table{Header: []string{"tool", "median", "min", "max", "CPU (median)", "records/s (median)", "peak RSS (median)", "index size", "index ÷ journal", "orbit ÷ tool (time)", "orbit ÷ tool (CPU)"}}
	for _, c := range cs {
		st := Summarize(c.samples)
		size := c.samples[len(c.samples)-1].IndexBytes
		t.Add(c.name, Dur(st.Median), Dur(st.Min), Dur(st.Max), Dur(st.MedianCPU), Rate(n, st.Median), MB(st.MedianRSSKB), MB(size/1024),
			fmt.Sprintf("%.2f", float64(size)/float64(fi.Size())), Ratio(orbit.Median, st.Median), Ratio(orbit.MedianCPU, st.MedianCPU))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "A synthetic journal of %d decisions (%.0f MB, seed %d) loaded into an empty index, %d runs each, interleaved, whole-process wall time and CPU time (user + system, from wait4: on a shared machine the CPU ratio is the steadier one).\n\n",
		n, float64(fi.Size())/(1<<20), JournalSeed, e.Runs.Import)
	b.WriteString(t.String())
	b.WriteString("\n")
	for _, note := range notes {
		b.WriteString(note + "\n\n")
	}
	if len(cs) > 1 {
		for _, c := range cs[1:] {
			st := Summarize(c.samples)
			fmt.Fprintf(&b, "- orbit takes **%s×** the time of the %s (**%s×** its CPU time).\n", Ratio(orbit.Median, st.Median), c.name, Ratio(orbit.MedianCPU, st.MedianCPU))
		}
		b.WriteString("\n")
	}
	b.WriteString(`The sqlite3 shell and orbit build the same index: orbit's schema (the Up part of its goose migrations), with the decision rows, their
full-text entries, one outcome event per ` + "`retrograde.previous_id`" + ` and the current outcome of each decision (its
latest event), with WAL, ` + "`synchronous=NORMAL`" + ` and foreign keys on, as orbit opens it. The sqlite3 shell does it
in one transaction with ` + "`.import`" + ` into a temporary table and one ` + "`INSERT … SELECT line->>'$.field'`" + ` per table. orbit
does more for the same result: it checks every line against seed 000's enumerations, looks each id up for
idempotent re-imports, appends the lines to the project's own journal (a second copy of the file, written and
fsynced under the journal's lock) and indexes them in batches of ` + SizeLabel(journal.ImportFlushRecords) + ` records, so that memory stays flat.

`)
	if len(counts) > 0 {
		b.WriteString("What each index held after the first run:\n\n")
		for _, c := range counts {
			fmt.Fprintf(&b, "- %s\n", c)
		}
		b.WriteString("\n")
		if !sameCounts(counts) {
			b.WriteString("**The indexes differ** (see above): the comparison is not like for like.\n\n")
		}
	}
	if script != "" {
		fmt.Fprintf(&b, "<details><summary>The sqlite3 shell script (orbit's page size; the default-page-size run omits the first line)</summary>\n\n```sql\n%s```\n\n</details>\n\n",
			elideSchema(script))
	}
	return b.String(), nil
}

// loadSQLite3 times the sqlite3 shell building orbit's index from src in a
// fresh directory; count also returns what the index holds.
func (e *Env) loadSQLite3(schema, src string, pageSize int, count bool) (Sample, string, error) {
	dir, err := e.Dir("sqlite3")
	if err != nil {
		return Sample{}, "", err
	}
	defer os.RemoveAll(dir)
	scriptPath := filepath.Join(dir, "load.sql")
	if err := os.WriteFile(scriptPath, []byte(LoadScript(schema, src, pageSize)), 0o644); err != nil {
		return Sample{}, "", err
	}
	dbPath := filepath.Join(dir, "index.db")
	cmd, err := SQLite3Cmd(e.SQLite3, dbPath, scriptPath)
	if err != nil {
		return Sample{}, "", err
	}
	defer cmd.Stdin.(*os.File).Close()
	s, err := Measure(cmd)
	if err != nil {
		return s, "", err
	}
	if s.IndexBytes, err = DBBytes(dbPath); err != nil || !count {
		return s, "", err
	}
	c, err := IndexCounts(e.SQLite3, dbPath)
	return s, c, err
}

func defaultPageSize(sqlite3 string) (int, error) {
	s, err := Measure(exec.Command(sqlite3, ":memory:", "PRAGMA page_size;"))
	if err != nil {
		return 0, err
	}
	var n int
	if _, err := fmt.Sscan(string(s.Stdout), &n); err != nil {
		return 0, fmt.Errorf("sqlite3 page size %q: %w", s.Stdout, err)
	}
	return n, nil
}

// sameCounts reports whether every index description agrees (past its
// "tool: " prefix).
func sameCounts(counts []string) bool {
	var first string
	for i, c := range counts {
		_, rest, _ := strings.Cut(c, ": ")
		if i == 0 {
			first = rest
		} else if rest != first {
			return false
		}
	}
	return true
}

// elideSchema shortens the schema part of a load script for display.
func elideSchema(script string) string {
	begin := strings.Index(script, "-- 0")
	end := strings.Index(script, "CREATE TEMP TABLE")
	if begin < 0 || end < begin {
		return script
	}
	return script[:begin] + "-- … orbit's schema: the Up part of migrations/*.sql …\n" + script[end:]
}
