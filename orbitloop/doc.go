// Package orbitloop owns the ORBIT loop's lifecycle (seed 000's CEO loop,
// orbit's own): starting and stopping it — the one stop path the CLI, the
// HTTP API and the Stop hook all go through — its session lock, its row in
// the unified loop view, and the progress file a stop leaves.
//
// The state file's typed fields are read through package ceo, which keeps
// them in step with each decision; this package writes the lifecycle's
// fields (active, iteration, stop_reason, ...) into it.
package orbitloop
