package bench

import (
	"fmt"
	"strings"
	"time"
)

// Table is a markdown table.
type Table struct {
	Header []string
	Rows   [][]string
}

// Add appends a row.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// String renders the table as GitHub markdown, numbers right-aligned (every
// column but the first).
func (t *Table) String() string {
	var b strings.Builder
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + strings.ReplaceAll(c, "|", `\|`) + " |")
		}
		b.WriteString("\n")
	}
	row(t.Header)
	b.WriteString("|")
	for i := range t.Header {
		if i == 0 {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	return b.String()
}

// Dur formats a duration for a table: milliseconds below 10 s, seconds above.
func Dur(d time.Duration) string {
	switch ms := float64(d) / float64(time.Millisecond); {
	case ms < 10:
		return fmt.Sprintf("%.2f ms", ms)
	case ms < 10000:
		return fmt.Sprintf("%.1f ms", ms)
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}

// Ratio formats a/b.
func Ratio(a, b time.Duration) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// MB formats KiB as mebibytes.
func MB(kb int64) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }

// Rate formats n records done in d as records per second.
func Rate(n int, d time.Duration) string {
	if d <= 0 {
		return "–"
	}
	r := float64(n) / d.Seconds()
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM/s", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1fk/s", r/1e3)
	default:
		return fmt.Sprintf("%.0f/s", r)
	}
}

// Block markers delimit the parts of BENCHMARKS.md the harness owns, so that
// a run of one suite replaces its own section and leaves the others.
func beginMarker(name string) string { return "<!-- orbit-bench:" + name + " -->" }
func endMarker(name string) string   { return "<!-- /orbit-bench:" + name + " -->" }

// Block is a named part of the document.
type Block struct {
	Name string
	Text string
}

func (b Block) render() string {
	return beginMarker(b.Name) + "\n" + strings.TrimRight(b.Text, "\n") + "\n" + endMarker(b.Name) + "\n"
}

// Render joins blocks into a fresh document.
func Render(blocks []Block) string {
	parts := make([]string, len(blocks))
	for i, b := range blocks {
		parts[i] = b.render()
	}
	return strings.Join(parts, "\n")
}

// Splice replaces each block in doc by name, appending the blocks doc does
// not hold yet.
func Splice(doc string, blocks []Block) string {
	for _, b := range blocks {
		begin, end := beginMarker(b.Name), endMarker(b.Name)
		i := strings.Index(doc, begin)
		j := strings.Index(doc, end)
		if i < 0 || j < i {
			doc = strings.TrimRight(doc, "\n") + "\n\n" + b.render()
			continue
		}
		rest := doc[j+len(end):]
		rest = strings.TrimPrefix(rest, "\n")
		doc = doc[:i] + b.render() + rest
	}
	return doc
}
