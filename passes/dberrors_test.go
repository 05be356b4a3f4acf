package passes_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// classified is one real error a database returned, and how it must be classified.
type classified struct {
	name             string
	err              func(t *testing.T) error
	drift, transient bool
}

func checkClassified(t *testing.T, cases []classified) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err(t)
			if err == nil {
				t.Fatal("the statement did not fail")
			}
			if got := passes.IsSchemaDrift(err); got != tc.drift {
				t.Errorf("IsSchemaDrift(%v) = %v, want %v", err, got, tc.drift)
			}
			if got := passes.IsTransient(err); got != tc.transient {
				t.Errorf("IsTransient(%v) = %v, want %v", err, got, tc.transient)
			}
			wrapped := fmt.Errorf("pass %q: delete batch: %w", "p", err)
			if passes.IsSchemaDrift(wrapped) != tc.drift || passes.IsTransient(wrapped) != tc.transient {
				t.Errorf("the wrapped %v is classified differently", wrapped)
			}
		})
	}
}

func exec(db bun.IDB, q string) func(t *testing.T) error {
	return func(*testing.T) error {
		_, err := db.ExecContext(context.Background(), q)
		return err
	}
}

func TestPostgresErrorsAreClassified(t *testing.T) {
	db := dbtest.Postgres(t)
	ctx := context.Background()
	table := fmt.Sprintf("classify_%d", time.Now().UnixNano()%1_000_000_000)
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (id BIGINT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+table) })

	checkClassified(t, []classified{
		{name: "undefined table 42P01", err: exec(db, "SELECT 1 FROM classify_no_such_table"), drift: true},
		{name: "undefined column 42703", err: exec(db, "SELECT no_such_column FROM "+table), drift: true},
		{name: "unknown schema 3F000", err: exec(db, "CREATE TABLE no_such_schema.t (id int)"), drift: true},
		{name: "unique violation", err: exec(db, "INSERT INTO "+table+" VALUES (1), (1)")},
		{name: "syntax error", err: exec(db, "SELEC 1")},
		{name: "statement timeout 57014", transient: true, err: func(t *testing.T) error {
			return inTx(t, db, "SET LOCAL statement_timeout = '10ms'", "SELECT pg_sleep(5)")
		}},
		{name: "lock timeout 55P03", transient: true, err: func(t *testing.T) error {
			holder, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Rollback()
			if _, err := holder.ExecContext(ctx, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
				t.Fatal(err)
			}
			return inTx(t, db, "SET LOCAL lock_timeout = '10ms'", "SELECT id FROM "+table)
		}},
		{name: "admin shutdown 57P01", transient: true, err: func(t *testing.T) error {
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_, err = conn.ExecContext(ctx, "SELECT pg_terminate_backend(pg_backend_pid())")
			return err
		}},
		{name: "connection refused", transient: true, err: func(t *testing.T) error {
			// The driver's own error: passes.Open flattens its text to redact the DSN.
			refused := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN("postgres://postgres@127.0.0.1:1/none?sslmode=disable")))
			defer refused.Close()
			return refused.PingContext(ctx)
		}},
		{name: "caller's deadline", transient: true, err: func(t *testing.T) error {
			short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			_, err := db.ExecContext(short, "SELECT pg_sleep(5)")
			return err
		}},
	})
}

// inTx runs the statements in one transaction and returns the first error.
func inTx(t *testing.T, db *bun.DB, stmts ...string) error {
	t.Helper()
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, s := range stmts {
		if _, err := tx.ExecContext(context.Background(), s); err != nil {
			return err
		}
	}
	return nil
}

func TestSQLiteErrorsAreClassified(t *testing.T) {
	db := dbtest.SQLite(t)
	if _, err := db.ExecContext(context.Background(), "CREATE TABLE t (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	checkClassified(t, []classified{
		{name: "no such table", err: exec(db, "SELECT 1 FROM no_such_table"), drift: true},
		{name: "no such column", err: exec(db, "SELECT no_such_column FROM t"), drift: true},
		{name: "unique violation", err: exec(db, "INSERT INTO t VALUES (1), (1)")},
		{name: "syntax error", err: exec(db, "SELEC 1")},
	})
}

func TestASchemaDriftErrorOfAGoPassIsDrift(t *testing.T) {
	err := fmt.Errorf("sweep: %w", &passes.SchemaDriftError{Err: errors.New("the export bucket is gone")})
	if !passes.IsSchemaDrift(err) || passes.IsTransient(err) {
		t.Fatalf("%v: drift %v, transient %v", err, passes.IsSchemaDrift(err), passes.IsTransient(err))
	}
}
