package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/synth"
)

// JournalSeed is the seed of every synthetic journal, so that each size is
// the same journal from one run to the next (and smaller ones are prefixes of
// larger ones).
const JournalSeed = 20260308

// ParseSize reads a decision count: 1000, 1k, 100k, 1M.
func ParseSize(s string) (int, error) {
	s = strings.TrimSpace(s)
	mult := 1
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1000, s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mult, s = 1000000, s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("size %q: want a positive count such as 1000, 10k or 1M", s)
	}
	return n * mult, nil
}

// SizeLabel writes n the way ParseSize reads it: 1k, 100k, 1M.
func SizeLabel(n int) string {
	switch {
	case n%1000000 == 0:
		return fmt.Sprintf("%dM", n/1000000)
	case n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	default:
		return strconv.Itoa(n)
	}
}

// Journal returns the path of a synthetic journal of n decisions in dir,
// generating it unless a complete one is already there.
func Journal(dir string, n int) (string, error) {
	path := filepath.Join(dir, fmt.Sprintf("decisions-%s-seed%d.jsonl", SizeLabel(n), JournalSeed))
	if lines, err := countLines(path); err == nil && lines == n {
		return path, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return "", err
	}
	if err := synth.Generate(f, synth.Options{Decisions: n, Seed: JournalSeed}); err != nil {
		f.Close()
		return "", fmt.Errorf("generate %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	buf := make([]byte, 1<<20)
	n := 0
	for {
		k, err := r.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// DecisionLine is one valid seed-format decision line (with its newline)
// whose id is id.
func DecisionLine(id string, iteration int64) []byte {
	conf := 0.9
	d := journal.Decision{
		ID:           id,
		Iteration:    iteration,
		TS:           "2026-11-29T12:00:00Z",
		Tier:         "auto_approve",
		Depth:        "trivial",
		Category:     "quality",
		Input:        "Add ESLint rule eqeqeq",
		Decision:     "APPROVED",
		Reason:       "Auto-approved: low impact and reversible (impact x reversibility matrix).",
		Verification: "PENDING",
		Retrograde:   journal.Retrograde{Outcome: journal.OutcomeNA},
		Confidence:   &conf,
	}
	line, err := json.Marshal(d)
	if err != nil {
		panic(err) // a fixed struct always marshals
	}
	return append(line, '\n')
}

// AppendLine appends line to path with one O_APPEND write, as hooks do.
func AppendLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("append %s: %w", path, err)
	}
	return f.Close()
}
