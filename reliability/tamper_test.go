//go:build reliability

package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tamperCase breaks the append-only promise of a synced journal.
type tamperCase struct {
	name string
	file string
	// first is the first affected line (1-based).
	first  int
	tamper func(ls []string) (data string)
}

// join renders lines as a journal.
func join(ls []string) string { return strings.Join(ls, "\n") + "\n" }

// tampering edits, deletes, reorders and truncates past journal lines:
// `orbit verify` and the next sync must name the file and the first affected
// line, no report may silently mix old and new content, and what the index
// held beyond the change must be saved, not lost.
func tampering(t *testing.T) {
	r := newRow(t, "4", "Tampering",
		"edit a past line (longer, or the same length), delete one, reorder two, insert one, truncate the file mid-line; in the decision and the outcome journal; then `orbit verify`, `orbit sync` and the reports")
	const n = 2000
	base := newProject(t, t.TempDir())
	writeJournal(t, base, n, 60, 4)
	base.must("sync")
	baseLog, err := base.loggedIDs()
	if err != nil {
		t.Fatal(err)
	}
	editInput := func(i int, with func(input string) string) func([]string) string {
		return func(ls []string) string {
			var m map[string]any
			if err := json.Unmarshal([]byte(ls[i-1]), &m); err != nil {
				t.Fatal(err)
			}
			old, _ := m["input"].(string)
			was := ls[i-1]
			ls[i-1] = strings.Replace(was, `"input":`+jsonString(old), `"input":`+jsonString(with(old)), 1)
			if ls[i-1] == was {
				t.Fatalf("line %d: could not edit its input", i)
			}
			return join(ls)
		}
	}
	longer := func(s string) string { return s + " (edited afterwards)" }
	sameLength := func(s string) string {
		b := []byte(s)
		if b[0] == 'X' {
			b[0] = 'Y'
		} else {
			b[0] = 'X'
		}
		return string(b)
	}
	swap := func(i int) func([]string) string {
		return func(ls []string) string {
			ls[i-1], ls[i] = ls[i], ls[i-1]
			return join(ls)
		}
	}
	remove := func(i int) func([]string) string {
		return func(ls []string) string { return join(append(ls[:i-1:i-1], ls[i:]...)) }
	}
	cut := func(i int) func([]string) string {
		return func(ls []string) string { return join(ls[:i-1]) + ls[i-1][:len(ls[i-1])/2] }
	}
	insert := func(i int) func([]string) string {
		return func(ls []string) string {
			extra := strings.Replace(ls[i-1], `"id":"`, `"id":"inserted-`, 1)
			return join(append(ls[:i-1:i-1], append([]string{extra}, ls[i-1:]...)...))
		}
	}
	cases := []tamperCase{
		{"edit a past line (it grows)", decisionsFile, 100, editInput(100, longer)},
		{"edit a past line, keeping its length", decisionsFile, 100, editInput(100, sameLength)},
		{"edit the last line", decisionsFile, n, editInput(n, longer)},
		{"delete a past line", decisionsFile, 500, remove(500)},
		{"delete the last line", decisionsFile, n, remove(n)},
		{"reorder two past lines", decisionsFile, 700, swap(700)},
		{"reorder the last two lines", decisionsFile, n - 1, swap(n - 1)},
		{"insert a line in the past", decisionsFile, 300, insert(300)},
		{"truncate the file in the middle of a past line", decisionsFile, 1500, cut(1500)},
		{"truncate the file in the middle of the last line", decisionsFile, n, cut(n)},
		{"edit a past outcome line", retroFile, 10, func(ls []string) string {
			ls[9] = strings.Replace(ls[9], `"evidence":"`, `"evidence":"edited: `, 1)
			return join(ls)
		}},
		{"delete a past outcome line", retroFile, 20, remove(20)},
		{"reorder two past outcome lines", retroFile, 30, swap(30)},
	}
	lost := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := cloneProject(t, base, t.TempDir())
			ls, err := readLines(p.path(c.file))
			if err != nil {
				t.Fatal(err)
			}
			texts := make([]string, len(ls))
			for i, l := range ls {
				texts[i] = l.Text
			}
			if err := os.WriteFile(p.path(c.file), []byte(c.tamper(texts)), 0o644); err != nil {
				t.Fatal(err)
			}
			loc := fmt.Sprintf("%s:%d", c.file, c.first)

			v := p.run("verify")
			vsaid := lineWith(v.Stdout+v.Stderr, loc+":")
			switch {
			case v.Code != 3:
				r.fail(t, "%s: orbit verify exits %d; want 3: %s", c.name, v.Code, v)
			case vsaid == "":
				r.fail(t, "%s: orbit verify does not name %s (the first affected line): %s", c.name, loc, v)
			}

			s := p.run("sync")
			ssaid := lineWith(s.Stderr, loc+":")
			if ssaid == "" {
				r.fail(t, "%s: the next `orbit sync` does not name %s (exit %d; stderr %q)", c.name, loc, s.Code, excerpt(s.Stderr, 300))
			}
			r.note("%s: verify exit %d `%s`; sync exit %d `%s`", c.name, v.Code, excerpt(vsaid, 200), s.Code, excerpt(orNothing(ssaid, s.Stderr), 260))

			// Every report now says what the files say: no mix of the old
			// index and the new file.
			got, _, err := p.answers()
			if err != nil {
				r.fail(t, "%s: reports after the sync: %v", c.name, err)
				return
			}
			if d := got.diff(freshAnswers(t, p)); len(d) > 0 {
				r.fail(t, "%s: after the sync the reports differ from an index built from the files as they are now (old and new content mixed): %s", c.name, strings.Join(d, "; "))
			}
			if res := p.run("verify"); res.Code != 0 {
				r.fail(t, "%s: orbit verify after the sync: %s", c.name, res)
			}
			// What the file lost is in a recovery file.
			now, err := p.loggedIDs()
			if err != nil {
				r.fail(t, "%s: %v", c.name, err)
				return
			}
			saved := recovered(t, p)
			for id := range baseLog {
				if now[id].ID == "" && !saved[id] {
					lost++
					r.fail(t, "%s: decision %s is neither in the index nor in a recovery file", c.name, id)
				}
			}
		})
	}
	r.Times = fmt.Sprintf("%d tamperings", len(cases))
	r.Kept = fmt.Sprintf("%d decisions, 60 outcome lines: each in the index or in `.claude/orbit-recovered-*.jsonl`", n)
	r.Lost = lost
}

func orNothing(s, alt string) string {
	if s != "" {
		return s
	}
	if alt == "" {
		return "(nothing on stderr)"
	}
	return strings.ReplaceAll(strings.TrimSpace(alt), "\n", " / ")
}

// jsonString encodes s as synth writes it (encoding/json's defaults).
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// recovered returns the ids in the project's recovery files.
func recovered(t *testing.T, p *project) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	files, _ := filepath.Glob(p.path(".claude/orbit-recovered-*.jsonl"))
	for _, f := range files {
		ls, err := readLines(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			var rec record
			if json.Unmarshal([]byte(l.Text), &rec) == nil && rec.ID != "" {
				ids[rec.ID] = true
			}
		}
	}
	return ids
}
