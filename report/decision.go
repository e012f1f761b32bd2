package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/orbit-loop/orbit/journal"
)

// ConfidenceText formats a confidence for a table ("" when not stated).
func ConfidenceText(c *float64) string {
	if c == nil {
		return ""
	}
	return strconv.FormatFloat(*c, 'f', -1, 64)
}

// DecisionInputColumn is the input's column in DecisionTable: the widest
// text, cut first when the table must fit a terminal.
const DecisionInputColumn = 9

// DecisionTable is the table `orbit log` shows.
func DecisionTable(ds []journal.DecisionView) *Table {
	t := &Table{Header: []string{"ID", "ITER", "TS", "TIER", "DEPTH", "CATEGORY", "DECISION", "CONF", "OUTCOME", "INPUT"}}
	for _, d := range ds {
		t.Append(d.ID, strconv.FormatInt(d.Iteration, 10), d.TS, d.Tier, d.Depth, d.Category, d.Decision.Decision, ConfidenceText(d.Confidence), outcomeCell(d), d.Input)
	}
	return t
}

// CSVColumns are the columns of a decision in CSV: every field of its JSON
// form, a nested object's fields named parent.child
// (retrograde.previous_id).
func CSVColumns() []string {
	cols, _, _ := flatten(journal.DecisionView{})
	return cols
}

// flatten turns v's JSON form into column names and cells: null is an
// empty cell, a string its text, anything else its JSON.
func flatten(v any) (cols, cells []string, err error) {
	data, err := JSON(v)
	if err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func(prefix string) error
	walk = func(prefix string) error {
		if _, err := dec.Token(); err != nil { // {
			return err
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			name := prefix + k.(string)
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			if len(raw) > 0 && raw[0] == '{' {
				sub := json.NewDecoder(bytes.NewReader(raw))
				saved := dec
				dec = sub
				err := walk(name + ".")
				dec = saved
				if err != nil {
					return err
				}
				continue
			}
			cell := ""
			switch {
			case string(raw) == "null":
			case raw[0] == '"':
				if err := json.Unmarshal(raw, &cell); err != nil {
					return err
				}
			default:
				cell = string(raw)
			}
			cols, cells = append(cols, name), append(cells, cell)
		}
		_, err := dec.Token() // }
		return err
	}
	return cols, cells, walk("")
}

// CSVWriter writes decisions as CSV with a header row.
type CSVWriter struct {
	w      *csv.Writer
	header bool
}

// NewCSVWriter returns a CSV writer of decisions.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w)} }

// Write writes one decision (after the header, on the first call).
func (c *CSVWriter) Write(d journal.DecisionView) error {
	if err := c.writeHeader(); err != nil {
		return err
	}
	_, cells, err := flatten(d)
	if err != nil {
		return err
	}
	if err := c.w.Write(cells); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}

func (c *CSVWriter) writeHeader() error {
	if c.header {
		return nil
	}
	c.header = true
	if err := c.w.Write(CSVColumns()); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}

// Flush ends the CSV, writing the header even when there were no rows.
func (c *CSVWriter) Flush() error {
	if err := c.writeHeader(); err != nil {
		return err
	}
	c.w.Flush()
	return c.w.Error()
}

// DecisionsMarkdown writes decisions as a markdown document: a heading, a
// count by outcome, and one table row per decision.
func DecisionsMarkdown(w io.Writer, ds []journal.DecisionView) error {
	outcomes := map[string]int{}
	for _, d := range ds {
		outcomes[d.Outcome]++
	}
	fmt.Fprintf(w, "# Decision journal\n\n%d %s: %d CORRECT, %d INCORRECT, %d PENDING\n\n",
		len(ds), journal.Plural(len(ds), "decision", "decisions"), outcomes["CORRECT"], outcomes["INCORRECT"], outcomes["PENDING"]+outcomes["N/A"])
	t := &Table{Header: []string{"id", "iter", "tier", "depth", "category", "decision", "conf", "outcome", "input", "reason"}}
	for _, d := range ds {
		t.Append(d.ID, strconv.FormatInt(d.Iteration, 10), d.Tier, d.Depth, d.Category, d.Decision.Decision, ConfidenceText(d.Confidence), d.Outcome, d.Input, d.Reason)
	}
	if len(ds) == 0 {
		return nil
	}
	return t.Markdown(w)
}

// outcomeCell is a decision's outcome in a table: VOIDED for a decision
// voided (recorded by mistake), whatever its outcome.
func outcomeCell(d journal.DecisionView) string {
	if d.Voided {
		return "VOIDED"
	}
	return d.Outcome
}
