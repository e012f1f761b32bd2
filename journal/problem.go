package journal

import "fmt"

// Severity says whether a problem stopped a record from being indexed.
type Severity string

const (
	// SevError: the record was rejected. Its bytes stay in the file; the index
	// records the rejection so that verify and reports count it.
	SevError Severity = "error"
	// SevWarning: nothing was lost: the record was indexed, with a remark,
	// or the line is a torn fragment, a write cut short before its record
	// was acknowledged (kept in the file, never indexed).
	SevWarning Severity = "warning"
)

// Problem codes, stable for scripts (`orbit verify --json`).
const (
	CodeJSON      = "invalid-json"
	CodeTorn      = "torn"
	CodeNotObject = "not-object"
	CodeType      = "wrong-type"
	CodeEnum      = "unknown-value"
	CodeMissing   = "missing-field"
	CodeRange     = "out-of-range"
	CodeDuplicate = "duplicate-id"
	CodeTooLong   = "line-too-long"
	CodeUTF8      = "invalid-utf8"
	CodeNUL       = "nul-byte"
	CodeTS        = "ts-not-rfc3339"
	CodeMultiline = "multi-line-record"
	CodeBOM       = "byte-order-mark"
	CodeUnknownID = "unknown-decision"
	CodeOrphan    = "retrograde-without-id"
	CodeConflict  = "conflict"
	// CodeInvalid: a line of orbit's own journals (loop events, knowledge)
	// that is not one of their records.
	CodeInvalid   = "invalid-line"
	CodeRewritten = "rewritten"
	CodeGone      = "missing"
	CodeUnsynced  = "unsynced"
	// CodeUnreadable: a whole file cannot be read as what it should hold
	// (a loop's state file, a knowledge registry).
	CodeUnreadable = "unreadable"
)

// Problem is a finding: one thing wrong with a file or a stretch of it,
// located by line (Line 0 for the file as a whole). It is orbit's one
// finding type, for the journals, the knowledge files and the loops' files
// alike; the HTTP API renders it in its problem details.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	LineEnd int    `json:"line_end"`
	// Column, when set, is where on Line the problem is (1-based).
	Column   int      `json:"column,omitempty"`
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	RecordID string   `json:"record_id,omitempty"`
	Message  string   `json:"message"`
}

// Error formats the problem as file:line: message (file:line-end for a record
// spanning several lines, file:line:column when the column is known, file:
// message for the file as a whole).
func (p Problem) Error() string {
	loc := fmt.Sprintf("%s:%d", p.File, p.Line)
	switch {
	case p.Line == 0:
		loc = p.File
	case p.Column > 0:
		loc = fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
	case p.LineEnd > p.Line:
		loc = fmt.Sprintf("%s:%d-%d", p.File, p.Line, p.LineEnd)
	}
	if p.Severity == SevWarning {
		return loc + ": warning: " + p.Message
	}
	return loc + ": " + p.Message
}

// Benign reports whether the problem does not make a journal inconsistent:
// whether it is a warning (torn fragments included), so that what is listed
// as a warning and what passes are the same.
func (p Problem) Benign() bool {
	return p.Severity == SevWarning
}
