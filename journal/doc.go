// Package journal owns orbit's authoritative files and the one path from them
// into the index: the record types and their validation, the JSONL reader that
// names every problem by file:line, the locked appender that never rewrites a
// past byte, the incremental syncer, and the exporters.
//
// The files are the truth. The SQLite index (package db) is derived from them
// by Sync alone, and can be deleted and rebuilt at any time with identical
// answers.
package journal
