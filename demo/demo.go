// Package demo owns orbit's sample data: a realistic decision journal in
// seed 000's format (generated once by package synth and committed, so that
// anyone can read it), an agent-written journal with the faults real ones
// have, and outcomes recorded on their own, all embedded in the binary for
// `orbit demo`.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/synth"
)

// Sample files, embedded.
const (
	// JournalFile is a loop's journal of SampleDecisions decisions.
	JournalFile = "sample/decisions.jsonl"
	// AgentFile is a journal written by hand by an agent: a pretty-printed
	// record, a placeholder ts, unknown enum values, a wrong type, a
	// duplicate id, a torn line and CRLF line ends.
	AgentFile = "sample/agent-written.jsonl"
	// RetroFile holds outcomes recorded on their own, one of them
	// correcting an earlier verdict.
	RetroFile = "sample/retrograde.jsonl"
	// QueueFile is a pending queue: seed 000's worked example (two trivial
	// items and "SQLite vs Postgres for state storage").
	QueueFile = "sample/ceo-decisions-pending.json"
	// StateFile is the loop's state at iteration 28, with counters that
	// orbit brings in step with the outcomes.
	StateFile = "sample/ceo-loop-state.json"
)

// SampleOptions generate JournalFile.
var SampleOptions = synth.Options{Decisions: 320, Seed: 7, PerIteration: 12, OutcomeRate: 0.45, Skill: 0.9}

//go:embed sample
var files embed.FS

// Read returns an embedded sample file.
func Read(name string) ([]byte, error) { return files.ReadFile(name) }

// WriteSamples copies the sample files into dir and returns their paths by
// name.
func WriteSamples(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := fs.WalkDir(files, "sample", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.Base(path))
		f, err := project.OpenFile(dir, dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return fmt.Errorf("write sample: %w", err)
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write sample: %w", err)
		}
		out[path] = dst
		return nil
	})
	return out, err
}
