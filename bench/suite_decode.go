package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// decoder is one way of decoding journal records, selected at build time
// (journal/decode_records.go).
type decoder struct {
	name, tags string
	env        []string
}

var decoders = []decoder{
	{name: "one-pass (journal/decode.go)"},
	{name: "encoding/json", tags: "orbit_decode_stdlib"},
	{name: "encoding/json/v2", tags: "orbit_decode_jsonv2", env: []string{"GOEXPERIMENT=jsonv2"}},
}

// decodeFiles are the hand-written decoder's files, counted for the report.
var decodeFiles = []string{"journal/decode.go", "journal/decode_records.go"}

// runDecode measures the journal decoder against encoding/json and
// encoding/json/v2 in the same run: orbit built three ways, each importing
// the large journal and running the Stop hook, interleaved; and the
// per-line decoding benchmark of each build.
func runDecode(ctx context.Context, e *Env) (string, error) {
	if e.Root == "" || e.GoTool == "" {
		return "", fmt.Errorf("the decode suite builds orbit: run it with orbit-bench")
	}
	binDir, err := e.Dir("decoders")
	if err != nil {
		return "", err
	}
	n := e.Large()
	hp, err := e.newHookStopProject(1000, time.Now())
	if err != nil {
		return "", err
	}
	journal := JournalPath(hp.dir)
	type variant struct {
		decoder
		bin           string
		size          int64
		import_, hook *contender
		perLine       time.Duration
	}
	var vs []*variant
	var imports, hooks []*contender
	appended := 0
	for i, d := range decoders {
		v := &variant{decoder: d}
		if i == 0 {
			v.bin = e.Orbit
		} else if v.bin, err = BuildVariant(ctx, e.GoTool, e.Root, binDir, fmt.Sprintf("orbit-%d", i), d.tags, d.env...); err != nil {
			return "", err
		}
		fi, err := os.Stat(v.bin)
		if err != nil {
			return "", err
		}
		v.size = fi.Size()
		v.import_ = &contender{name: d.name, run: func(int) (Sample, error) {
			s, _, err := e.ImportWith(v.bin, n, false)
			return s, err
		}}
		// An iteration records decisions before the agent stops: the hook
		// syncs (decodes) two new lines on every run.
		v.hook = &contender{name: d.name, run: hp.run(v.bin, func(int) error {
			appended += 2
			return appendDecisions(journal, appended/2, hp.iter, 2)
		})}
		e.Logf("decode: %s: ParseDecision benchmark", d.name)
		if v.perLine, err = parseDecisionBench(ctx, e, d); err != nil {
			return "", err
		}
		vs = append(vs, v)
		imports = append(imports, v.import_)
		hooks = append(hooks, v.hook)
	}
	e.Logf("decode: %d rounds of %d imports of %s decisions", e.Runs.Import, len(imports), SizeLabel(n))
	for round := range e.Runs.Import {
		for _, c := range imports {
			s, err := c.run(round)
			if err != nil {
				return "", err
			}
			e.Logf("  round %d %s: %s", round+1, c.name, Dur(s.Wall))
			c.samples = append(c.samples, s)
		}
	}
	runs := max(e.Runs.Small, hookStopMinRuns)
	e.Logf("decode: %d rounds of %d Stop hooks", runs, len(hooks))
	if err := rounds(ctx, runs, hooks); err != nil {
		return "", err
	}

	lines := 0
	for _, f := range decodeFiles {
		data, err := os.ReadFile(filepath.Join(e.Root, f))
		if err != nil {
			return "", err
		}
		lines += bytes.Count(data, []byte("\n"))
	}
	hand := vs[0]
	handImport, handHook := Summarize(hand.import_.samples), Summarize(hand.hook.samples)
	t := Table{Header: []string{"decoder", "`orbit import` " + SizeLabel(n) + " (median)", "min", "÷ one-pass",
		"`orbit hook stop` (median)", "p90", "÷ one-pass", "ParseDecision per line", "binary"}}
	for _, v := range vs {
		im, hk := Summarize(v.import_.samples), Summarize(v.hook.samples)
		t.Add(v.name, Dur(im.Median), Dur(im.Min), Ratio(im.Median, handImport.Median), Dur(hk.Median), Dur(hk.P90),
			Ratio(hk.Median, handHook.Median), v.perLine.String(), fmt.Sprintf("%.1f MB", float64(v.size)/1e6))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The journal decoder (`journal/decode.go` and `decode_records.go`, %d lines: one pass, keys matched exactly, errors with their column) against the standard library's, in the same run: orbit built three ways (build tags `orbit_decode_stdlib`, and `orbit_decode_jsonv2` with `GOEXPERIMENT=jsonv2`, select `journal/decode_stdlib.go` or `decode_jsonv2.go`), each "+
		"importing the %s-decision journal into a new project (%d runs each, interleaved) and running the Stop hook on a 1k-decision project with an active loop after two new decisions were appended (what an iteration records; %d rounds, interleaved, after %d untimed). "+
		"ParseDecision per line is `go test ./journal -bench '^BenchmarkParseDecision$' -count 5` (median) under each build's tags.\n\n",
		lines, SizeLabel(n), e.Runs.Import, runs, warmups)
	b.WriteString(t.String())
	b.WriteString("\n")
	for _, v := range vs[1:] {
		im := Summarize(v.import_.samples)
		fmt.Fprintf(&b, "- With %s, the import takes %s more (%s); the Stop hook %s.\n", v.name, Dur(im.Median-handImport.Median),
			percent(im.Median, handImport.Median), hookDelta(Summarize(v.hook.samples).Median, handHook.Median))
	}
	b.WriteString("\nCommands:\n\n```sh\n")
	fmt.Fprintf(&b, "orbit import decisions-%s.jsonl      # in a new project, each build\norbit hook stop < input.json          # each build, two decisions appended before each run\n", SizeLabel(n))
	b.WriteString("go build -tags orbit_decode_stdlib ./cmd/orbit\nGOEXPERIMENT=jsonv2 go build -tags orbit_decode_jsonv2 ./cmd/orbit\n```\n")
	return b.String(), nil
}

func percent(a, b time.Duration) string {
	return fmt.Sprintf("%+.0f%%", 100*(float64(a)/float64(b)-1))
}

func hookDelta(a, b time.Duration) string {
	d := a - b
	if d < 0 {
		return fmt.Sprintf("takes %s less", Dur(-d))
	}
	return fmt.Sprintf("takes %s more", Dur(d))
}

// appendDecisions appends n valid decisions of iteration it to journal,
// their ids unique by run.
func appendDecisions(journal string, run, it, n int) error {
	f, err := os.OpenFile(journal, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"id":"bench-%d-%d","iteration":%d,"ts":"2026-03-08T10:%02d:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"Add ESLint rule eqeqeq (bench %d)","decision":"APPROVED","reason":"Auto-approved: low impact and reversible.","next_action":"","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"}}`+"\n",
			run, i, it, i%60, run)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var nsPerOp = regexp.MustCompile(`(?m)^BenchmarkParseDecision\S*\s+\d+\s+([\d.]+) ns/op`)

// parseDecisionBench runs the journal's ParseDecision benchmark under d's
// build and returns its median time per line.
func parseDecisionBench(ctx context.Context, e *Env, d decoder) (time.Duration, error) {
	args := []string{"test", "-run", "^$", "-bench", "^BenchmarkParseDecision$", "-count", "5"}
	if d.tags != "" {
		args = append(args, "-tags", d.tags)
	}
	cmd := exec.CommandContext(ctx, e.GoTool, append(args, "./journal")...)
	cmd.Dir = e.Root
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), d.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%s benchmark: %w\n%s", d.name, err, out)
	}
	var ns []float64
	for _, m := range nsPerOp.FindAllSubmatch(out, -1) {
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			return 0, err
		}
		ns = append(ns, v)
	}
	if len(ns) == 0 {
		return 0, fmt.Errorf("%s benchmark printed no result:\n%s", d.name, out)
	}
	slices.Sort(ns)
	return time.Duration(ns[len(ns)/2]).Round(10 * time.Nanosecond), nil
}
