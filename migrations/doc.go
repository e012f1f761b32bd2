// Package migrations owns the SQL schema of orbit's index: the goose migration
// files and the embedded file system that carries them into the binary.
//
// The index is derived from the journal files, so a schema change never needs
// a data migration: a database whose schema differs from Version can always be
// rebuilt from the files.
package migrations

import "embed"

// FS holds the goose SQL migrations, one file per schema version.
//
//go:embed *.sql
var FS embed.FS

// Version is the schema version this binary expects: the number of the newest
// migration in FS. The db package compares it with PRAGMA user_version so that
// the hook path never runs goose when the schema is current.
const Version = 7
