// Package loop owns the state of running agent loops: the ORBIT loop's state
// file (.claude/ceo-loop-state.json, seed 000), read and updated field by
// field so that every field orbit does not own is preserved exactly.
//
// It also owns the loops of the other frameworks in a project, read in place
// as one View each with its status in seed 001's shared vocabulary (Citadel's
// contract records and daemon, CCW, Cavekit, Conductor tracks: view.go and
// one file per framework), their control in their own formats (control.go),
// Citadel's loop contract and templates (citadel.go, templates.go), the
// foreground runner (runner.go), and orbit's loop event journal, the history
// that outlives the loops' own files (events.go).
package loop
