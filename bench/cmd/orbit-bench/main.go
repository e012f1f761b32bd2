// Command orbit-bench measures the orbit binary side by side with the tools
// it replaces and writes BENCHMARKS.md.
//
//	go run ./bench/cmd/orbit-bench -out BENCHMARKS.md         # every suite (make bench)
//	go run ./bench/cmd/orbit-bench -only import,memory        # some suites, to stdout
//	go run ./bench/cmd/orbit-bench -quick                     # 1k/10k journals: a smoke test
//
// With -out naming an existing file and -only, only the sections of the
// suites run are replaced.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/bench"
)

const defaultSizes = "1k,100k,1M"

type options struct {
	out        string
	only       []string
	sizes      []int
	sizesFlag  string
	quick      bool
	runs       bench.Runs
	cache      string
	keep       bool
	suites     []bench.Suite
	reproduce  string
	goTool     string
	moduleRoot string
	baseline   string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "orbit-bench:", err)
		os.Exit(2)
	}
	if err := run(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "orbit-bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("orbit-bench", flag.ContinueOnError)
	o := &options{}
	var only string
	fs.StringVar(&o.out, "out", "", "write the report to this markdown file (default: stdout); with -only, replace only those sections")
	fs.StringVar(&only, "only", "", "comma-separated suites to run: "+suiteNames())
	fs.StringVar(&o.sizesFlag, "sizes", defaultSizes, "journal sizes in decisions, e.g. 1k,100k,1M: the largest is measured, the smallest is the baseline")
	fs.BoolVar(&o.quick, "quick", false, "smoke test: sizes 1k,10k and few repetitions")
	fs.IntVar(&o.runs.Import, "import-runs", 3, "timed runs of each import")
	fs.IntVar(&o.runs.Small, "runs", 30, "timed runs of each fast command (sync, decide, jq)")
	fs.StringVar(&o.cache, "cache", "testdata/bench", "directory of the cached synthetic journals")
	fs.BoolVar(&o.keep, "keep", false, "keep the scratch directory (projects, indexes) for inspection")
	fs.StringVar(&o.baseline, "baseline", "", "a git revision of orbit to build and measure beside this tree (startup suite): before and after a change")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.quick {
		if !set["sizes"] {
			o.sizesFlag = "1k,10k"
		}
		if !set["runs"] {
			o.runs.Small = 10
		}
		if !set["import-runs"] {
			o.runs.Import = 2
		}
	}
	for _, s := range strings.Split(o.sizesFlag, ",") {
		n, err := bench.ParseSize(s)
		if err != nil {
			return nil, err
		}
		o.sizes = append(o.sizes, n)
	}
	if o.runs.Import < 1 || o.runs.Small < 1 {
		return nil, errors.New("-runs and -import-runs must be at least 1")
	}
	o.suites = bench.Suites
	if only != "" {
		o.suites = nil
		for _, name := range strings.Split(only, ",") {
			i := slices.IndexFunc(bench.Suites, func(s bench.Suite) bool { return s.Name == strings.TrimSpace(name) })
			if i < 0 {
				return nil, fmt.Errorf("-only %q: no such suite (have %s)", name, suiteNames())
			}
			o.suites = append(o.suites, bench.Suites[i])
		}
	}
	o.reproduce = "go run ./bench/cmd/orbit-bench"
	if o.quick {
		o.reproduce += " -quick"
	}
	if set["sizes"] {
		o.reproduce += " -sizes " + o.sizesFlag
	}
	if o.baseline != "" {
		o.reproduce += " -baseline " + o.baseline
	}
	if o.out != "" {
		o.reproduce += " -out " + o.out
	}
	return o, nil
}

func suiteNames() string {
	names := make([]string, len(bench.Suites))
	for i, s := range bench.Suites {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

func run(ctx context.Context, o *options) error {
	var err error
	if o.goTool, err = exec.LookPath("go"); err != nil {
		return fmt.Errorf("the go tool is needed to build orbit: %w", err)
	}
	if o.moduleRoot, err = moduleRoot(); err != nil {
		return err
	}
	for _, tool := range []struct{ name, pkg string }{{"sqlite3", "sqlite3"}, {"jq", "jq"}, {"grep", "grep"}, {"rg", "ripgrep"}} {
		if _, err := exec.LookPath(tool.name); err != nil {
			fmt.Fprintf(os.Stderr, "orbit-bench: %s not found: its comparison is skipped (install it with `apt-get install %s`, Debian package %s)\n", tool.name, tool.pkg, tool.pkg)
		}
	}

	binDir, err := os.MkdirTemp("", "orbit-bench-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(binDir)
	fmt.Fprintln(os.Stderr, "orbit-bench: building orbit with CGO_ENABLED=0")
	bin, err := bench.Build(ctx, o.goTool, o.moduleRoot, binDir)
	if err != nil {
		return err
	}

	env, err := bench.NewEnv(bin, o.cache, o.sizes, o.runs, os.Stderr)
	if err != nil {
		return err
	}
	env.Reproduce = o.reproduce
	env.Baseline = o.baseline
	env.GoTool, env.Root = o.goTool, o.moduleRoot
	if o.keep {
		fmt.Fprintf(os.Stderr, "orbit-bench: scratch directory %s is kept\n", env.Work)
	} else {
		defer env.Close()
	}
	machine := bench.DescribeMachine(ctx, o.moduleRoot, o.goTool, env.SQLite3, env.JQ)

	start := time.Now()
	var blocks []bench.Block
	for _, s := range o.suites {
		b, err := s.Section(ctx, env)
		if err != nil {
			return err
		}
		blocks = append(blocks, b)
	}
	intro := bench.Block{Name: "intro", Text: introText(o, env, machine, time.Since(start))}
	blocks = append([]bench.Block{intro}, blocks...)
	return write(o, blocks)
}

// moduleRoot finds the directory of orbit's go.mod from the working
// directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/orbit-loop/orbit\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run orbit-bench inside the orbit module (no go.mod of github.com/orbit-loop/orbit here or above)")
		}
		dir = parent
	}
}

func introText(o *options, env *bench.Env, m bench.Machine, took time.Duration) string {
	var b strings.Builder
	b.WriteString(`# Benchmarks

orbit measured as a user and a hook run it: every figure is the wall time of a whole process, from start
to exit, of the real binary (built with ` + "`CGO_ENABLED=0`" + `, as it ships), side by side with the tool it
replaces, on synthetic journals in seed 000's format (` + "`synth.Generate`" + `, fixed seed, about 30% of the lines
carrying a retrograde verdict on an earlier decision). Medians, with min and max over the runs; a ratio is
orbit's median over the other's.

Reproduce every section with ` + "`make bench`" + `, one section with
` + "`go run ./bench/cmd/orbit-bench -only NAME -out BENCHMARKS.md`" + ` (suites: ` + suiteNames() + `), other sizes with
` + "`-sizes 1k,100k,1M`" + ` (the largest is measured, the smallest is the baseline), and a fast smoke test of the
harness with ` + "`-quick`" + ` (1k and 10k decisions). The journals are cached in ` + "`testdata/bench/`" + ` (not committed).

Machine:

`)
	b.WriteString(m.Markdown())
	names := make([]string, len(o.suites))
	for i, s := range o.suites {
		names[i] = s.Name
	}
	fmt.Fprintf(&b, "- Load average when the run ended: %s; the run (suites %s, sizes %s) took %s\n",
		bench.LoadAvg(), strings.Join(names, ", "), o.sizesFlag, took.Round(time.Second))
	fmt.Fprintf(&b, "\nWhole-process timings on a busy machine are noisy: compare the ratios (taken from interleaved runs) rather than the absolute times.\n")
	return b.String()
}

func write(o *options, blocks []bench.Block) error {
	if o.out == "" {
		_, err := io.WriteString(os.Stdout, bench.Render(blocks))
		return err
	}
	doc := bench.Render(blocks)
	if len(o.suites) < len(bench.Suites) {
		if old, err := os.ReadFile(o.out); err == nil {
			doc = bench.Splice(string(old), blocks)
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	tmp := o.out + ".tmp"
	if err := os.WriteFile(tmp, []byte(doc), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, o.out); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "orbit-bench: wrote %s\n", o.out)
	return nil
}
