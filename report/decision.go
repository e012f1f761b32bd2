package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/orbit-loop/orbit/db"
)

// Decision is how orbit shows a decision to scripts (JSON) and people.
type Decision struct {
	ID              string   `json:"id"`
	Iteration       int64    `json:"iteration"`
	TS              string   `json:"ts"`
	Tier            string   `json:"tier"`
	Depth           string   `json:"depth"`
	Category        string   `json:"category"`
	Input           string   `json:"input"`
	Decision        string   `json:"decision"`
	Reason          string   `json:"reason"`
	NextAction      string   `json:"next_action"`
	Verification    string   `json:"verification"`
	RetroPreviousID *string  `json:"retro_previous_id"`
	RetroOutcome    string   `json:"retro_outcome"`
	Confidence      *float64 `json:"confidence"`
	Requestor       string   `json:"requestor"`
	Outcome         string   `json:"outcome"`
	Line            int64    `json:"line"`
}

// DecisionFields are the JSON field names of Decision, for --json=fields.
var DecisionFields = []string{"id", "iteration", "ts", "tier", "depth", "category", "input", "decision", "reason",
	"next_action", "verification", "retro_previous_id", "retro_outcome", "confidence", "requestor", "outcome", "line"}

// DecisionOf converts an index row.
func DecisionOf(d *db.DecisionRow) Decision {
	v := Decision{ID: d.ID, Iteration: d.Iteration, TS: d.TS, Tier: d.Tier, Depth: d.Depth, Category: d.Category,
		Input: d.Input, Decision: d.Decision, Reason: d.Reason, NextAction: d.NextAction, Verification: d.Verification,
		RetroOutcome: d.RetroOutcome, Requestor: d.Requestor, Outcome: d.Outcome, Line: d.Line}
	if d.RetroPrevID.Valid {
		s := d.RetroPrevID.String
		v.RetroPreviousID = &s
	}
	if d.Confidence.Valid {
		c := d.Confidence.Float64
		v.Confidence = &c
	}
	return v
}

// Confidence formats a confidence for a table ("" when not stated).
func (d Decision) ConfidenceText() string {
	if d.Confidence == nil {
		return ""
	}
	return strconv.FormatFloat(*d.Confidence, 'f', -1, 64)
}

// DecisionTable is the table `orbit log` shows.
func DecisionTable(ds []Decision) *Table {
	t := &Table{Header: []string{"ID", "ITER", "TIER", "DEPTH", "CATEGORY", "DECISION", "CONF", "OUTCOME", "INPUT"}}
	for _, d := range ds {
		t.Append(d.ID, strconv.FormatInt(d.Iteration, 10), d.Tier, d.Depth, d.Category, d.Decision, d.ConfidenceText(), d.Outcome, d.Input)
	}
	return t
}

// CSVWriter writes decisions as CSV with a header row.
type CSVWriter struct {
	w      *csv.Writer
	header bool
}

// NewCSVWriter returns a CSV writer of decisions.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w)} }

// Write writes one decision (after the header, on the first call).
func (c *CSVWriter) Write(d Decision) error {
	if !c.header {
		c.header = true
		if err := c.w.Write(DecisionFields); err != nil {
			return fmt.Errorf("write CSV: %w", err)
		}
	}
	prev := ""
	if d.RetroPreviousID != nil {
		prev = *d.RetroPreviousID
	}
	rec := []string{d.ID, strconv.FormatInt(d.Iteration, 10), d.TS, d.Tier, d.Depth, d.Category, d.Input, d.Decision,
		d.Reason, d.NextAction, d.Verification, prev, d.RetroOutcome, d.ConfidenceText(), d.Requestor, d.Outcome,
		strconv.FormatInt(d.Line, 10)}
	if err := c.w.Write(rec); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}

// Flush ends the CSV, writing the header even when there were no rows.
func (c *CSVWriter) Flush() error {
	if !c.header {
		c.header = true
		if err := c.w.Write(DecisionFields); err != nil {
			return fmt.Errorf("write CSV: %w", err)
		}
	}
	c.w.Flush()
	return c.w.Error()
}

// DecisionsMarkdown writes decisions as a markdown document: a heading, a
// count by outcome, and one table row per decision.
func DecisionsMarkdown(w io.Writer, ds []Decision) error {
	outcomes := map[string]int{}
	for _, d := range ds {
		outcomes[d.Outcome]++
	}
	fmt.Fprintf(w, "# Decision journal\n\n%d decisions: %d CORRECT, %d INCORRECT, %d PENDING\n\n",
		len(ds), outcomes["CORRECT"], outcomes["INCORRECT"], outcomes["PENDING"]+outcomes["N/A"])
	t := &Table{Header: []string{"id", "iter", "tier", "depth", "category", "decision", "conf", "outcome", "input", "reason"}}
	for _, d := range ds {
		t.Append(d.ID, strconv.FormatInt(d.Iteration, 10), d.Tier, d.Depth, d.Category, d.Decision, d.ConfidenceText(), d.Outcome, d.Input, d.Reason)
	}
	if len(ds) == 0 {
		return nil
	}
	return t.Markdown(w)
}
