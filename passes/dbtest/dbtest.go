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
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/driver/mysql"
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

// MySQLPrefix starts the name of every database MySQL creates, so a test never touches a
// database it did not make (the test user may create only these).
const MySQLPrefix = "rt_mysql_"

// MySQL returns a bun database on a fresh database rt_mysql_<random> of the MySQL or
// MariaDB server TEST_MYSQL_URL names (go-sql-driver's DSN without a database), opened
// through the driver as a node opens it and dropped when the test ends. It skips when
// TEST_MYSQL_URL is unset, and fails under CI=true, where the MySQL tests must run.
func MySQL(t testing.TB) *bun.DB {
	t.Helper()
	return MySQLInZone(t, "")
}

// MySQLDSN creates a fresh database rt_mysql_<random> on the server TEST_MYSQL_URL
// names, dropped when the test ends, and returns its DSN, for a test that opens it as a
// node does (from a config file, or in another process). It skips or fails as MySQL
// does.
func MySQLDSN(t testing.TB) string {
	t.Helper()
	return mysqlDatabase(t).FormatDSN()
}

// mysqlDatabase creates a fresh database and returns the config of a connection to it.
func mysqlDatabase(t testing.TB) *gomysql.Config {
	t.Helper()
	base := os.Getenv("TEST_MYSQL_URL")
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("TEST_MYSQL_URL is not set (CI=true: the MySQL tests must run)")
		}
		t.Skip("TEST_MYSQL_URL is not set: no MySQL/MariaDB test (e.g. TEST_MYSQL_URL='root@tcp(127.0.0.1:3306)/')")
	}
	cfg, err := gomysql.ParseDSN(base)
	if err != nil {
		t.Fatalf("TEST_MYSQL_URL: %v", err)
	}
	name := fmt.Sprintf("%s%08x", MySQLPrefix, rand.Uint32())
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(context.Background(), "CREATE DATABASE `"+name+"`"); err != nil {
		t.Fatalf("create database %s: %s", name, mysql.Driver{}.RedactText(err.Error(), base))
	}
	t.Cleanup(func() {
		if a, err := sql.Open("mysql", cfg.FormatDSN()); err == nil {
			_, _ = a.ExecContext(context.Background(), "DROP DATABASE IF EXISTS `"+name+"`")
			_ = a.Close()
		}
	})
	cfg.DBName = name
	return cfg
}

// MySQLInZone is MySQL with every session's time_zone set to zone (as a DSN may)
// instead of the driver's UTC; "" keeps UTC. Named zones need the server's time zone
// tables (.ci/run loads them).
func MySQLInZone(t testing.TB, zone string) *bun.DB {
	t.Helper()
	cfg := mysqlDatabase(t)
	if zone != "" {
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params["time_zone"] = "'" + zone + "'"
	}
	db, err := mysql.Driver{}.Open(context.Background(), cfg.FormatDSN(), driver.OpenOptions{})
	if err != nil {
		t.Fatalf("open database %s: %v", cfg.DBName, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
