// Package db owns orbit's SQLite index: opening it with the right pragmas,
// bringing its schema to the binary's version through the embedded goose
// migrations (only when the version differs), and the typed queries that read
// and write it.
//
// The index is derived from the journal files. Nothing in this package decides
// what a record means; the journal package feeds it and the feature packages
// read it.
package db
