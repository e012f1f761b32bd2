// Package bench owns orbit's benchmark harness: whole-process measurements of
// the real binary side by side with the tools it replaces (the sqlite3 shell,
// jq appending to a file), grouped in named suites that each render one
// markdown section of BENCHMARKS.md.
//
// Everything is measured as a separate process, start to exit, the way a hook
// or a user runs it: process start, opening the index and closing it are part
// of the cost.
package bench
