package knowledge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/orbit-loop/orbit/jsonedit"
	"slices"
	"strconv"
	"strings"
)

// Shapes of errors.json seen in the wild, by what its entries hold.
const (
	// ShapeScaffold is a registry with no entries yet: {"version":1,"errors":[]}.
	ShapeScaffold = "scaffold"
	// ShapeTemplate is the retrospective agent's template: id, pattern,
	// category, context, problem, solution, code_fix, occurrences,
	// last_seen, discovered_in.
	ShapeTemplate = "template"
	// ShapeLoopFixer is what the loop-fixer's logNewError appends: id,
	// pattern, solution, discovered_in, last_seen.
	ShapeLoopFixer = "loop-fixer"
	// ShapeFreeForm is the shape agents invent: id, date, track, symptom,
	// resolution, and no pattern.
	ShapeFreeForm = "free-form"
	// ShapeUnknown is an entry none of the above describes (still indexed).
	ShapeUnknown = "unknown"
)

// Entry is one known error or pattern, as read from its file.
type Entry struct {
	// Key identifies the entry in its file: its id, or #N (its position)
	// when it has none or repeats an earlier one.
	Key     string
	Ordinal int
	Line    int
	Kind    string // KindError or KindPattern
	Name    string
	// Pattern is the regex as written; HasPattern is false when the entry
	// has none.
	Pattern    string
	HasPattern bool
	Category   string
	Track      string
	Symptom    string
	Solution   string
	CodeFix    string
	// Occurrences and LastSeen are what the file says.
	Occurrences int64
	LastSeen    string
	Raw         string
	Shape       string

	// Filled by analyse.
	State    string
	StateWhy string
	// Reqs are the regex's prefilter requirements (see prefilter).
	Reqs        [][]string
	Specificity int
}

// Entry kinds.
const (
	KindError   = "error"
	KindPattern = "pattern"
)

// analyse classifies the entry's pattern.
func (e *Entry) analyse() {
	if e.Kind != KindError {
		e.State = StateNone
		return
	}
	e.State, e.StateWhy, e.Reqs, e.Specificity = classify(e.Pattern, e.HasPattern)
}

// registry is a parsed errors.json: the document, its errors array and its
// entries with their nodes, so that an edit rewrites only what it changes.
type registry struct {
	data  []byte
	lines jsonedit.Lines
	root  *jsonedit.Node
	// arr is the errors array: root["errors"], or root itself when the
	// file is a bare array.
	arr     *jsonedit.Node
	shape   string
	entries []Entry
	// nodes[i] is the object of entries[i] (nil when the element is not an
	// object).
	nodes []*jsonedit.Node
	// problems are located remarks about the file and its entries.
	problems []Problem
}

// parseRegistry reads an errors.json. An error means the file is not a
// registry at all (not JSON, no errors array); remarks about single entries
// are in problems.
func parseRegistry(path string, data []byte) (*registry, error) {
	r := &registry{data: data, lines: jsonedit.NewLines(data)}
	root, err := jsonedit.Parse(data)
	if err != nil {
		je := err.(*jsonedit.SyntaxError)
		return nil, fmt.Errorf("%s:%d:%d: not valid JSON: %s", path, r.lines.Line(je.Offset), r.lines.Col(je.Offset), je.Msg)
	}
	r.root = root
	switch root.Kind {
	case '[':
		r.arr = root
	case '{':
		r.arr = root.Get("errors")
		if r.arr == nil {
			return nil, fmt.Errorf("%s:1: no \"errors\" array (an errors.json is {\"version\": 1, \"errors\": [...]})", path)
		}
		if r.arr.Kind != '[' {
			return nil, fmt.Errorf("%s:%d: \"errors\" is %s, not an array", path, r.lines.Line(r.arr.Start), jsonedit.KindName(r.arr))
		}
	default:
		return nil, fmt.Errorf("%s:1: the file is %s, not an object with an \"errors\" array", path, jsonedit.KindName(root))
	}
	seen := map[string]int{}
	votes := map[string]int{}
	last := ""
	for i, el := range r.arr.Elems {
		line := r.lines.Line(el.Start)
		if el.Kind != '{' {
			r.problems = append(r.problems, Problem{File: path, Line: line, LineEnd: line, Severity: SevError, Code: "not-object",
				Message: fmt.Sprintf("errors[%d] is %s, not an object; skipped", i, jsonedit.KindName(el))})
			r.nodes = append(r.nodes, nil)
			continue
		}
		e := r.entry(path, el, i+1)
		if prev, dup := seen[e.Key]; dup && e.Key != "" {
			r.problems = append(r.problems, Problem{File: path, Line: line, LineEnd: line, Severity: SevWarning, Code: "duplicate-id", RecordID: e.Key,
				Message: fmt.Sprintf("id %q repeats the entry at line %d; this one is known as #%d", e.Key, prev, i+1)})
			e.Key = ""
		}
		if e.Key == "" {
			e.Key = "#" + strconv.Itoa(i+1)
		} else {
			seen[e.Key] = line
		}
		r.problems = append(r.problems, e.remarks(path)...)
		votes[e.Shape]++
		last = e.Shape
		r.entries = append(r.entries, e)
		r.nodes = append(r.nodes, el)
	}
	r.shape = ShapeScaffold
	best := 0
	for _, s := range []string{ShapeTemplate, ShapeLoopFixer, ShapeFreeForm, ShapeUnknown} {
		if n := votes[s]; n > best || (n == best && n > 0 && s == last) {
			r.shape, best = s, n
		}
	}
	return r, nil
}

// entry reads one element of the errors array.
func (r *registry) entry(path string, el *jsonedit.Node, ordinal int) Entry {
	d := r.data
	e := Entry{Ordinal: ordinal, Line: r.lines.Line(el.Start), Kind: KindError, Raw: string(d[el.Start:el.End])}
	if id := el.Get("id"); id != nil {
		e.Key = strings.TrimSpace(text(d, id))
	}
	e.Name = e.Key
	pat := el.Get("pattern")
	if pat == nil {
		pat = el.Get("regex")
	}
	switch {
	case pat == nil || pat.Kind == 'n':
	case pat.Kind == '"':
		e.Pattern, e.HasPattern = pat.Str(d), true
	default:
		e.Pattern, e.HasPattern = string(d[pat.Start:pat.End]), true
	}
	e.Category = text(d, el.Get("category"))
	e.Track = firstText(d, el, "discovered_in", "track")
	e.Symptom = joinText(d, el, "symptom", "problem", "error", "context")
	e.Solution = firstText(d, el, "solution", "resolution", "fix")
	e.CodeFix = text(d, el.Get("code_fix"))
	if o := el.Get("occurrences"); o != nil && (o.Kind == '0' || o.Kind == '"') {
		num := string(d[o.Start:o.End])
		if o.Kind == '"' {
			num = strings.TrimSpace(o.Str(d))
		}
		if v, err := strconv.ParseFloat(num, 64); err == nil && v >= 0 && v < 1<<53 {
			e.Occurrences = int64(v)
		}
	}
	e.LastSeen = text(d, el.Get("last_seen"))
	e.Shape = entryShape(el)
	e.analyse()
	// A pattern that is not a string is refused whatever it compiles to.
	if pat != nil && pat.Kind != '"' && pat.Kind != 'n' {
		e.State, e.StateWhy, e.Reqs, e.Specificity = StateInvalid, fmt.Sprintf("pattern is %s, not a string", jsonedit.KindName(pat)), nil, 0
	}
	return e
}

// remarks are what is worth telling about an entry's pattern.
func (e *Entry) remarks(path string) []Problem {
	switch e.State {
	case StateInvalid, StateMatchesAll:
		return []Problem{{File: path, Line: e.Line, LineEnd: e.Line, Severity: SevError, Code: "pattern-" + strings.ReplaceAll(e.State, "_", "-"), RecordID: e.Key,
			Message: e.Key + ": " + e.StateWhy}}
	case StateUnsupported:
		return []Problem{{File: path, Line: e.Line, LineEnd: e.Line, Severity: SevWarning, Code: "pattern-unsupported", RecordID: e.Key,
			Message: e.Key + ": " + e.StateWhy}}
	case StateNone:
		if e.HasPattern {
			return []Problem{{File: path, Line: e.Line, LineEnd: e.Line, Severity: SevWarning, Code: "pattern-empty", RecordID: e.Key, Message: e.Key + ": " + e.StateWhy}}
		}
	}
	return nil
}

// entryShape says which known shape an entry's keys follow.
func entryShape(el *jsonedit.Node) string {
	switch {
	case el.Has("symptom") || el.Has("resolution"):
		return ShapeFreeForm
	case el.Has("occurrences") || el.Has("problem") || el.Has("context") || el.Has("code_fix") || el.Has("category"):
		return ShapeTemplate
	case el.Has("pattern") && el.Has("solution"):
		return ShapeLoopFixer
	}
	return ShapeUnknown
}

// text renders a field as text: a string as itself, an array of strings
// joined by "; ", anything else as its JSON; "" for null or absent.
func text(d []byte, n *jsonedit.Node) string {
	if n == nil {
		return ""
	}
	switch n.Kind {
	case '"':
		return n.Str(d)
	case 'n':
		return ""
	case '[':
		parts := make([]string, 0, len(n.Elems))
		for _, el := range n.Elems {
			if t := text(d, el); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "; ")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, d[n.Start:n.End]); err != nil {
		return string(d[n.Start:n.End])
	}
	return b.String()
}

func firstText(d []byte, el *jsonedit.Node, keys ...string) string {
	for _, k := range keys {
		if t := text(d, el.Get(k)); t != "" {
			return t
		}
	}
	return ""
}

func joinText(d []byte, el *jsonedit.Node, keys ...string) string {
	var parts []string
	for _, k := range keys {
		if t := strings.TrimSpace(text(d, el.Get(k))); t != "" && !slices.Contains(parts, t) {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}
