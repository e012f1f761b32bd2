package report

import (
	"bytes"
	"testing"
)

// TestTableGrid: the boxed and markdown tables at their edges, as orbit's
// commands print them through olekukonko/tablewriter (the golden files of
// the commands hold the common case): cells trimmed, widths by display
// width, short rows padded, rows without cells skipped, no header, no
// rows, nothing at all; control characters escaped before tablewriter
// sees them.
func TestTableGrid(t *testing.T) {
	tests := []struct {
		name    string
		table   Table
		box, md string
	}{
		{"nothing", Table{}, "", ""},
		{"header only", Table{Header: []string{"A", "B"}},
			"┌───┬───┐\n│ A │ B │\n└───┴───┘\n", "| A | B |\n|:--|:--|\n"},
		{"cells trimmed", Table{Header: []string{"  H  ", "B"}, Rows: [][]string{{" lead", "trail "}, {"\u00a0nb\u00a0", "\u3000w"}}},
			"┌──────┬───────┐\n│ H    │ B     │\n├──────┼───────┤\n│ lead │ trail │\n│ nb   │ w     │\n└──────┴───────┘\n",
			"| H    | B     |\n|:-----|:------|\n| lead | trail |\n| nb   | w     |\n"},
		{"an empty column", Table{Header: []string{"A", ""}, Rows: [][]string{{"x", ""}, {"y", "  "}}},
			"┌───┬──┐\n│ A │  │\n├───┼──┤\n│ x │  │\n│ y │  │\n└───┴──┘\n", "| A |   |\n|:--|:--|\n| x |   |\n| y |   |\n"},
		{"wide characters", Table{Header: []string{"A", "B"}, Rows: [][]string{{"数据库", "🚀x"}, {"e\u0301", "ＦＵＬＬ"}}},
			"┌────────┬──────────┐\n│ A      │ B        │\n├────────┼──────────┤\n│ 数据库 │ 🚀x      │\n│ e\u0301      │ ＦＵＬＬ │\n└────────┴──────────┘\n",
			"| A      | B        |\n|:-------|:---------|\n| 数据库 | 🚀x      |\n| e\u0301      | ＦＵＬＬ |\n"},
		{"ragged rows", Table{Header: []string{"A", "B", "C"}, Rows: [][]string{{"1"}, {}, {"1", "2", "3", "4"}}},
			"┌───┬───┬───┬───┐\n│ A │ B │ C │   │\n├───┼───┼───┼───┤\n│ 1 │   │   │   │\n│ 1 │ 2 │ 3 │ 4 │\n└───┴───┴───┴───┘\n",
			"| A | B | C |   |\n|:--|:--|:--|:--|\n| 1 |   |   |   |\n| 1 | 2 | 3 | 4 |\n"},
		{"no header", Table{Rows: [][]string{{"a|b", "c"}}}, "┌─────┬───┐\n│ a|b │ c │\n└─────┴───┘\n", "| a\\|b | c |\n"},
		{"control characters escaped", Table{Header: []string{"A", "B"}, Rows: [][]string{{"\x1b[31mred", "tab\there"}}},
			"┌─────────────┬─────────────┐\n│ A           │ B           │\n├─────────────┼─────────────┤\n│ \\x1b[31mred │ tab    here │\n└─────────────┴─────────────┘\n",
			"| A           | B         |\n|:------------|:----------|\n| \\x1b[31mred | tab\\there |\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := append([]string(nil), tt.table.Header...)
			var box, md bytes.Buffer
			if err := tt.table.Render(&box, true); err != nil {
				t.Fatal(err)
			}
			if err := tt.table.Markdown(&md); err != nil {
				t.Fatal(err)
			}
			if box.String() != tt.box {
				t.Errorf("Render =\n%s%q\nwant\n%s%q", box.String(), box.String(), tt.box, tt.box)
			}
			if md.String() != tt.md {
				t.Errorf("Markdown =\n%s%q\nwant\n%s%q", md.String(), md.String(), tt.md, tt.md)
			}
			if len(header) != len(tt.table.Header) || (len(header) > 0 && header[0] != tt.table.Header[0]) {
				t.Errorf("rendering changed the header to %q", tt.table.Header)
			}
		})
	}
}
