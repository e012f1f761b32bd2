package report

import (
	"io"
	"strings"

	"github.com/clipperhouse/displaywidth"
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
	return writeGrid(w, t.Header, t.cells(func(c string) string {
		return truncate(Escape(strings.ReplaceAll(oneLine(c), "\t", "    ")), max)
	}), boxStyle)
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
	return writeGrid(w, t.Header, t.cells(func(c string) string {
		return strings.ReplaceAll(Escape(oneLine(c)), "|", `\|`)
	}), markdownStyle)
}

// cells returns the rows with each cell through format.
func (t *Table) cells(format func(string) string) [][]string {
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = make([]string, len(r))
		for j, c := range r {
			rows[i][j] = format(c)
		}
	}
	return rows
}

// gridStyle is how writeGrid draws a table's lines.
type gridStyle struct {
	// top, under the header and bottom rules: left end, fill, joint,
	// right end ("" for no rule).
	top, rule, bottom [4]string
	// bar separates cells; minWidth is the narrowest column.
	bar      string
	minWidth int
	// ruleFill repeats the fill over the cell's padding too.
	ruleFill func(width int) string
}

var (
	boxStyle = gridStyle{
		top: [4]string{"┌", "─", "┬", "┐"}, rule: [4]string{"├", "─", "┼", "┤"}, bottom: [4]string{"└", "─", "┴", "┘"},
		bar: "│",
	}
	markdownStyle = gridStyle{
		rule: [4]string{"|", "-", "|", "|"}, bar: "|", minWidth: 1,
		ruleFill: func(width int) string { return ":" + strings.Repeat("-", width+1) },
	}
)

// writeGrid writes rows under a header, each column as wide as its widest
// cell on a terminal (displayWidth), cells left-aligned with a space on
// either side and trimmed of surrounding space; a row without cells is
// skipped, a short row is padded with empty cells. It draws what
// olekukonko/tablewriter drew for orbit (the golden files hold the format),
// without the package initialisation that library ran in every process.
func writeGrid(w io.Writer, header []string, rows [][]string, st gridStyle) error {
	var body [][]string
	for i, r := range append([][]string{header}, rows...) {
		if len(r) == 0 && i > 0 {
			continue
		}
		trimmed := make([]string, len(r))
		for j, c := range r {
			trimmed[j] = strings.TrimSpace(c)
		}
		body = append(body, trimmed)
	}
	cols := 0
	for _, r := range body {
		cols = max(cols, len(r))
	}
	if cols == 0 {
		return nil
	}
	if len(header) == 0 {
		body = body[1:]
	}
	widths := make([]int, cols)
	for i := range widths {
		widths[i] = st.minWidth
	}
	for _, r := range body {
		for i, c := range r {
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	var b strings.Builder
	rule := func(ends [4]string) {
		if ends[0] == "" {
			return
		}
		b.WriteString(ends[0])
		for i, wd := range widths {
			if i > 0 {
				b.WriteString(ends[2])
			}
			if st.ruleFill != nil {
				b.WriteString(st.ruleFill(wd))
			} else {
				b.WriteString(strings.Repeat(ends[1], wd+2))
			}
		}
		b.WriteString(ends[3] + "\n")
	}
	rule(st.top)
	for n, r := range body {
		b.WriteString(st.bar)
		for i, wd := range widths {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			b.WriteString(" " + c + strings.Repeat(" ", wd-displayWidth(c)) + " " + st.bar)
		}
		b.WriteString("\n")
		if n == 0 && len(header) > 0 && len(body) > 1 || n == 0 && len(header) > 0 && st.ruleFill != nil {
			rule(st.rule)
		}
	}
	rule(st.bottom)
	_, err := io.WriteString(w, b.String())
	return err
}

// displayWidth is how many terminal columns s takes: each character's
// width by Unicode's East Asian Width (wide and full-width characters and
// emoji take two, combining marks none), as in a non-CJK locale.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += displaywidth.Rune(r)
	}
	return n
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
