// Package loop owns the state of running agent loops: the ORBIT loop's state
// file (.claude/ceo-loop-state.json, seed 000), read and updated field by
// field so that every field orbit does not own is preserved exactly.
package loop
