// Package knowledge owns conductor's knowledge layer (seed 004): the error
// registry conductor/knowledge/errors.json and the pattern library
// conductor/knowledge/patterns.md, read in every shape found in the wild,
// indexed by the one sync path, matched against an error text (RE2 regexes
// first, then full text), kept honest by counting matches and writing the
// counts back; and the autonomous_decisions of conductor's tracks, brought
// into the decision journal.
//
// The files stay the truth. errors.json and patterns.md are re-read whole
// when their size, mtime or inode change; what orbit itself learns (a match,
// an export, a registered directory) is appended to its own knowledge
// journal, .claude/orbit-knowledge.jsonl, so that deleting the index loses
// nothing. errors.json is the one file orbit rewrites (`Add`, `Export`):
// seed 004 treats it as a registry, not a journal. The rewrite is atomic,
// leaves a backup beside it, and changes only the bytes it must.
package knowledge

import "github.com/orbit-loop/orbit/journal"

// Problem is a remark about a stretch of a knowledge file, located by line.
type Problem = journal.Problem

// Severities.
const (
	SevError   = journal.SevError
	SevWarning = journal.SevWarning
)
