//go:build reliability

package reliability

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// row is one line of RELIABILITY.md's table: an attack, how often it was
// made, and what was lost.
type row struct {
	Key    string // orders the table: "1", "2a", ...
	Attack string
	Tried  string
	Times  string
	// Kept says what was checked afterwards (acknowledged records, cases).
	Kept string
	Lost int
	// Notes are details printed under the table.
	Notes    []string
	Failures []string
	failed   bool
	Skipped  string
}

// corpusRow is one hostile-input case.
type corpusRow struct {
	Name, Command string
	WantExit      int
	GotExit       int
	Message       string
	Failures      []string
}

// fuzzRow is one fuzz target's run.
type fuzzRow struct {
	Target, Package, Covers string
	Time                    time.Duration
	Execs                   string
	Corpus                  string
	Crashers                int
	Failure                 string
	Missing                 bool
}

var results struct {
	sync.Mutex
	rows   []*row
	corpus []corpusRow
	fuzz   []fuzzRow
}

// rowsOf are the rows each test registered.
var rowsOf = map[*testing.T][]*row{}

// newRow registers a row for the test. A failure of the test that no row of
// it explains (a t.Fatal in the harness) marks the row failed too.
func newRow(t *testing.T, key, attack, tried string) *row {
	r := &row{Key: key, Attack: attack, Tried: tried}
	results.Lock()
	results.rows = append(results.rows, r)
	rowsOf[t] = append(rowsOf[t], r)
	results.Unlock()
	t.Cleanup(func() {
		results.Lock()
		defer results.Unlock()
		explained := false
		for _, o := range rowsOf[t] {
			explained = explained || len(o.Failures) > 0
		}
		if t.Failed() && !explained {
			r.failed = true
			r.Failures = append(r.Failures, "the test stopped with an error: see the `go test` output")
		}
		if t.Skipped() && r.Skipped == "" {
			r.Skipped = "skipped"
		}
	})
	return r
}

// fail reports a failure in the test and in the row.
func (r *row) fail(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	t.Error(msg)
	results.Lock()
	r.Failures = append(r.Failures, msg)
	r.failed = true
	results.Unlock()
}

func (r *row) note(format string, args ...any) {
	results.Lock()
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
	results.Unlock()
}

func (r *row) status() string {
	switch {
	case r.failed:
		return "**FAIL**"
	case r.Skipped != "":
		return "skipped"
	}
	return "pass"
}

// writeReport renders RELIABILITY.md.
func writeReport(path string, took time.Duration, passed bool) error {
	results.Lock()
	defer results.Unlock()
	rows := append([]*row(nil), results.rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Key < rows[j].Key })
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Reliability\n\n")
	w("orbit's promise: every decision orbit acknowledged is in the journal and the index, whatever\n")
	w("happens around it, and every bad input gets a clear error while nothing else is lost.\n")
	w("`make reliability` proves it against the real binary (built with `CGO_ENABLED=0`) and\n")
	w("writes this file; do not edit it by hand. The tests are in `reliability/` (build tag\n")
	w("`reliability`), the hostile corpus in `testdata/bad/`.\n\n")
	verdict := "every attack passed"
	if !passed {
		verdict = "**some attacks FAILED** (details below)"
	}
	w("Last run: %s, %s/%s, %d CPUs, %s, scale %g, fuzz %s per target: %s in %s.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(),
		*scaleFlag, *fuzzFlag, verdict, took.Round(time.Second))
	w("| # | attack | what was tried | times | checked afterwards | lost | result |\n")
	w("|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		w("| %s | %s | %s | %s | %s | %d | %s |\n", r.Key, cell(r.Attack), cell(r.Tried), cell(r.Times), cell(r.Kept), r.Lost, r.status())
	}
	w("\n")
	for _, r := range rows {
		if len(r.Notes) == 0 && len(r.Failures) == 0 && r.Skipped == "" {
			continue
		}
		w("## %s. %s\n\n", r.Key, r.Attack)
		if r.Skipped != "" && r.Skipped != "skipped" {
			w("Skipped: %s\n\n", r.Skipped)
		}
		for _, n := range r.Notes {
			w("- %s\n", n)
		}
		if len(r.Notes) > 0 {
			w("\n")
		}
		if len(r.Failures) > 0 {
			w("Failures:\n\n")
			for _, f := range r.Failures {
				w("- %s\n", strings.ReplaceAll(strings.TrimSpace(f), "\n", "\n  "))
			}
			w("\n")
		}
	}
	if len(results.corpus) > 0 {
		w("## Hostile input, case by case\n\n")
		w("Each case from `testdata/bad/manifest.json`: the command, the exit status wanted and got, and\n")
		w("the message that names the file and line or the flag.\n\n")
		w("| case | command | exit (want) | message | result |\n|---|---|---|---|---|\n")
		for _, c := range results.corpus {
			res := "pass"
			if len(c.Failures) > 0 {
				res = "**FAIL**: " + cell(strings.Join(c.Failures, "; "))
			}
			w("| %s | `%s` | %d (%d) | %s | %s |\n", c.Name, cell(c.Command), c.GotExit, c.WantExit, cell(c.Message), res)
		}
		w("\n")
	}
	if len(results.fuzz) > 0 {
		w("## Fuzz targets\n\n")
		w("| target | package | what it holds | time | execs | corpus | new crashers | result |\n|---|---|---|---|---|---|---|---|\n")
		for _, f := range results.fuzz {
			res := "pass"
			switch {
			case f.Missing:
				res = "not present: not run"
			case f.Failure != "":
				res = "**FAIL**: " + cell(f.Failure)
			}
			w("| %s | %s | %s | %s | %s | %s | %d | %s |\n", f.Target, f.Package, cell(f.Covers), f.Time.Round(time.Second), f.Execs, f.Corpus, f.Crashers, res)
		}
		w("\n")
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// cell makes text safe in a markdown table cell.
func cell(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\r", `\r`)
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 {
			return '\uFFFD'
		}
		return r
	}, s)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
