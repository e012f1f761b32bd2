package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// memoryTargetKB is the peak RSS orbit import must stay under at any size.
const memoryTargetKB = 150 * 1024

// memoryFlatTarget is the most the peak RSS may grow between the two
// largest sizes for memory to count as flat.
const memoryFlatTarget = 1.25

// runMemory reports the peak RSS of `orbit import` at every size, reusing
// the import suite's runs where it made them.
func runMemory(ctx context.Context, e *Env) (string, error) {
	t := Table{Header: []string{"journal", "peak RSS (median)", "min", "max", "import time (median)", "÷ smallest (RSS)", "journal size", "index size", "index ÷ journal"}}
	var ratios []string
	var base, worst int64
	medians := make([]int64, len(e.Sizes))
	for i, n := range e.Sizes {
		samples := e.imports[n]
		if len(samples) == 0 {
			e.Logf("memory: %d imports of %s decisions", e.Runs.Import, SizeLabel(n))
			for range e.Runs.Import {
				if err := ctx.Err(); err != nil {
					return "", err
				}
				s, _, err := e.ImportOrbit(n, false)
				if err != nil {
					return "", err
				}
				e.Logf("  %s: %s, %s", SizeLabel(n), Dur(s.Wall), MB(s.MaxRSSKB))
				samples = append(samples, s)
			}
			e.imports[n] = samples
		}
		st := Summarize(samples)
		if base == 0 {
			base = st.MedianRSSKB
		}
		worst = max(worst, st.MaxRSSKB)
		medians[i] = st.MedianRSSKB
		src, err := e.Journal(n)
		if err != nil {
			return "", err
		}
		fi, err := os.Stat(src)
		if err != nil {
			return "", err
		}
		size := samples[len(samples)-1].IndexBytes
		ratio := fmt.Sprintf("%.2f", float64(size)/float64(fi.Size()))
		ratios = append(ratios, fmt.Sprintf("%s at %s (%d bytes a decision)", ratio, SizeLabel(n), size/int64(n)))
		t.Add(fmt.Sprintf("%s decisions", SizeLabel(n)), MB(st.MedianRSSKB), MB(st.MinRSSKB), MB(st.MaxRSSKB), Dur(st.Median),
			fmt.Sprintf("%.2f", float64(st.MedianRSSKB)/float64(base)), MB(fi.Size()/1024), MB(size/1024), ratio)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Peak resident set size (`ru_maxrss` of the process, from `wait4`) of `orbit import FILE` into a fresh project, %d runs per size.\n\n", e.Runs.Import)
	b.WriteString(t.String())
	b.WriteString("\n")
	verdict := "met"
	if worst > memoryTargetKB {
		verdict = "**not met**"
	}
	fmt.Fprintf(&b, "Target: under %s at every size — %s (highest peak seen: %s).", MB(memoryTargetKB), verdict, MB(worst))
	if k := len(e.Sizes); k >= 2 {
		growth := float64(medians[k-1]) / float64(medians[k-2])
		fmt.Fprintf(&b, " And flat in the journal's size: from %s to %s decisions the median peak grows ×%.2f — %s (flat: at most ×%.2f).",
			SizeLabel(e.Sizes[k-2]), SizeLabel(e.Sizes[k-1]), growth, map[bool]string{true: "flat", false: "**not flat**"}[growth <= memoryFlatTarget], memoryFlatTarget)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "The index on disk (`orbit.db` and its WAL, right after the import) against the journal it was built from: %s. "+
		"Target at 1M decisions: at most 1.0.\n\n", strings.Join(ratios, ", "))
	if s := e.sqliteImports[e.Large()]; len(s) > 0 {
		fmt.Fprintf(&b, "For comparison, the sqlite3 shell's load of the %s journal (previous section, default page size) peaked at %s.\n",
			SizeLabel(e.Large()), MB(Summarize(s).MedianRSSKB))
	}
	return b.String(), nil
}
