package bench

import (
	"bytes"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Sample is one whole-process run, from start to exit.
type Sample struct {
	Wall time.Duration
	// CPU is user plus system time of the process and the children it
	// waited for.
	CPU time.Duration
	// MaxRSSKB is the peak resident set size in KiB (getrusage ru_maxrss).
	// Linux charges a process started from the harness at least the
	// harness's own peak resident size so far (the address space it was
	// cloned from, before exec, is its first), so a value up to ParentRSSKB
	// is an upper bound, not the command's own peak: see PeakRSS.
	MaxRSSKB int64
	// ParentRSSKB is the harness's peak resident size when it started the
	// command (0 if unknown).
	ParentRSSKB int64
	Stdout      []byte
	// IndexBytes is the size on disk of the index an import built (the
	// database and its WAL), 0 when not measured.
	IndexBytes int64
}

// Measure runs cmd to completion and measures it. A non-zero exit is an
// error that quotes the end of stderr.
func Measure(cmd *exec.Cmd) (Sample, error) { return MeasureExit(cmd, 0) }

// MeasureExit is Measure for a command whose exit status up to maxOK is a
// success: grep and rg exit 1 when nothing matched.
func MeasureExit(cmd *exec.Cmd, maxOK int) (Sample, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	parent := selfRSSKB()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Sample{}, fmt.Errorf("start %s: %w", commandName(cmd), err)
	}
	err := cmd.Wait()
	wall := time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 && ee.ExitCode() <= maxOK {
		err = nil
	}
	if err != nil {
		return Sample{}, fmt.Errorf("%s: %w\n%s", commandLine(cmd), err, tail(stderr.String(), 2000))
	}
	s := Sample{Wall: wall, Stdout: stdout.Bytes(), ParentRSSKB: parent}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.MaxRSSKB = ru.Maxrss
		s.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return s, nil
}

func commandName(cmd *exec.Cmd) string {
	if len(cmd.Args) > 0 {
		return cmd.Args[0]
	}
	return cmd.Path
}

// commandLine renders cmd for error messages and reports, shell-quoted.
func commandLine(cmd *exec.Cmd) string {
	q := make([]string, len(cmd.Args))
	for i, a := range cmd.Args {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}

// ShellQuote quotes s for sh when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Stats summarises a series of durations.
type Stats struct {
	N                     int
	Median, P90, Min, Max time.Duration
	MedianCPU             time.Duration
	MedianRSSKB, MaxRSSKB int64
	MinRSSKB              int64
	// ParentRSSKB is the largest ParentRSSKB of the samples.
	ParentRSSKB int64
}

// Summarize computes the statistics of samples.
func Summarize(samples []Sample) Stats {
	if len(samples) == 0 {
		return Stats{}
	}
	walls := make([]time.Duration, len(samples))
	cpus := make([]time.Duration, len(samples))
	rss := make([]int64, len(samples))
	var parent int64
	for i, s := range samples {
		walls[i], cpus[i], rss[i] = s.Wall, s.CPU, s.MaxRSSKB
		parent = max(parent, s.ParentRSSKB)
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	slices.Sort(rss)
	return Stats{
		N:           len(samples),
		Median:      median(walls),
		P90:         walls[nearestRank(len(walls), 0.9)],
		Min:         walls[0],
		Max:         walls[len(walls)-1],
		MedianCPU:   median(cpus),
		MedianRSSKB: median(rss),
		MinRSSKB:    rss[0],
		MaxRSSKB:    rss[len(rss)-1],
		ParentRSSKB: parent,
	}
}

// selfRSSKB is the harness's peak resident size so far, in KiB (VmHWM of
// /proc/self/status), 0 if unknown: what Linux carries into the ru_maxrss
// of a process cloned from the harness, whatever it frees later.
func selfRSSKB() int64 {
	v := procField("/proc/self/status", "VmHWM")
	var kb int64
	if _, err := fmt.Sscanf(v, "%d kB", &kb); err != nil {
		return 0
	}
	return kb
}

// rssSlackKB is how far above the harness's peak a measured peak must be to
// be the command's own: the harness may grow a little between reading its
// peak and starting the command.
const rssSlackKB = 1024

// PeakRSS renders a peak RSS of kb measured when the harness's own peak was
// parentKB: "≤ X" when it cannot be told from the harness's, so that it
// reads as the upper bound it is.
func PeakRSS(kb, parentKB int64) string {
	if parentKB > 0 && kb <= parentKB+rssSlackKB {
		return "≤ " + MB(kb)
	}
	return MB(kb)
}

// rssNote explains the "≤" of PeakRSS when a table holds one.
const rssNote = "A peak RSS marked ≤ is an upper bound: Linux charges a process started from the harness at least the harness's own peak resident size so far (the address space the process is cloned from, before `exec`), so a command that uses less shows the harness's peak."

// median of sorted values: the mean of the middle two for an even count.
func median[T time.Duration | int64](sorted []T) T {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// nearestRank is the index of the p-quantile of n sorted values.
func nearestRank(n int, p float64) int {
	i := int(math.Ceil(p*float64(n))) - 1
	return min(max(i, 0), n-1)
}
