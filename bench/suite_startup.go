package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// runStartup measures what every orbit process pays before its command
// runs: the binary's size, the package initialisation (GODEBUG=inittrace=1)
// and the whole-process time of the Stop hook with no input (the floor of
// any hook) and on a project with an active loop; beside orbit as built at
// e.Baseline when set (orbit-bench -baseline REV), interleaved.
func runStartup(ctx context.Context, e *Env) (string, error) {
	type build struct {
		label, bin string
		size       int64
		inits      []initRun
		floor      *contender
		hook       *contender
	}
	builds := []*build{{label: "this tree", bin: e.Orbit}}
	if e.Baseline != "" {
		dir, err := e.Dir("baseline")
		if err != nil {
			return "", err
		}
		e.Logf("startup: building orbit at %s", e.Baseline)
		bin, err := BuildAt(ctx, e.GoTool, e.Root, dir, "orbit", e.Baseline)
		if err != nil {
			return "", err
		}
		builds = []*build{{label: "at " + e.Baseline, bin: bin}, builds[0]}
	}
	empty, err := e.Dir("startup-empty")
	if err != nil {
		return "", err
	}
	hp, err := e.newHookStopProject(1000, time.Now())
	if err != nil {
		return "", err
	}
	var cs []*contender
	for _, b := range builds {
		fi, err := os.Stat(b.bin)
		if err != nil {
			return "", err
		}
		b.size = fi.Size()
		b.floor = &contender{name: b.label, run: func(int) (Sample, error) {
			cmd := e.Command(empty, b.bin, "hook", "stop")
			cmd.Stdin = strings.NewReader("")
			return Measure(cmd)
		}}
		b.hook = &contender{name: b.label, run: hp.run(b.bin, nil)}
		cs = append(cs, b.floor, b.hook)
	}
	runs := max(e.Runs.Small, hookStopMinRuns)
	e.Logf("startup: %d rounds of %d commands, then %d traced starts of each build", runs, len(cs), runs)
	if err := rounds(ctx, runs, cs); err != nil {
		return "", err
	}
	for range runs {
		for _, b := range builds {
			r, err := traceInit(e, b.bin, empty)
			if err != nil {
				return "", err
			}
			b.inits = append(b.inits, r)
		}
	}

	t := Table{Header: []string{"orbit", "binary", "init (median)", "init (min)", "init allocates", "packages initialised",
		"`hook stop < /dev/null` (median)", "p90", "`hook stop`, 1k project (median)", "p90"}}
	for _, b := range builds {
		clocks := make([]time.Duration, len(b.inits))
		for i, r := range b.inits {
			clocks[i] = r.clock
		}
		slices.Sort(clocks)
		last := b.inits[len(b.inits)-1]
		fl, hk := Summarize(b.floor.samples), Summarize(b.hook.samples)
		t.Add(b.label, fmt.Sprintf("%.1f MB", float64(b.size)/1e6), Dur(clocks[len(clocks)/2]), Dur(clocks[0]),
			fmt.Sprintf("%d KB", last.bytes>>10), strconv.Itoa(len(last.pkgs)), Dur(fl.Median), Dur(fl.P90), Dur(hk.Median), Dur(hk.P90))
	}
	cur := builds[len(builds)-1]
	top := Table{Header: []string{"package", "init (median of its runs)", "allocates"}}
	for _, p := range topInits(cur.inits, 10) {
		top.Add("`"+p.name+"`", Dur(p.clock), fmt.Sprintf("%d B", p.bytes))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "What every orbit process pays before its command runs, hooks included: the size of the binary (built with `CGO_ENABLED=0`), its package initialisation as `GODEBUG=inittrace=1` reports it (the sum over the packages of each start's init clock; %d starts of each build after the timed runs), and the whole-process time of the Stop hook with no input (it finds no project and exits: the floor of any hook) and on a 1k-decision project whose loop is active (as in the Stop hook section). %d rounds, the commands interleaved, after %d untimed.", runs, runs, warmups)
	if e.Baseline != "" {
		fmt.Fprintf(&b, " Beside orbit as built at `%s` (`-baseline %s`).", e.Baseline, e.Baseline)
	}
	b.WriteString("\n\n")
	b.WriteString(t.String())
	b.WriteString("\nThe packages whose initialisation takes longest in this tree's build:\n\n")
	b.WriteString(top.String())
	b.WriteString("\nCommands (the second in an empty directory):\n\n```sh\nGODEBUG=inittrace=1 orbit hook stop < /dev/null\norbit hook stop < /dev/null\norbit hook stop < input.json\n```\n")
	return b.String(), nil
}

// initRun is one start's package initialisation.
type initRun struct {
	clock time.Duration
	bytes int
	pkgs  []pkgInit
}

type pkgInit struct {
	name  string
	clock time.Duration
	bytes int
}

// traceInit runs `bin hook stop` with no input and GODEBUG=inittrace=1 in
// dir and sums what each package's initialisation took.
func traceInit(e *Env, bin, dir string) (initRun, error) {
	cmd := e.Command(dir, bin, "hook", "stop")
	cmd.Env = append(cmd.Env, "GODEBUG=inittrace=1")
	cmd.Stdin = strings.NewReader("")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return initRun{}, fmt.Errorf("%s hook stop: %w\n%s", bin, err, tail(stderr.String(), 2000))
	}
	var r initRun
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init PKG @T ms, T ms clock, N bytes, N allocs
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != "init" || f[6] != "clock," || f[8] != "bytes," {
			continue
		}
		ms, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			return r, fmt.Errorf("inittrace %q: %w", sc.Text(), err)
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			return r, fmt.Errorf("inittrace %q: %w", sc.Text(), err)
		}
		p := pkgInit{name: f[1], clock: time.Duration(ms * float64(time.Millisecond)), bytes: n}
		r.pkgs = append(r.pkgs, p)
		r.clock += p.clock
		r.bytes += n
	}
	if len(r.pkgs) == 0 {
		return r, fmt.Errorf("%s printed no inittrace lines", bin)
	}
	return r, nil
}

// topInits are the n packages with the longest median initialisation.
func topInits(runs []initRun, n int) []pkgInit {
	clocks := map[string][]time.Duration{}
	bytesOf := map[string]int{}
	for _, r := range runs {
		for _, p := range r.pkgs {
			clocks[p.name] = append(clocks[p.name], p.clock)
			bytesOf[p.name] = p.bytes
		}
	}
	var out []pkgInit
	for name, cs := range clocks {
		slices.Sort(cs)
		out = append(out, pkgInit{name: name, clock: cs[len(cs)/2], bytes: bytesOf[name]})
	}
	slices.SortFunc(out, func(a, b pkgInit) int {
		if a.clock != b.clock {
			return int(b.clock - a.clock)
		}
		return strings.Compare(a.name, b.name)
	})
	return out[:min(n, len(out))]
}
