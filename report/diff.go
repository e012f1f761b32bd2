package report

import (
	"fmt"
	"io"
	"strings"
)

// Diff writes a line diff of a and b ("-" removed, "+" added, " " kept),
// with labels, as `diff -u` would show one hunk of the whole text.
func Diff(w io.Writer, labelA, labelB, a, b string) {
	x, y := splitLines(a), splitLines(b)
	// Longest common subsequence table.
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", labelA, labelB)
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			fmt.Fprintf(w, " %s\n", x[i])
			i, j = i+1, j+1
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(w, "+%s\n", y[j])
			j++
		default:
			fmt.Fprintf(w, "-%s\n", x[i])
			i++
		}
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
