//go:build reliability

package reliability

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzTargets are the fuzz targets `make reliability` runs, each for
// -fuzzfor. A crasher go test finds is written to the package's
// testdata/fuzz/<target>/ and from then on runs with every `go test`: a
// regression case kept.
var fuzzTargets = []struct{ pkg, name, covers string }{
	{"journal", "FuzzReadRecords", "the JSONL reader: lines, torn tails, multi-line records tile the input exactly"},
	{"journal", "FuzzDecodeMatchesEncodingJSON", "the JSONL record decoder accepts, rejects and decodes as encoding/json does"},
	{"queue", "FuzzRead", "the queue parser: a *queue.Error naming the file, or valid requests that survive a rewrite"},
	{"precedent", "FuzzSearch", "the precedent query builder: any text is a valid FTS5 query, the index untouched"},
	{"hook", "FuzzParseInput", "the stop-hook input parser"},
}

var fuzzStatus = regexp.MustCompile(`fuzz: elapsed: \S+, execs: (\d+) .*total: (\d+)\)`)

// fuzzTargetsRun runs each fuzz target for a fixed time.
func fuzzTargetsRun(t *testing.T) {
	r := newRow(t, "6", "Fuzzing",
		"`go test -fuzz` on the JSONL reader and record decoder, the queue parser, the precedent query builder and the stop-hook input parser")
	var execs int64
	ran, crashers := 0, 0
	for _, ft := range fuzzTargets {
		t.Run(ft.name, func(t *testing.T) {
			fr := fuzzRow{Target: ft.name, Package: ft.pkg, Covers: ft.covers}
			defer func() {
				results.Lock()
				results.fuzz = append(results.fuzz, fr)
				results.Unlock()
			}()
			if !declares(filepath.Join(moduleRoot, ft.pkg), "func "+ft.name+"(") {
				fr.Missing = true
				r.note("%s is not in %s/ yet: not run", ft.name, ft.pkg)
				t.Skipf("%s is not in %s/", ft.name, ft.pkg)
			}
			corpus := filepath.Join(moduleRoot, ft.pkg, "testdata", "fuzz", ft.name)
			kept := countFiles(corpus)
			ctx, cancel := context.WithTimeout(context.Background(), *fuzzFlag+10*time.Minute)
			defer cancel()
			start := time.Now()
			cmd := exec.CommandContext(ctx, goTool(), "test", "./"+ft.pkg, "-run", "^$", "-fuzz", "^"+ft.name+"$",
				"-fuzztime", fuzzFlag.String())
			cmd.Dir = moduleRoot
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			out, err := cmd.CombinedOutput()
			fr.Time = time.Since(start)
			ran++
			var n int64
			if m := fuzzStatus.FindAllSubmatch(out, -1); m != nil {
				last := m[len(m)-1]
				n, _ = strconv.ParseInt(string(last[1]), 10, 64)
				fr.Execs = string(last[1])
				fr.Corpus = string(last[2])
			}
			execs += n
			fr.Crashers = countFiles(corpus) - kept
			switch {
			case err != nil && bytes.Contains(out, []byte("[build failed]")):
				// Not a finding of the fuzzer: the package does not compile.
				fr.Failure = "did not run: " + failureOf(out)
				r.fail(t, "%s did not run: the package does not build\n%s", ft.name, excerpt(string(out), 1000))
			case err != nil:
				crashers += max(fr.Crashers, 1)
				fr.Failure = failureOf(out)
				r.fail(t, "%s: %v\n%s", ft.name, err, excerpt(string(out), 3000))
			}
		})
	}
	r.Times = fmt.Sprintf("%d targets x %s, %d execs", ran, *fuzzFlag, execs)
	r.Kept = "failing inputs (the lost column) are written to `<package>/testdata/fuzz/<target>/` and run by every `go test` from then on"
	r.Lost = crashers
}

// declares reports whether a _test.go file in dir contains s.
func declares(dir, s string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

func countFiles(dir string) int {
	es, _ := os.ReadDir(dir)
	return len(es)
}

// failureOf keeps the lines of a fuzz run that say what failed.
func failureOf(out []byte) string {
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "Failing input written to") || strings.Contains(l, "--- FAIL") || strings.Contains(l, "_test.go:") ||
			strings.Contains(l, ".go:") && strings.Contains(l, "error") {
			keep = append(keep, strings.TrimSpace(l))
		}
	}
	if len(keep) == 0 {
		return excerpt(string(out), 300)
	}
	return strings.Join(keep, " ")
}
