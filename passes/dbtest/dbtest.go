// Package dbtest opens the real databases that the tests of package passes (and of
// everything above it) run against: a PostgreSQL server named by TEST_DATABASE_URL and
// an embedded SQLite database. Nothing is mocked: a test that needs a table creates it.
//
// Locally, an unreachable PostgreSQL skips the test with a loud message on stderr, so a
// contributor without a server can still run the rest. Under CI=true it fails the test,
// so a CI run can never pass by skipping the database.
package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/driver/postgres"
)

// DefaultPostgresURL is used when TEST_DATABASE_URL is unset.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// PostgresURL returns the DSN the PostgreSQL tests connect to.
func PostgresURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultPostgresURL
}

// Postgres returns a bun database on the test server, closed when the test ends. It
// skips (locally) or fails (under CI=true) when the server does not answer.
func Postgres(t testing.TB) *bun.DB {
	t.Helper()
	sqldb := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(PostgresURL())))
	db := bun.NewDB(sqldb, pgdialect.New())
	t.Cleanup(func() { _ = db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		unreachable(t, err)
	}
	return db
}

func unreachable(t testing.TB, err error) {
	t.Helper()
	msg := fmt.Sprintf("PostgreSQL at %s is unreachable: %v", postgres.Driver{}.RedactDSN(PostgresURL()), err)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: the PostgreSQL tests must run)", msg)
	}
	fmt.Fprintf(os.Stderr, "\n!!! SKIPPING PostgreSQL test %s: %s\n!!! Start a server or set TEST_DATABASE_URL; CI fails here.\n\n", t.Name(), msg)
	t.Skip(msg)
}

// SQLite returns a bun database on a fresh SQLite file in the test's temporary
// directory, opened as passes.Open opens one, closed when the test ends.
func SQLite(t testing.TB) *bun.DB {
	t.Helper()
	db, err := passes.Open(context.Background(), passes.DriverSQLite, filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// Each runs f as two subtests, "postgres" and "sqlite", each on a fresh database handle,
// so one suite proves both drivers behave alike.
func Each(t *testing.T, f func(t *testing.T, db *bun.DB)) {
	t.Helper()
	t.Run("postgres", func(t *testing.T) { f(t, Postgres(t)) })
	t.Run("sqlite", func(t *testing.T) { f(t, SQLite(t)) })
}
