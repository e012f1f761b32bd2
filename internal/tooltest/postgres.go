package tooltest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// PostgresEnv names the variable that points tests at a PostgreSQL server
// (a URL whose user may create databases). When it is unset, tests use
// DefaultPostgres: the server CI runs on its own machine.
const PostgresEnv = "ORBIT_TEST_POSTGRES"

// DefaultPostgres is the server tests use when PostgresEnv is unset.
const DefaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var pg struct {
	once sync.Once
	url  string
	db   *sql.DB
	err  error
}

// Postgres returns the URL of a new, empty database on the test server,
// dropped when the test ends, so tests never share state. When no server
// answers, the test is skipped, saying so, or failed under
// ORBIT_REQUIRE_TOOLS=1 (CI runs PostgreSQL).
func Postgres(tb testing.TB) string {
	tb.Helper()
	pg.once.Do(func() {
		pg.url = os.Getenv(PostgresEnv)
		if pg.url == "" {
			pg.url = DefaultPostgres
		}
		pg.db, pg.err = sql.Open("pgx", pg.url)
		if pg.err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			pg.err = pg.db.PingContext(ctx)
		}
	})
	if pg.err != nil {
		why := fmt.Sprintf("PostgreSQL does not answer at %s (%v); set %s to a server's URL", redact(pg.url), pg.err, PostgresEnv)
		if os.Getenv("ORBIT_REQUIRE_TOOLS") == "1" {
			tb.Fatalf("%s; ORBIT_REQUIRE_TOOLS=1 says it must (CI runs it)", why)
		}
		skip(tb, why+"; ORBIT_REQUIRE_TOOLS=1 makes this a failure")
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "orbit_test_" + hex.EncodeToString(b)
	ctx := context.Background()
	if _, err := pg.db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create test database on %s: %v", redact(pg.url), err)
	}
	tb.Cleanup(func() {
		if _, err := pg.db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(pg.url)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}

// SkipLogEnv names a file each skipped test appends a line to (the test's
// name and why), so that `make test` can say what it skipped: `go test`
// shows a passing package's skips only with -v.
const SkipLogEnv = "ORBIT_SKIPLOG"

// skip skips tb, logging why to the SkipLogEnv file when set.
func skip(tb testing.TB, why string) {
	tb.Helper()
	if path := os.Getenv(SkipLogEnv); path != "" {
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			// One write per line: concurrent test processes never interleave.
			f.WriteString(tb.Name() + "\t" + strings.ReplaceAll(why, "\n", " ") + "\n")
			f.Close()
		}
	}
	tb.Skip(why)
}
