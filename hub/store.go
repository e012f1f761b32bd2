package hub

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/hub/migrations"
	"github.com/orbit-loop/orbit/trust"
)

// Dialects of the hub's store.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// Store is an open hub store.
type Store struct {
	DB *sqlx.DB
	// Dialect is Postgres or SQLite.
	Dialect string
	// Name says which store this is, without a password.
	Name string
	path string // the SQLite file
	// headlines, reports and stale cache each project's trust headline
	// (see Projects), trust reports (see Trust) and stale decisions (see
	// Stale) by their push counters.
	headlines versionCache[trust.Headline]
	reports   versionCache[trust.Report]
	stale     versionCache[staleSet]
}

// Options tune Open.
type Options struct {
	// Conns bounds the PostgreSQL connection pool of this process (default
	// 10). A SQLite store has one connection.
	Conns int
	// NoMigrate leaves the schema as it is.
	NoMigrate bool
}

// ParseSpec splits a --store value: postgres://… (or postgresql://…), or
// sqlite:PATH.
func ParseSpec(spec string) (dialect, target string, err error) {
	switch {
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		if _, err := url.Parse(spec); err != nil {
			return "", "", fmt.Errorf("--store: not a PostgreSQL URL: %v", redactErr(err))
		}
		return Postgres, spec, nil
	case strings.HasPrefix(spec, "sqlite:"):
		p := strings.TrimPrefix(spec, "sqlite:")
		if p == "" {
			return "", "", errors.New("--store sqlite:PATH: the path is empty")
		}
		return SQLite, p, nil
	}
	return "", "", fmt.Errorf("--store %q: want postgres://USER@HOST:PORT/DB or sqlite:PATH", Redact(spec))
}

// Redact hides the password of a store URL.
func Redact(spec string) string {
	u, err := url.Parse(spec)
	if err != nil || u.User == nil {
		return spec
	}
	return u.Redacted()
}

// redactErr keeps a URL parse error from echoing the URL (and its password).
func redactErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Open opens the store named by spec and brings its schema to this binary's
// version. Several hub processes may open one PostgreSQL database at once:
// goose migrates it under an advisory lock.
func Open(ctx context.Context, spec string, opts Options) (*Store, error) {
	dialect, target, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	s := &Store{Dialect: dialect, Name: Redact(spec)}
	switch dialect {
	case Postgres:
		if s.DB, err = sqlx.Open("pgx", target); err != nil {
			return nil, fmt.Errorf("open hub store %s: %w", s.Name, err)
		}
		n := opts.Conns
		if n <= 0 {
			n = 10
		}
		s.DB.SetMaxOpenConns(n)
		s.DB.SetMaxIdleConns(n)
	case SQLite:
		s.path = target
		if s.DB, err = sqlx.Open("sqlite", db.DSN(target, false)); err != nil {
			return nil, fmt.Errorf("open hub store %s: %w", s.Name, err)
		}
		// One connection: every transaction begins IMMEDIATE, so pushes
		// queue rather than fail half-way.
		s.DB.SetMaxOpenConns(1)
		s.DB.SetMaxIdleConns(1)
		s.DB.SetConnMaxIdleTime(0)
	}
	if err := s.DB.PingContext(ctx); err != nil {
		s.DB.Close()
		return nil, fmt.Errorf("open hub store %s: %w", s.Name, err)
	}
	if !opts.NoMigrate {
		if err := s.Migrate(ctx); err != nil {
			s.DB.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close closes the store.
func (s *Store) Close() error { return s.DB.Close() }

// versionTable is goose's table in the hub's database, named so that it
// cannot be mistaken for another tool's in a shared database.
const versionTable = "orbit_hub_version"

// Migrate applies the migrations the store lacks. On PostgreSQL goose holds
// an advisory lock meanwhile; on SQLite an flock beside the file does.
func (s *Store) Migrate(ctx context.Context) error { return s.migrateTo(ctx, migrations.Version) }

// migrateTo applies the migrations up to version.
func (s *Store) migrateTo(ctx context.Context, version int64) error {
	popts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true), goose.WithTableName(versionTable)}
	dialect, fsys := goose.DialectPostgres, migrations.Postgres
	if s.Dialect == SQLite {
		dialect, fsys = goose.DialectSQLite3, migrations.SQLite
		unlock, err := flock.Path(ctx, "", s.path+".lock")
		if err != nil {
			return err
		}
		defer unlock()
	} else {
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return fmt.Errorf("migrate hub store %s: %w", s.Name, err)
		}
		popts = append(popts, goose.WithSessionLocker(locker))
	}
	// Never Close the provider: it would close the store's *sql.DB.
	p, err := goose.NewProvider(dialect, s.DB.DB, fsys, popts...)
	if err != nil {
		return fmt.Errorf("load hub migrations: %w", err)
	}
	v, err := p.GetDBVersion(ctx)
	if err == nil && v > migrations.Version {
		return fmt.Errorf("hub store %s has schema v%d, newer than this binary's v%d: run a newer orbit", s.Name, v, migrations.Version)
	}
	if _, err := p.UpTo(ctx, version); err != nil {
		return fmt.Errorf("migrate hub store %s: %w", s.Name, err)
	}
	return nil
}

// inTx runs fn in one transaction and commits it when fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(*sqlx.Tx) error) error {
	tx, err := s.DB.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("hub store: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("hub store: commit: %w", err)
	}
	return nil
}

// q rewrites a query written with ? placeholders for the store's driver.
func (s *Store) q(query string) string { return s.DB.Rebind(query) }

// forUpdate locks the rows a SELECT reads until the transaction ends (a
// SQLite transaction already holds the database's write lock).
func (s *Store) forUpdate() string {
	if s.Dialect == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// isNoRows reports sql.ErrNoRows.
func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
