//go:build reliability

package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/db"
)

// peek reads how many records the index holds for each journal, without
// syncing or otherwise changing it (a read-only connection).
func peek(p *project) (decisions, outcomes int, ok bool) {
	if !fileExists(p.path(indexFile)) {
		return 0, 0, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	store, err := db.Open(ctx, p.path(indexFile), db.Options{ReadOnly: true})
	if err != nil {
		return 0, 0, false
	}
	defer store.Close()
	var rows []struct {
		Path    string `db:"path"`
		Records int    `db:"records"`
	}
	if err := store.DB.SelectContext(ctx, &rows, `SELECT path, records FROM journal_files`); err != nil {
		return 0, 0, false
	}
	for _, r := range rows {
		switch r.Path {
		case decisionsFile:
			decisions = r.Records
		case retroFile:
			outcomes = r.Records
		}
	}
	return decisions, outcomes, true
}

// countRecords counts the lines of a journal that are whole JSON objects.
func countRecords(path string) int {
	ls, _ := readLines(path)
	n := 0
	for _, l := range ls {
		if l.Terminated && json.Valid([]byte(l.Text)) && strings.HasPrefix(l.Text, "{") {
			n++
		}
	}
	return n
}

// fragment is a torn write the suite put into the journal.
type fragment struct {
	Line int
	Text string
}

// The moments a kill can land in, told apart from outside the process.
const (
	phaseBefore = "before the append (start, open, lock, sync, id)"
	phaseWindow = "after the write, before the index committed it (the write, the fsync, the index transaction)"
	phaseAfter  = "after the index commit, before the acknowledgement"
	phaseFailed = "could not be classified (index unreadable while peeking)"
)

// kill9 runs `orbit decide` (and some `orbit retro`) in a loop and kills
// each with SIGKILL after a random delay; every call that printed its
// acknowledgement must be in the journal and the index afterwards. Torn
// fragments are put into the journal along the way (a write cut short): each
// must be kept, reported with file:line, and never swallow the next record.
func kill9(t *testing.T) {
	target := scaled(500, 20)
	r := newRow(t, "2", "kill -9",
		"`orbit decide --precedents 0` (85%) and `orbit retro` (15%) in a loop, each SIGKILLed after a random delay, with torn fragments written into the journal along the way")
	rt := newRow(t, "2b", "Torn fragments",
		"a prefix of a record without its newline (a write cut short) appended to the journal, then more decisions")
	p := newProject(t, t.TempDir())
	p.must("init")
	p.must("loop", "start", "--max-iterations", "1000000", "--time-limit", "0")
	rng := rand.New(rand.NewPCG(2, 9))

	var acked []string
	ackedOutcomes := map[string]string{} // evidence -> decision id
	var durs []time.Duration
	var fragments []fragment
	phases := map[string]int{}
	kills, calls, unexpected := 0, 0, 0
	maxDelay := 15 * time.Millisecond

	decide := func(n int) []string {
		return []string{"decide", "--title", fmt.Sprintf("%s (kill loop %d)", titles[rng.IntN(len(titles))], n),
			"--category", categories[rng.IntN(len(categories))], "--impact", "low", "--reversible", "--precedents", "0"}
	}
	// A few acknowledged decisions first, for retro to judge.
	for i := 0; i < 10; i++ {
		res := p.must(decide(-i)...)
		acked = append(acked, ackedID(res))
	}
	for kills < target && calls < 4*target {
		calls++
		if calls%40 == 0 {
			if f, ok := tear(t, p, rng); ok {
				fragments = append(fragments, f)
			}
		}
		args := decide(calls)
		retro := rng.IntN(100) < 15
		evidence := fmt.Sprintf("kill loop %d", calls)
		var judged string
		if retro {
			judged = acked[rng.IntN(len(acked))]
			args = []string{"retro", judged, []string{"CORRECT", "INCORRECT"}[rng.IntN(2)], "--evidence", evidence}
		}
		jd0, jo0 := countRecords(p.path(decisionsFile)), countRecords(p.path(retroFile))
		// One call in ten runs to the end, so that acknowledgements keep
		// coming; the others are killed between 0 and maxDelay.
		kill := calls%10 != 0
		delay := time.Duration(rng.Int64N(int64(maxDelay)))
		var timer *time.Timer
		res := p.runWith(runOpts{started: func(pr *os.Process) {
			if kill {
				timer = time.AfterFunc(delay, func() { pr.Signal(syscall.SIGKILL) })
			}
		}}, args...)
		if timer != nil {
			timer.Stop()
		}
		switch {
		case res.Killed:
			kills++
			jd1, jo1 := countRecords(p.path(decisionsFile)), countRecords(p.path(retroFile))
			id1, io1, ok := peek(p)
			j0, j1, i1 := jd0, jd1, id1
			if retro {
				j0, j1, i1 = jo0, jo1, io1
			}
			switch {
			case !ok:
				phases[phaseFailed]++
			case j1 == j0:
				phases[phaseBefore]++
			case i1 < j1:
				phases[phaseWindow]++
			default:
				phases[phaseAfter]++
			}
		case res.Code == 0:
			durs = append(durs, res.Dur)
			if retro {
				if !strings.Contains(res.Stdout, judged+": recorded ") {
					r.fail(t, "retro exited 0 without acknowledging: %s", res)
				}
				ackedOutcomes[evidence] = judged
			} else if id := ackedID(res); id != "" {
				acked = append(acked, id)
			} else {
				r.fail(t, "decide exited 0 without acknowledging: %s", res)
			}
			if len(durs)%20 == 0 {
				// Keep the delays spanning a whole call on this machine.
				slices.Sort(durs)
				maxDelay = max(15*time.Millisecond, durs[len(durs)*9/10]*11/10)
			}
		default:
			unexpected++
			if unexpected <= 3 {
				r.fail(t, "a call that was not killed failed: %s", res)
			}
		}
	}
	r.Times = fmt.Sprintf("%d calls, %d SIGKILLs", calls, kills)
	r.note("delays uniform in 0..%s (at least 15 ms; the 90th percentile of a whole call on this machine, +10%%); `--precedents 0` keeps each call short", maxDelay.Round(time.Millisecond))
	for _, ph := range []string{phaseBefore, phaseWindow, phaseAfter, phaseFailed} {
		if phases[ph] > 0 || ph != phaseFailed {
			r.note("killed %s: %d", ph, phases[ph])
		}
	}
	if kills < target {
		r.fail(t, "%d kills; want at least %d", kills, target)
	}
	if phases[phaseWindow] == 0 {
		r.fail(t, "no kill landed between the write and the index commit; the delays never reached the append")
	}

	// Afterwards: the next command brings the index up to date.
	if res := p.run("sync"); res.Code != 0 {
		r.fail(t, "orbit sync after the kills: %s", res)
	}
	lines, err := readLines(p.path(decisionsFile))
	if err != nil {
		t.Fatal(err)
	}
	inJournal := map[string]int{}
	fragAt := map[int]string{}
	for _, f := range fragments {
		fragAt[f.Line] = f.Text
	}
	records := 0
	for i, l := range lines {
		if want, ok := fragAt[l.N]; ok {
			if l.Text != want {
				rt.fail(t, "the fragment put at %s:%d is now %q; want it kept as it was, %q (did it swallow the next record?)", decisionsFile, l.N, excerpt(l.Text, 200), excerpt(want, 200))
			}
			if i+1 < len(lines) && !json.Valid([]byte(lines[i+1].Text)) {
				rt.fail(t, "the line after the fragment at %s:%d is not a whole record: %q", decisionsFile, l.N, excerpt(lines[i+1].Text, 200))
			}
			continue
		}
		var rec record
		if !l.Terminated || json.Unmarshal([]byte(l.Text), &rec) != nil || rec.ID == "" {
			r.fail(t, "%s:%d is neither a whole record nor a fragment the suite wrote: %q", decisionsFile, l.N, excerpt(l.Text, 200))
			continue
		}
		records++
		inJournal[rec.ID]++
	}
	for id, n := range inJournal {
		if n > 1 {
			r.fail(t, "id %s is in the journal %d times", id, n)
		}
	}
	logged, err := p.loggedIDs()
	if err != nil {
		r.fail(t, "%v", err)
	}
	for _, id := range acked {
		if inJournal[id] == 0 || logged[id].ID == "" {
			r.Lost++
			r.fail(t, "acknowledged decision %s is missing (in the journal: %v, in the index: %v)", id, inJournal[id] > 0, logged[id].ID != "")
		}
	}
	outcomes := map[string]bool{}
	rlines, _ := readLines(p.path(retroFile))
	for _, l := range rlines {
		var rec record
		if !l.Terminated || json.Unmarshal([]byte(l.Text), &rec) != nil {
			r.fail(t, "%s:%d is not a whole record: %q", retroFile, l.N, excerpt(l.Text, 200))
			continue
		}
		outcomes[rec.Evidence] = true
	}
	for ev, id := range ackedOutcomes {
		if !outcomes[ev] {
			r.Lost++
			r.fail(t, "acknowledged outcome for %s (%q) is missing from %s", id, ev, retroFile)
		}
	}
	r.Kept = fmt.Sprintf("%d acknowledged decisions, %d acknowledged outcomes", len(acked), len(ackedOutcomes))
	r.note("afterwards the journal holds %d decisions (%d acknowledged; the others were killed after their write and are kept too) and %d outcome lines", records, len(acked), len(rlines))

	// verify: the outcome file fully indexed, the decisions too, the
	// fragments listed by file:line as warnings, exit 0.
	v, vres, err := p.verify()
	if err != nil {
		r.fail(t, "%v", err)
		return
	}
	if vres.Code != 0 {
		r.fail(t, "orbit verify after the kills: %s", vres)
	}
	for _, fc := range v.Files {
		if fc.Records != fc.Indexed || fc.Unsynced != 0 {
			r.fail(t, "verify: %s has %d records, %d indexed, %d unsynced", fc.Path, fc.Records, fc.Indexed, fc.Unsynced)
		}
	}
	if c, err := p.indexCounts(); err != nil || c.Decisions != records {
		r.fail(t, "index holds %d decisions (err %v); the journal %d", c.Decisions, err, records)
	}
	listed := map[int]string{}
	for _, f := range v.Findings {
		if f.File == decisionsFile && f.Code == "torn" {
			listed[f.Line] = f.Severity
			continue
		}
		r.fail(t, "verify finding that is not a torn fragment: %s:%d %s %s", f.File, f.Line, f.Code, f.Message)
	}
	text := p.run("verify", "--all")
	var unlisted, notWarning []string
	for _, f := range fragments {
		loc := fmt.Sprintf("%s:%d", decisionsFile, f.Line)
		switch sev, ok := listed[f.Line]; {
		case !ok:
			unlisted = append(unlisted, loc)
		case sev != "warning":
			notWarning = append(notWarning, loc)
		}
	}
	if len(unlisted) > 0 {
		rt.fail(t, "verify does not list %d of the %d fragments of the kill loop, first %s", len(unlisted), len(fragments), unlisted[0])
	}
	if len(notWarning) > 0 {
		rt.fail(t, "verify lists %d of the %d fragments of the kill loop as errors, not warnings; first %q", len(notWarning), len(fragments), lineWith(text.Stdout, notWarning[0]+":"))
	}
	if len(fragments) > 0 {
		rt.note("verify prints, for example: `%s`", lineWith(text.Stdout, fmt.Sprintf("%s:%d", decisionsFile, fragments[0].Line)))
	}
	if st, err := os.ReadFile(p.path(stateFile)); err != nil || !json.Valid(st) {
		r.fail(t, "state file %s after the kills is not valid JSON (err %v): %q", stateFile, err, excerpt(string(st), 200))
	}
	tornCases(t, rt, len(fragments))
}

// tornCases puts a fragment of each kind into a journal of its own: cut
// between ASCII bytes, cut inside a multi-byte character (a write stops at
// any byte), and left as the last line with no append after it.
func tornCases(t *testing.T, rt *row, random int) {
	cases := []struct {
		name  string
		title string
		cut   func(line string) string
		after bool // a decision is appended after the fragment
	}{
		{"cut between ASCII bytes, then a decision", "Rotate the signing key", func(l string) string { return l[:len(l)/2] }, true},
		{"cut inside a multi-byte character, then a decision", "Schlüsselrotation prüfen", func(l string) string {
			return l[:strings.Index(l, "ü")+1]
		}, true},
		{"left as the last line, nothing appended after it", "Rotate the signing key", func(l string) string { return l[:len(l)/3] }, false},
	}
	for _, c := range cases {
		p := newProject(t, t.TempDir())
		first := p.must("decide", "--title", c.title, "--category", "quality", "--impact", "low", "--reversible", "--precedents", "0")
		ls, _ := readLines(p.path(decisionsFile))
		frag := c.cut(ls[0].Text)
		f, err := os.OpenFile(p.path(decisionsFile), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(frag)
		f.Close()
		acked := []string{ackedID(first)}
		if c.after {
			res := p.run("decide", "--title", "After the fragment", "--category", "quality", "--impact", "low", "--reversible", "--precedents", "0")
			if id := ackedID(res); id == "" {
				rt.fail(t, "%s: the decision after the fragment failed: %s", c.name, res)
			} else {
				acked = append(acked, id)
			}
		}
		loc := fmt.Sprintf("%s:2", decisionsFile)
		ls, _ = readLines(p.path(decisionsFile))
		switch {
		case len(ls) < 2 || ls[1].Text != frag:
			rt.fail(t, "%s: %s is not the fragment byte for byte", c.name, loc)
		case c.after && (len(ls) != 3 || !json.Valid([]byte(ls[2].Text))):
			rt.fail(t, "%s: the record after the fragment is not whole on line 3", c.name)
		}
		logged, err := p.loggedIDs()
		if err != nil {
			rt.fail(t, "%s: %v", c.name, err)
		}
		for _, id := range acked {
			if logged[id].ID == "" {
				rt.Lost++
				rt.fail(t, "%s: acknowledged decision %s is not in the index", c.name, id)
			}
		}
		v, vres, err := p.verify()
		if err != nil {
			rt.fail(t, "%s: %v", c.name, err)
			continue
		}
		text := p.run("verify")
		said := lineWith(text.Stdout, loc+":")
		rt.note("%s: `orbit verify` exits %d and prints `%s`", c.name, text.Code, said)
		if vres.Code != 0 {
			rt.fail(t, "%s: orbit verify exits %d; want 0 (a torn fragment is a warning): %q", c.name, vres.Code, said)
		}
		found := false
		for _, f := range v.Findings {
			if f.File == decisionsFile && f.Line == 2 {
				found = true
				if f.Severity != "warning" {
					rt.fail(t, "%s: verify lists %s as %s %q; want it listed as a warning", c.name, loc, f.Severity, f.Code)
				}
			}
		}
		if !found {
			rt.fail(t, "%s: verify does not list %s", c.name, loc)
		}
	}
	rt.Times = fmt.Sprintf("%d fragments in the kill loop + %d placed", random, len(cases))
	rt.Kept = fmt.Sprintf("%d fragments kept byte for byte, each on its own line", random+len(cases))
}

// tear appends a prefix of a decision line, without its newline, to the
// journal, as a write cut short leaves it. It does nothing unless the journal
// ends with a newline (a fragment already at the end stays alone).
func tear(t *testing.T, p *project, rng *rand.Rand) (fragment, bool) {
	t.Helper()
	ls, err := readLines(p.path(decisionsFile))
	if err != nil || len(ls) == 0 || !ls[len(ls)-1].Terminated {
		return fragment{}, false
	}
	src := ls[rng.IntN(len(ls))].Text
	if !json.Valid([]byte(src)) || len(src) < 4 {
		return fragment{}, false
	}
	text := src[:1+rng.IntN(len(src)-2)]
	f, err := os.OpenFile(p.path(decisionsFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	return fragment{Line: len(ls) + 1, Text: text}, true
}

// lineWith returns the first line of out that contains s.
func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
