// Package followtest gives the tests of the follower a valid line of every
// kind of append-only file orbit follows. Importing it registers every kind
// (the packages that own them are linked).
package followtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/knowledge"
	"github.com/orbit-loop/orbit/loop"
)

// lines makes line i of a file of each kind.
var lines = map[string]string{
	journal.KindDecisions: `{"id":"iter-1-%06d","iteration":1,"ts":"2026-03-08T10:00:00Z","tier":"auto_approve","depth":"trivial","category":"feature","input":"input %[1]06d","decision":"APPROVED","reason":"r","next_action":"n","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"}}`,
	journal.KindRetro:     `{"ts":"2026-03-08T10:00:00Z","decision_id":"iter-1-%06d","outcome":"CORRECT","evidence":"e"}`,
	knowledge.KindJournal: `{"ts":"2026-03-08T10:00:00Z","event":"hit","file":"conductor/knowledge/errors.json","id":"err-%06d"}`,
	loop.KindEvents:       `{"ts":"2026-03-08T10:00:00.000Z","framework":"ccw","loop":"loop-%06d","event":"seen","status":"running"}`,
}

// Line returns line i of a file of the kind (without its newline): a valid
// record, distinct for each i, of the same length for every i below a
// million, so that an edit that swaps one i for another keeps the file's
// size. ok is false for a kind it does not know: a new kind needs its line
// here.
func Line(kind string, i int) (line string, ok bool) {
	format, ok := lines[kind]
	if !ok {
		return "", false
	}
	return fmt.Sprintf(format, i), true
}

// Kinds are the kinds Line knows, sorted: every kind orbit follows.
func Kinds() []string {
	return slices.Sorted(maps.Keys(lines))
}

// Lines returns lines from..to-1 of the kind, each with its newline.
func Lines(kind string, from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		l, _ := Line(kind, i)
		b.WriteString(l + "\n")
	}
	return b.String()
}
