package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
)

// The enumerations of seed 000, exactly.
var (
	Tiers          = []string{"auto_approve", "quick_review", "deep_think", "escalate"}
	Depths         = []string{"trivial", "light", "medium", "heavy"}
	Categories     = []string{"feature", "architecture", "quality", "scope", "deploy"}
	DecisionValues = []string{"APPROVED", "NEEDS_REVIEW", "REJECTED"}
	Verifications  = []string{"CONFIRMED", "FAILED", "PENDING"}
	Outcomes       = []string{"CORRECT", "INCORRECT", "PENDING", "N/A"}
)

// RequestorConductor is the requestor of the decisions imported from
// conductor tracks' autonomous_decisions: made by another loop, on its own
// track, they are never the ORBIT loop's to verify (not in its stale list).
const RequestorConductor = "conductor"

// Outcome values.
const (
	OutcomeCorrect   = "CORRECT"
	OutcomeIncorrect = "INCORRECT"
	OutcomePending   = "PENDING"
	OutcomeNA        = "N/A"
)

// maxIDLen bounds a record id.
const maxIDLen = 256

// Decision is one line of the decision journal, in seed 000's field order.
// Marshalled, it is a seed-format line; fields orbit adds come after the
// seed's own.
type Decision struct {
	ID           string     `json:"id,omitempty"`
	Iteration    int64      `json:"iteration"`
	TS           string     `json:"ts"`
	Tier         string     `json:"tier"`
	Depth        string     `json:"depth"`
	Category     string     `json:"category"`
	Input        string     `json:"input"`
	Decision     string     `json:"decision,omitempty"`
	Reason       string     `json:"reason"`
	NextAction   string     `json:"next_action"`
	Verification string     `json:"verification"`
	Retrograde   Retrograde `json:"retrograde"`
	Confidence   *float64   `json:"confidence,omitempty"`
	// Requestor, Context and RequestID are orbit's additions, filled from a
	// pending request (its requestor, description and context, and its id).
	Requestor string `json:"requestor,omitempty"`
	Context   string `json:"context,omitempty"`
	RequestID string `json:"request_id,omitempty"`
}

// Retrograde is a decision line's verdict on an earlier decision: an outcome
// event for PreviousID when PreviousID is set.
type Retrograde struct {
	PreviousID *string `json:"previous_id"`
	Outcome    string  `json:"outcome"`
}

// OutcomeRecord is one line of the retrograde journal
// (.claude/ceo-loop-retrograde.jsonl): an outcome recorded on its own.
type OutcomeRecord struct {
	TS         string `json:"ts"`
	DecisionID string `json:"decision_id"`
	Outcome    string `json:"outcome"`
	Evidence   string `json:"evidence,omitempty"`
}

// VoidRecord is a line of the retrograde journal that voids a decision
// recorded by mistake (Void true), or takes a void back (Void false). The
// decision's line stays in the journal; a voided decision counts in no
// trust figure, is no one's precedent and is never stale. Evidence, why,
// is required.
type VoidRecord struct {
	TS         string `json:"ts"`
	DecisionID string `json:"decision_id"`
	Void       bool   `json:"void"`
	Evidence   string `json:"evidence"`
}

// rejected is why a record is rejected, not yet located in a file: the
// follower names the file and the line.
func rejected(code, msg string) *Problem {
	return &Problem{Severity: SevError, Code: code, Message: msg}
}

// remark is a warning about an accepted record, not yet located.
func remark(code, msg string) Problem {
	return Problem{Severity: SevWarning, Code: code, Message: msg}
}

// wireDecision decodes a line with presence detection: nil means absent or
// null.
type wireDecision struct {
	ID           *string         `json:"id"`
	Iteration    *int64          `json:"iteration"`
	TS           *string         `json:"ts"`
	Tier         *string         `json:"tier"`
	Depth        *string         `json:"depth"`
	Category     *string         `json:"category"`
	Input        *string         `json:"input"`
	Decision     *string         `json:"decision"`
	Reason       *string         `json:"reason"`
	NextAction   *string         `json:"next_action"`
	Verification *string         `json:"verification"`
	Retrograde   *wireRetrograde `json:"retrograde"`
	Confidence   *float64        `json:"confidence"`
	// Not seed fields: kept when they are strings, never a reason to
	// reject a line.
	Requestor   string `json:"requestor"`
	Context     string `json:"context"`
	Description string `json:"description"`
	RequestID   string `json:"request_id"`
}

type wireRetrograde struct {
	PreviousID *string `json:"previous_id"`
	Outcome    *string `json:"outcome"`
}

// Parsed is a decision read from a line, with what the index needs besides
// the seed fields.
type Parsed struct {
	Decision
	// TSTime is the parsed ts; zero when ts is absent or not RFC 3339.
	TSTime time.Time
	// Event is true when the retrograde field names an earlier decision.
	Event bool
}

// ParseDecision decodes and validates one decision record. The error, if
// any, is the reason the record is rejected; remarks are warnings about an
// accepted record.
func ParseDecision(text []byte) (Parsed, []Problem, *Problem) {
	var w wireDecision
	if bad := decodeObject(text, func(b []byte) error { return decodeDecision(b, &w) }); bad != nil {
		return Parsed{}, nil, bad
	}
	var errs []Problem
	fail := func(code, format string, args ...any) {
		errs = append(errs, *rejected(code, fmt.Sprintf(format, args...)))
	}
	var missing []string
	need := func(name string, present bool) {
		if !present {
			missing = append(missing, name)
		}
	}
	need("id", w.ID != nil && *w.ID != "")
	need("iteration", w.Iteration != nil)
	need("tier", w.Tier != nil)
	need("depth", w.Depth != nil)
	need("category", w.Category != nil)
	need("input", w.Input != nil)
	need("decision", w.Decision != nil)
	if w.Retrograde != nil && w.Retrograde.Outcome == nil {
		missing = append(missing, "retrograde.outcome")
	}
	if len(missing) > 0 {
		fail(CodeMissing, "missing required %s: %s", Plural(len(missing), "field", "fields"), strings.Join(missing, ", "))
	}
	var p Parsed
	d := &p.Decision
	if w.ID != nil && *w.ID != "" {
		d.ID = *w.ID
		if msg := checkID(d.ID); msg != "" {
			fail(CodeRange, "%s", msg)
		}
	}
	if w.Iteration != nil {
		d.Iteration = *w.Iteration
		if d.Iteration < 0 {
			fail(CodeRange, "iteration %d is negative", d.Iteration)
		}
	}
	enum := func(field string, v *string, allowed []string, dst *string) {
		if v == nil {
			return
		}
		*dst = *v
		if !slices.Contains(allowed, *v) {
			fail(CodeEnum, "%s %q is not allowed (allowed: %s)", field, *v, strings.Join(allowed, ", "))
		}
	}
	enum("tier", w.Tier, Tiers, &d.Tier)
	enum("depth", w.Depth, Depths, &d.Depth)
	enum("category", w.Category, Categories, &d.Category)
	enum("decision", w.Decision, DecisionValues, &d.Decision)
	d.Verification = "PENDING"
	enum("verification", w.Verification, Verifications, &d.Verification)
	d.Retrograde.Outcome = OutcomeNA
	if w.Retrograde != nil {
		d.Retrograde.PreviousID = w.Retrograde.PreviousID
		enum("retrograde.outcome", w.Retrograde.Outcome, Outcomes, &d.Retrograde.Outcome)
	}
	if w.Confidence != nil {
		c := *w.Confidence
		d.Confidence = &c
		if c < 0 || c > 1 {
			fail(CodeRange, "confidence %v is outside 0..1", c)
		}
	}
	d.Input = deref(w.Input)
	d.Reason = deref(w.Reason)
	d.NextAction = deref(w.NextAction)
	d.Requestor = w.Requestor
	d.RequestID = w.RequestID
	d.Context = joinNonEmpty("\n", w.Description, w.Context)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Message
		}
		return Parsed{}, nil, rejected(errs[0].Code, strings.Join(msgs, "; "))
	}

	var warns []Problem
	d.TS, p.TSTime, warns = parseTS(w.TS, warns)
	if prev := d.Retrograde.PreviousID; prev != nil && *prev != "" {
		p.Event = true
	} else if o := d.Retrograde.Outcome; o == OutcomeCorrect || o == OutcomeIncorrect {
		warns = append(warns, remark(CodeOrphan, fmt.Sprintf("retrograde outcome %s names no previous_id; not counted", o)))
	}
	return p, warns, nil
}

// ParsedOutcome is an outcome record read from the retrograde journal.
type ParsedOutcome struct {
	OutcomeRecord
	TSTime time.Time
}

type wireOutcome struct {
	TS         *string `json:"ts"`
	DecisionID *string `json:"decision_id"`
	Outcome    *string `json:"outcome"`
	Evidence   *string `json:"evidence"`
	Void       *bool   `json:"void"`
}

// ParsedVoid is a void record read from the retrograde journal.
type ParsedVoid struct {
	VoidRecord
	TSTime time.Time
}

// ParseRetro decodes and validates one line of the retrograde journal: an
// outcome (ParsedOutcome) or, when it has a void field, a void
// (ParsedVoid).
func ParseRetro(text []byte) Decoded {
	var w wireOutcome
	if bad := decodeObject(text, func(b []byte) error { return decodeOutcome(b, &w) }); bad != nil {
		return Decoded{Record: ParsedOutcome{}, Reject: bad}
	}
	if w.Void == nil {
		p, warns, bad := checkOutcome(w)
		return Decoded{Record: p, ID: p.DecisionID, Warnings: warns, Reject: bad}
	}
	p, warns, bad := checkVoid(w)
	return Decoded{Record: p, ID: p.DecisionID, Warnings: warns, Reject: bad}
}

// checkVoid validates a void line: a decision id and why, and no outcome
// (a line voids a decision or judges it, not both).
func checkVoid(w wireOutcome) (ParsedVoid, []Problem, *Problem) {
	var missing []string
	if w.DecisionID == nil || *w.DecisionID == "" {
		missing = append(missing, "decision_id")
	}
	if w.Evidence == nil || strings.TrimSpace(*w.Evidence) == "" {
		missing = append(missing, "evidence")
	}
	if len(missing) > 0 {
		return ParsedVoid{}, nil, rejected(CodeMissing, fmt.Sprintf("missing required %s: %s (a void says why)", Plural(len(missing), "field", "fields"), strings.Join(missing, ", ")))
	}
	if w.Outcome != nil {
		return ParsedVoid{}, nil, rejected(CodeRange, "a line either voids a decision (void) or gives its outcome (outcome), not both")
	}
	if msg := checkID(*w.DecisionID); msg != "" {
		return ParsedVoid{}, nil, rejected(CodeRange, "decision_"+msg)
	}
	p := ParsedVoid{VoidRecord: VoidRecord{DecisionID: *w.DecisionID, Void: *w.Void, Evidence: *w.Evidence}}
	var warns []Problem
	p.TS, p.TSTime, warns = parseTS(w.TS, nil)
	return p, warns, nil
}

// ParseOutcome decodes and validates one line of the retrograde journal.
func ParseOutcome(text []byte) (ParsedOutcome, []Problem, *Problem) {
	var w wireOutcome
	if bad := decodeObject(text, func(b []byte) error { return decodeOutcome(b, &w) }); bad != nil {
		return ParsedOutcome{}, nil, bad
	}
	return checkOutcome(w)
}

// checkOutcome validates an outcome line.
func checkOutcome(w wireOutcome) (ParsedOutcome, []Problem, *Problem) {
	var missing []string
	if w.DecisionID == nil || *w.DecisionID == "" {
		missing = append(missing, "decision_id")
	}
	if w.Outcome == nil {
		missing = append(missing, "outcome")
	}
	if len(missing) > 0 {
		return ParsedOutcome{}, nil, rejected(CodeMissing, fmt.Sprintf("missing required %s: %s", Plural(len(missing), "field", "fields"), strings.Join(missing, ", ")))
	}
	if !slices.Contains(Outcomes, *w.Outcome) {
		return ParsedOutcome{}, nil, rejected(CodeEnum, fmt.Sprintf("outcome %q is not allowed (allowed: %s)", *w.Outcome, strings.Join(Outcomes, ", ")))
	}
	if msg := checkID(*w.DecisionID); msg != "" {
		return ParsedOutcome{}, nil, rejected(CodeRange, "decision_"+msg)
	}
	var p ParsedOutcome
	p.DecisionID = *w.DecisionID
	p.Outcome = *w.Outcome
	p.Evidence = deref(w.Evidence)
	var warns []Problem
	p.TS, p.TSTime, warns = parseTS(w.TS, nil)
	return p, warns, nil
}

// decodeObject runs a one-pass decoder over a record's text, turning its
// error into one readable remark.
func decodeObject(text []byte, decode func([]byte) error) *Problem {
	trimmed := bytes.Trim(text, " \t\r\n") // JSON's whitespace, not Unicode's
	if len(trimmed) > 0 && trimmed[0] != '{' && json.Valid(trimmed) {
		return rejected(CodeNotObject, fmt.Sprintf("record is a JSON %s, not an object", jsonKind(trimmed)))
	}
	err := decode(text)
	if err == nil {
		return nil
	}
	var te *typeError
	if errors.As(err, &te) {
		return rejected(CodeType, te.Error())
	}
	return rejected(CodeJSON, "invalid JSON: "+err.Error())
}

func jsonKind(b []byte) string {
	switch b[0] {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// parseTS keeps ts as written and parses it when it is RFC 3339.
func parseTS(ts *string, warns []Problem) (string, time.Time, []Problem) {
	if ts == nil || *ts == "" {
		return "", time.Time{}, append(warns, remark(CodeTS, "no ts; the record has no time"))
	}
	t, err := time.Parse(time.RFC3339Nano, *ts)
	if err != nil {
		return *ts, time.Time{}, append(warns, remark(CodeTS, fmt.Sprintf("ts %q is not an RFC 3339 time; kept as written", *ts)))
	}
	return *ts, t, warns
}

func checkID(id string) string {
	if len(id) > maxIDLen {
		return fmt.Sprintf("id is %d bytes, longer than %d", len(id), maxIDLen)
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return fmt.Sprintf("id %q contains a control character", id)
		}
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// Plural is one when n is 1, else many: "1 warning", "2 warnings".
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
