// Package frameworks owns the adapters between orbit and the loop
// frameworks a project runs: one file per framework (Citadel's contract
// records and daemon, CCW, Cavekit, Conductor) reads that framework's
// files in place, leniently, as loop.Views in the shared vocabulary, and
// stops, pauses or resumes its loops in the framework's own format
// (control.go), each write atomic under the file's lock and recorded in
// orbit's loop event journal.
//
// ScanProject lists every framework's loops, the ORBIT loop's included
// (its row comes from package orbitloop), and Control stops any of them:
// the ORBIT loop through orbitloop's one stop path.
package frameworks
