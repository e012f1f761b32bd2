// Package migrations owns the schema of orbit's hub (`orbit serve --store`):
// goose SQL files in the PostgreSQL dialect (postgres/) and the SQLite one
// (sqlite/), and the embedded file systems that carry them into the binary.
// It is separate from the project index's migrations: a hub keys every row
// by project, a project's index knows one.
//
// Like the project index, the hub is derived from the journals on the
// machines that push to it, so a schema change never needs a data migration
// (migration 3 only renames a kind in place: 'loops' became the follower's
// 'loop-events').
package migrations

import (
	"embed"
	"io/fs"
)

//go:embed postgres/*.sql sqlite/*.sql
var files embed.FS

// Postgres and SQLite hold the migrations of each dialect, one file per
// schema version, at their root (as goose reads them).
var (
	Postgres = sub("postgres")
	SQLite   = sub("sqlite")
)

func sub(dir string) fs.FS {
	f, err := fs.Sub(files, dir)
	if err != nil {
		panic(err)
	}
	return f
}

// Version is the schema version this binary expects: the newest migration of
// each dialect.
const Version = 6
