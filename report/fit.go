package report

import (
	"bytes"
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// minFit is the narrowest Fit cuts a column to: narrower, the cell says
// too little to be worth the row.
const minFit = 12

// Fit cuts the cells of column col with an ellipsis so that the table, as
// Render draws it on a terminal, is at most width columns wide (width 0,
// unknown: left as is). It is for a terminal only: piped, a table is
// tab-separated full text, stable for scripts, and must not be cut.
func Fit(t *Table, col, width int) error {
	if width <= 0 {
		return nil
	}
	// Drawn, measured, cut, until it fits: the renderer's own
	// truncation and escaping decide the drawn width, so it is measured
	// rather than computed.
	for range 4 {
		var b bytes.Buffer
		if err := t.Render(&b, true); err != nil {
			return err
		}
		over := widest(b.String()) - width
		if over <= 0 {
			return nil
		}
		cur := 0
		for _, r := range t.Rows {
			if col < len(r) {
				r[col] = cellLine(r[col])
				cur = max(cur, twwidth.Width(r[col]))
			}
		}
		if t.MaxCell > 0 {
			cur = min(cur, t.MaxCell)
		} else {
			cur = min(cur, 60)
		}
		target := max(cur-over, minFit)
		if target >= cur {
			return nil
		}
		for _, r := range t.Rows {
			if col < len(r) {
				r[col] = cutTo(r[col], target)
			}
		}
	}
	return nil
}

// cellLine is a cell's text on one line, a tab as the spaces Render draws
// for it.
func cellLine(s string) string {
	return strings.ReplaceAll(oneLine(s), "\t", "    ")
}

// widest is the display width of the widest line of s.
func widest(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, twwidth.Width(l))
	}
	return w
}

// cutTo shortens s to at most n display columns, its last an ellipsis
// when anything was cut.
func cutTo(s string, n int) string {
	if twwidth.Width(s) <= n {
		return s
	}
	var b strings.Builder
	w := 0
	for _, r := range s {
		rw := twwidth.Width(string(r))
		if w+rw > n-1 {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	return b.String() + "…"
}
