package bench

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/internal/tooltest"
	"github.com/orbit-loop/orbit/loop"
)

// TestLoopsProject checks the loops suite's project: every record reads
// as a loop without a problem, and the stand-ins read the same records.
func TestLoopsProject(t *testing.T) {
	dir := t.TempDir()
	if err := loopsProject(dir, 120); err != nil {
		t.Fatal(err)
	}
	s := frameworks.ScanProject(dir, time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC))
	if len(s.Problems) > 0 || len(s.Loops) != 120 {
		t.Fatalf("scan: %d loops, problems %v; want 120, none", len(s.Loops), s.Problems)
	}
	counts := map[string]int{}
	for _, v := range s.Loops {
		counts[v.Framework]++
		if v.Status == loop.Unknown {
			t.Errorf("%s: unknown status %q", v.Key(), v.NativeStatus)
		}
	}
	if counts["citadel"] != 40 || counts["ccw"] != 39 || counts["conductor"] != 39 || counts["cavekit"] != 1 || counts["orbit"] != 1 {
		t.Errorf("loops per framework %v", counts)
	}
	// The stand-ins the suite times read the same records.
	for _, tool := range []struct{ name, cmd string }{{"jq", loopsJQ}, {"node", "node -e " + shellQuoteArg(loopsNodeList)}} {
		t.Run(tool.name, func(t *testing.T) {
			tooltest.Require(t, tool.name)
			cmd := exec.Command("sh", "-c", tool.cmd)
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v", tool.name, err)
			}
			if n := strings.Count(string(out), "\n"); n != 118 {
				t.Errorf("%s printed %d lines; want 118 (every record file but Cavekit's and ORBIT's)", tool.name, n)
			}
		})
	}
}

func shellQuoteArg(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
