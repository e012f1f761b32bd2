// Package loop owns the language every loop in a project is described in:
// the shared vocabulary (frameworks, status words, seed 001's stop words and
// their meanings), the normalised View of one loop and the Scan of a
// project, the State of a loop's JSON file (an ordered object edited field
// by field, every other byte kept), and orbit's loop event journal, the
// history that outlives the loops' own files (events.go).
//
// It knows no framework's file layout: the adapters that read and control
// each framework's loops are in package frameworks, Citadel's contracts and
// runner in package citadel, and the ORBIT loop's lifecycle in package
// orbitloop.
package loop
