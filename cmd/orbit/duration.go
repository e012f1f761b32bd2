package main

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/orbit-loop/orbit/journal"
)

// durationPart is one number and unit of a duration: Go's units, and d
// (day, 24h) and w (week, 7d).
var durationPart = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h|d|w)`)

// parseDuration reads a duration as Go does ("72h", "1h30m") and in days
// and weeks ("7d", "2w", "1d12h").
func parseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total time.Duration
	for rest := s; rest != ""; {
		m := durationPart.FindStringSubmatch(rest)
		if m == nil {
			return 0, fmt.Errorf("%q is not a duration (e.g. 90m, 24h, 7d, 2w)", s)
		}
		n, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (e.g. 90m, 24h, 7d, 2w)", s)
		}
		unit := map[string]time.Duration{"ns": time.Nanosecond, "us": time.Microsecond, "µs": time.Microsecond, "ms": time.Millisecond,
			"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
		total += time.Duration(n * float64(unit))
		rest = rest[len(m[0]):]
	}
	return total, nil
}

// durationFlag is a flag taking parseDuration's forms.
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil || *f.d == 0 {
		return ""
	}
	return f.d.String()
}
func (f durationFlag) Type() string { return "duration" }
func (f durationFlag) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*f.d = d
	return nil
}

// count is "1 decision", "2 decisions": a number with its noun agreeing.
func count[N int | int64](n N, one, many string) string {
	return fmt.Sprintf("%d %s", n, journal.Plural(int(n), one, many))
}
