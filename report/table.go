package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Table is rows under a header, rendered as a boxed table on a terminal and
// as tab-separated lines, without the header, when piped (stable for
// scripts: one row a line, tabs and newlines in cells turned into spaces).
// Control characters in cells are escaped (Escape) either way.
type Table struct {
	Header []string
	Rows   [][]string
	// MaxCell truncates cells longer than this on a terminal (0: 60).
	MaxCell int
}

// Append adds a row.
func (t *Table) Append(cells ...string) { t.Rows = append(t.Rows, cells) }

// Render writes the table for a terminal or a pipe.
func (t *Table) Render(w io.Writer, terminal bool) error {
	if !terminal {
		return t.TSV(w)
	}
	max := t.MaxCell
	if max == 0 {
		max = 60
	}
	return t.draw(w, nil, func(c string) string {
		return truncate(Escape(strings.ReplaceAll(oneLine(c), "\t", "    ")), max)
	})
}

// TSV writes the rows as tab-separated lines without the header.
func (t *Table) TSV(w io.Writer) error {
	var b strings.Builder
	for _, r := range t.Rows {
		for i, c := range r {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(Escape(strings.ReplaceAll(oneLine(c), "\t", " ")))
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Markdown writes the table as a GitHub-flavoured markdown table.
func (t *Table) Markdown(w io.Writer) error {
	return t.draw(w, renderer.NewMarkdown(), func(c string) string {
		return strings.ReplaceAll(Escape(oneLine(c)), "|", `\|`)
	})
}

// draw renders the table with olekukonko/tablewriter (r nil: its boxed
// renderer), each cell through format: left-aligned, not wrapped, the
// header as given.
func (t *Table) draw(w io.Writer, r tw.Renderer, format func(string) string) error {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	}
	if r != nil {
		opts = append(opts, tablewriter.WithRenderer(r))
	}
	tbl := tablewriter.NewTable(w, opts...)
	tbl.Header(t.Header)
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = format(c)
		}
		if err := tbl.Append(cells); err != nil {
			return fmt.Errorf("render table: %w", err)
		}
	}
	if err := tbl.Render(); err != nil {
		return fmt.Errorf("render table: %w", err)
	}
	return nil
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
