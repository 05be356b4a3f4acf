package passtest

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// DB is one throwaway database, closed (and, on PostgreSQL, dropped) when the test
// ends. It embeds the bun handle so it can be handed to passes.NewTable as db.DB.
type DB struct {
	*bun.DB
	// Driver is the database.driver name of the database (passes.DriverPostgres, ...).
	Driver string
	// Types spells, in this database, the column types the suite writes in PostgreSQL's
	// terms (the reference database): "TIMESTAMPTZ" is TEXT on SQLite, say. A type not
	// in it is written as is. A new database gives its own spellings here, so no
	// behaviour of the suite tests which database it runs on.
	Types map[string]string
	// Reopen opens another pool on the same database, closed when the test ends, as a
	// second node of a cluster would hold: the sweep-lock behaviours run one sweep on
	// each. It is nil on a database without session locks (Target.NoSessionLocks).
	Reopen func(t testing.TB) *bun.DB
	// KeepRow returns the statements that create a trigger refusing the delete of the
	// row of table whose id is id, with an error that says the row "is kept": what a
	// trigger is written in differs by database, what it does to a sweep does not.
	KeepRow func(table string, id int64) []string
}

// Type returns this database's spelling of ref, a column type in PostgreSQL's terms.
func (db *DB) Type(ref string) string {
	if t, ok := db.Types[ref]; ok {
		return t
	}
	return ref
}

// sqliteTypes are SQLite's spellings of the types the suite writes: it stores an
// instant as text and has no UUID, fixed-point NUMERIC(p,s) or DOUBLE PRECISION names.
// TIMESTAMP is left as written (a declared type SQLite's driver scans as a time), so
// the key types cover a time key both as text and as a scanned time.
var sqliteTypes = map[string]string{
	"TIMESTAMPTZ":      "TEXT",
	"UUID":             "TEXT",
	"NUMERIC(10,2)":    "NUMERIC",
	"NUMERIC(12,3)":    "NUMERIC",
	"DOUBLE PRECISION": "REAL",
}

// SQLite returns a fresh SQLite file database in the test's temporary directory,
// opened as passes.Open opens one (WAL, busy timeout, foreign keys).
func SQLite(t testing.TB) *DB {
	t.Helper()
	return &DB{DB: dbtest.SQLite(t), Driver: passes.DriverSQLite, Types: sqliteTypes, KeepRow: sqliteKeepRow}
}

// sqliteKeepRow is a trigger that aborts the delete of row id of table.
func sqliteKeepRow(table string, id int64) []string {
	return []string{fmt.Sprintf(`CREATE TRIGGER keep_%[1]s BEFORE DELETE ON %[1]s FOR EACH ROW WHEN OLD.id = %[2]d BEGIN SELECT RAISE(ABORT, 'row %[2]d is kept'); END`, table, id)}
}

// postgresKeepRow is a PL/pgSQL trigger function, in the test's schema, that raises on
// the delete of row id of table, and its trigger.
func postgresKeepRow(table string, id int64) []string {
	return []string{
		fmt.Sprintf(`CREATE FUNCTION keep_%[1]s() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'row %% is kept', OLD.id; END $$`, table),
		fmt.Sprintf(`CREATE TRIGGER keep_%[1]s BEFORE DELETE ON %[1]s FOR EACH ROW WHEN (OLD.id = %[2]d) EXECUTE FUNCTION keep_%[1]s()`, table, id),
	}
}

// Postgres returns a handle on a schema of its own on the server TEST_DATABASE_URL
// names, so tests in parallel (or in other packages) can use the same table names; the
// schema is dropped when the test ends. With TEST_DATABASE_URL unset it skips the test:
// PostgreSQL is opt-in. A server that does not answer skips the test loudly, or fails
// it under CI=true, as passes/dbtest does.
func Postgres(t testing.TB) *DB {
	t.Helper()
	return postgresWith(t, nil)
}

// postgresWith is Postgres with more session parameters (TimeZone, say).
func postgresWith(t testing.TB, params map[string]any) *DB {
	t.Helper()
	if os.Getenv("TEST_DATABASE_URL") == "" {
		t.Skip("TEST_DATABASE_URL is not set: no PostgreSQL test")
	}
	admin := dbtest.Postgres(t) // skips or fails when the server does not answer
	schema := fmt.Sprintf("passtest_%08x", rand.Uint32())
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA ?", bun.Ident(schema)); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP SCHEMA ? CASCADE", bun.Ident(schema)) })
	session := map[string]any{"search_path": schema}
	maps.Copy(session, params)
	conn := pgdriver.NewConnector(pgdriver.WithDSN(dbtest.PostgresURL()), pgdriver.WithConnParams(session))
	db := bun.NewDB(sql.OpenDB(conn), pgdialect.New())
	t.Cleanup(func() { _ = db.Close() })
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("connect to schema %s: %s", schema, passes.RedactTextFor(passes.DriverPostgres, err.Error(), dbtest.PostgresURL()))
	}
	open := func(t testing.TB) *bun.DB {
		db := bun.NewDB(sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dbtest.PostgresURL()), pgdriver.WithConnParams(session))), pgdialect.New())
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	return &DB{DB: db, Driver: passes.DriverPostgres, Reopen: open, KeepRow: postgresKeepRow}
}

// PostgresAlone is a throwaway database of its own on the server TEST_DATABASE_URL
// names, dropped when the test ends: for the behaviours that count the database's
// sessions, which the schemas of Postgres share with every other test.
func PostgresAlone(t testing.TB) *DB {
	t.Helper()
	if os.Getenv("TEST_DATABASE_URL") == "" {
		t.Skip("TEST_DATABASE_URL is not set: no PostgreSQL test")
	}
	admin := dbtest.Postgres(t)
	name := fmt.Sprintf("passtest_alone_%08x", rand.Uint32())
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE ?", bun.Ident(name)); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS ? WITH (FORCE)", bun.Ident(name))
	})
	u, err := url.Parse(dbtest.PostgresURL())
	if err != nil {
		t.Fatalf("TEST_DATABASE_URL is not a URL: %v", err)
	}
	u.Path = "/" + name
	db := bun.NewDB(sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(u.String()))), pgdialect.New())
	t.Cleanup(func() { _ = db.Close() }) // runs before the drop: cleanups run last first
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("connect to database %s: %s", name, passes.RedactTextFor(passes.DriverPostgres, err.Error(), u.String()))
	}
	return &DB{DB: db, Driver: passes.DriverPostgres, KeepRow: postgresKeepRow}
}

// Each runs f as two subtests, "sqlite" and "postgres", each on a throwaway database, so
// one test proves a pass behaves alike on both. The postgres subtest skips when
// TEST_DATABASE_URL is unset.
func Each(t *testing.T, f func(t *testing.T, db *DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { f(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, Postgres(t)) })
}
