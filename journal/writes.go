package journal

import "sync/atomic"

// writes counts the appends and atomic replacements this process has made
// to the files orbit keeps (attempted ones included: a failed write may
// still have reached the disk).
var writes atomic.Int64

// Writes returns how many writes to the files this process has attempted.
// A command that failed before the count moved changed no file, so it is
// safe to run again.
func Writes() int64 { return writes.Load() }
