package knowledge

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/orbit-loop/orbit/jsonedit"
	"github.com/orbit-loop/orbit/project"

	"github.com/orbit-loop/orbit/journal"
)

// DecisionTypes are the types of seed 004's autonomous_decisions.
var DecisionTypes = []string{"ambiguity_resolved", "blocker_skipped", "board_decided", "fix_limit_reached", "completed_with_warnings"}

// typeMapping is what a conductor decision type becomes in seed 000's
// vocabulary: its category, its depth, and its tier unless the decision's
// own text says otherwise.
type typeMapping struct {
	category, depth, tier string
}

// typeMap maps conductor's decision types (see the README, "Knowledge
// patterns").
// unknownType is where a decision of a type seed 004 does not define goes:
// a scope decision of medium depth, its tier read from its text.
var unknownType = typeMapping{"scope", "medium", "quick_review"}

var typeMap = map[string]typeMapping{
	// Resolving an ambiguity of the spec decides what is in scope.
	"ambiguity_resolved": {"scope", "light", "quick_review"},
	// Skipping blocked tasks narrows the track.
	"blocker_skipped": {"scope", "medium", "quick_review"},
	// HIGH_IMPACT decisions go to the Board of Directors.
	"board_decided": {"architecture", "heavy", "deep_think"},
	// Completing with unresolved issues after five fix cycles overrides
	// the quality gate.
	"fix_limit_reached":       {"quality", "heavy", "deep_think"},
	"completed_with_warnings": {"quality", "medium", "quick_review"},
}

var (
	escalateRE = lazyRegexp(`(?i)\b(escalat\w*|ask(ed|ing)? the user|human[- ]in[- ]the[- ]loop|waiting for (the )?user|user approval|paused? for)\b`)
	deepRE     = lazyRegexp(`(?i)\b(board( of directors)?|deliberat\w*|cto|ceo|cmo)\b`)
	rejectRE   = lazyRegexp(`(?i)\breject(ed|s)?\b`)
)

// mapTier reads the tier from the decision's text: escalated to a human,
// deliberated by the board, else the type's default.
func mapTier(text, dflt string) string {
	switch {
	case escalateRE().MatchString(text):
		return "escalate"
	case deepRE().MatchString(text):
		return "deep_think"
	}
	return dflt
}

// mapDecision reads the verdict: REJECTED when the text says rejected,
// NEEDS_REVIEW when it was escalated, else APPROVED (the loop went ahead).
func mapDecision(text, tier string) string {
	switch {
	case rejectRE().MatchString(text):
		return "REJECTED"
	case tier == "escalate":
		return "NEEDS_REVIEW"
	}
	return "APPROVED"
}

// conductorDecision is a decision line imported from a track: seed 000's
// fields, then the track and type it came from.
type conductorDecision struct {
	journal.Decision
	SourceTrack string `json:"source_track"`
	SourceType  string `json:"source_type"`
}

// TrackReport is what the decision import did with one metadata.json.
type TrackReport struct {
	Path      string `json:"path"`
	Track     string `json:"track"`
	Decisions int    `json:"decisions"`
	Appended  int    `json:"appended"`
	Skipped   int    `json:"skipped"`
	Conflicts int    `json:"conflicts"`
	Rejected  int    `json:"rejected"`
}

// DecisionReport is what the decision import did.
type DecisionReport struct {
	Tracks   []*TrackReport `json:"tracks"`
	Problems []Problem      `json:"problems"`
	// Sync is what the sync of the appended lines found in the journal.
	Sync journal.SyncReport `json:"-"`
}

// Failed reports whether any decision was rejected or conflicted.
func (r DecisionReport) Failed() bool {
	for _, t := range r.Tracks {
		if t.Rejected > 0 || t.Conflicts > 0 {
			return true
		}
	}
	return false
}

// candidateDecision is a mapped decision waiting for its id check.
type candidateDecision struct {
	track *TrackReport
	line  int
	id    string
	text  []byte
	// decided says whether the conductor decision had its own text (then
	// the journal's input is that text, whichever orbit imported it).
	decided bool
	// warn is said when the decision is appended (once, not at every
	// re-import).
	warn *Problem
}

// sourceKey is what a journal line keeps of the conductor decision it was
// imported from: two lines with the same key are the same decision, even
// if orbit's mapping of it changed between the imports.
type sourceKey struct {
	TS          string `json:"ts"`
	Reason      string `json:"reason"`
	Context     string `json:"context"`
	SourceTrack string `json:"source_track"`
	SourceType  string `json:"source_type"`
	Input       string `json:"input"`
}

// sameSource reports whether the journal line raw was imported from the
// same conductor decision as c.
func sameSource(raw []byte, c candidateDecision) bool {
	if sameJSON(raw, c.text) {
		return true
	}
	var a, b sourceKey
	if json.Unmarshal(raw, &a) != nil || json.Unmarshal(c.text, &b) != nil {
		return false
	}
	if !c.decided {
		// The input was the step (before orbit read the reasoning).
		a.Input, b.Input = "", ""
	}
	return a == b
}

// ImportDecisions appends the autonomous_decisions of every
// tracksDir/*/metadata.json to the decision journal as seed-format decision
// lines (ids conductor-<track>-<n>, n the decision's position in its
// array), under the journal's lock, and syncs them. A decision whose id is
// already in the journal with the same content is skipped; with other
// content, it is a conflict and is not appended. tracksDir is as stored:
// relative to the project root, or absolute; a missing one holds nothing.
func (k *Index) ImportDecisions(ctx context.Context, jix *journal.Index, tracksDir string, dryRun bool) (DecisionReport, error) {
	rep := DecisionReport{Tracks: []*TrackReport{}, Problems: []Problem{}}
	paths, err := filepath.Glob(filepath.Join(globEscape(k.Abs(tracksDir)), "*", "metadata.json"))
	if err != nil {
		return rep, fmt.Errorf("knowledge: tracks %s: %w", tracksDir, err)
	}
	slices.Sort(paths)
	var cands []candidateDecision
	for _, p := range paths {
		tr, cs, probs := k.readTrack(p)
		rep.Tracks = append(rep.Tracks, tr)
		rep.Problems = append(rep.Problems, probs...)
		cands = append(cands, cs...)
	}
	if len(cands) == 0 {
		return rep, nil
	}
	jpath := jix.DecisionsFile()
	var app *journal.Appender
	if !dryRun {
		if app, err = journal.OpenAppender(jix.Project.Root, jix.Project.Path(jpath)); err != nil {
			return rep, err
		}
		defer app.Close()
	}
	if rep.Sync, err = jix.Sync(ctx, journal.SyncOptions{}); err != nil {
		return rep, err
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.id
	}
	present, err := jix.Store.DecisionsByID(ctx, ids)
	if err != nil {
		return rep, err
	}
	var buf bytes.Buffer
	batch := map[string]candidateDecision{}
	for _, c := range cands {
		if prev, ok := batch[c.id]; ok {
			// Two metadata files with the same track_id.
			if sameSource(prev.text, c) {
				c.track.Skipped++
				continue
			}
			c.track.Conflicts++
			rep.Problems = append(rep.Problems, Problem{File: c.track.Path, Line: c.line, LineEnd: c.line, Severity: SevError, Code: journal.CodeConflict, RecordID: c.id,
				Message: fmt.Sprintf("decision %q is also in %s:%d with different content (two tracks with the same track_id?); not imported", c.id, prev.track.Path, prev.line)})
			continue
		}
		batch[c.id] = c
		if r, ok := present[c.id]; ok {
			if sameSource([]byte(r.Raw), c) {
				c.track.Skipped++
				continue
			}
			c.track.Conflicts++
			rep.Problems = append(rep.Problems, Problem{File: c.track.Path, Line: c.line, LineEnd: c.line, Severity: SevError, Code: journal.CodeConflict, RecordID: c.id,
				Message: fmt.Sprintf("decision %q is already in the journal (%s:%d) with different content; not imported", c.id, jpath, r.Line)})
			continue
		}
		c.track.Appended++
		if c.warn != nil {
			rep.Problems = append(rep.Problems, *c.warn)
		}
		buf.Write(c.text)
	}
	if dryRun || buf.Len() == 0 {
		return rep, nil
	}
	if err := app.Append(buf.Bytes()); err != nil {
		return rep, err
	}
	s, err := jix.Sync(ctx, journal.SyncOptions{})
	rep.Sync.Merge(s)
	return rep, err
}

// globEscape quotes the glob metacharacters of a path.
func globEscape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// readTrack maps the autonomous decisions of one metadata.json.
func (k *Index) readTrack(abs string) (*TrackReport, []candidateDecision, []Problem) {
	rel := k.Rel(abs)
	tr := &TrackReport{Path: rel, Track: filepath.Base(filepath.Dir(abs))}
	var probs []Problem
	bad := func(line int, id, format string, args ...any) {
		tr.Rejected++
		probs = append(probs, Problem{File: rel, Line: line, LineEnd: line, Severity: SevError, Code: journal.CodeEnum, RecordID: id,
			Message: fmt.Sprintf(format, args...) + "; not imported"})
	}
	data, err := project.ReadFile(k.Project.Root, abs, maxFileBytes)
	if err != nil {
		probs = append(probs, Problem{File: rel, Line: 1, LineEnd: 1, Severity: SevError, Code: "unreadable", Message: err.Error()})
		tr.Rejected++
		return tr, nil, probs
	}
	lines := jsonedit.NewLines(data)
	root, err := jsonedit.Parse(data)
	if err != nil {
		je := err.(*jsonedit.SyntaxError)
		l := lines.Line(je.Offset)
		probs = append(probs, Problem{File: rel, Line: l, LineEnd: l, Severity: SevError, Code: journal.CodeJSON,
			Message: fmt.Sprintf("column %d: not valid JSON: %s; its decisions are not imported", lines.Col(je.Offset), je.Msg)})
		tr.Rejected++
		return tr, nil, probs
	}
	if root.Kind != '{' {
		bad(1, "", "metadata.json is %s, not an object", jsonedit.KindName(root))
		return tr, nil, probs
	}
	if t := strings.TrimSpace(root.Get("track_id").Str(data)); t != "" {
		tr.Track = t
	}
	var items []*jsonedit.Node
	for _, arr := range []*jsonedit.Node{root.Get("autonomous_decisions"), root.Get("loop_state").Get("autonomous_decisions")} {
		switch {
		case arr == nil || arr.Kind == 'n':
		case arr.Kind != '[':
			bad(lines.Line(arr.Start), "", "autonomous_decisions is %s, not an array", jsonedit.KindName(arr))
		default:
			items = append(items, arr.Elems...)
		}
	}
	var out []candidateDecision
	for i, it := range items {
		line := lines.Line(it.Start)
		id := "conductor-" + tr.Track + "-" + strconv.Itoa(i+1)
		tr.Decisions++
		if it.Kind != '{' {
			bad(line, id, "autonomous decision %d is %s, not an object", i+1, jsonedit.KindName(it))
			continue
		}
		typ := strings.TrimSpace(text(data, it.Get("type")))
		var warn *Problem
		m, ok := typeMap[typ]
		if !ok {
			// Imported all the same (the decision was made), in a neutral
			// place, and said once: a re-import finds it there.
			m = unknownType
			warn = &Problem{File: rel, Line: line, LineEnd: line, Severity: SevWarning, Code: journal.CodeEnum, RecordID: id,
				Message: fmt.Sprintf("type %q is not a conductor decision type (allowed: %s); imported as %s/%s/%s with source_type %q",
					typ, strings.Join(DecisionTypes, ", "), m.category, m.depth, m.tier, typ)}
		}
		decided := strings.TrimSpace(text(data, it.Get("decision")))
		ctxText := strings.TrimSpace(text(data, it.Get("context")))
		reasoning := strings.TrimSpace(text(data, it.Get("reasoning")))
		// The decision's text; when it has none, its reasoning (the step
		// in context says where, not what).
		input := cmp.Or(decided, reasoning)
		if input == "" {
			bad(line, id, "autonomous decision %d has neither a decision nor a reasoning", i+1)
			continue
		}
		tier := mapTier(input, m.tier)
		d := conductorDecision{
			Decision: journal.Decision{
				ID: id, Iteration: 0, TS: strings.TrimSpace(text(data, it.Get("timestamp"))),
				Tier: tier, Depth: m.depth, Category: m.category, Input: input,
				Decision: mapDecision(input, tier), Reason: reasoning, Verification: journal.OutcomePending,
				Retrograde: journal.Retrograde{Outcome: journal.OutcomeNA}, Requestor: journal.RequestorConductor, Context: ctxText,
			},
			SourceTrack: tr.Track,
			SourceType:  typ,
		}
		line2, err := journal.Marshal(&d)
		if err != nil {
			bad(line, id, "%v", err)
			continue
		}
		if _, _, rejected := journal.ParseDecision(bytes.TrimSuffix(line2, []byte("\n"))); rejected != nil {
			bad(line, id, "the mapped decision is not a valid journal record")
			continue
		}
		out = append(out, candidateDecision{track: tr, line: line, id: id, text: line2, decided: decided != "", warn: warn})
	}
	return tr, out, probs
}

// sameJSON reports whether two texts hold the same JSON value, whatever
// their spacing or field order.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b)) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
