package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/passtest"
)

// TestErrorsAreClassified: PostgreSQL's real errors land in the classes a batch acts on.
func TestErrorsAreClassified(t *testing.T) {
	db := dbtest.Postgres(t)
	ctx := context.Background()
	table := fmt.Sprintf("classify_%d", time.Now().UnixNano()%1_000_000_000)
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (id BIGINT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+table) })

	passtest.CheckClassified(t, []passtest.Classified{
		{Name: "undefined table 42P01", Err: passtest.Exec(db, "SELECT 1 FROM classify_no_such_table"), Drift: true},
		{Name: "undefined column 42703", Err: passtest.Exec(db, "SELECT no_such_column FROM "+table), Drift: true},
		{Name: "unknown schema 3F000", Err: passtest.Exec(db, "CREATE TABLE no_such_schema.t (id int)"), Drift: true},
		{Name: "unique violation", Err: passtest.Exec(db, "INSERT INTO "+table+" VALUES (1), (1)")},
		{Name: "syntax error", Err: passtest.Exec(db, "SELEC 1")},
		{Name: "statement timeout 57014", Transient: true, Err: func(t *testing.T) error {
			return inTx(t, db, "SET LOCAL statement_timeout = '10ms'", "SELECT pg_sleep(5)")
		}},
		{Name: "lock timeout 55P03", Transient: true, Err: func(t *testing.T) error {
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
		{Name: "admin shutdown 57P01", Transient: true, Err: func(t *testing.T) error {
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_, err = conn.ExecContext(ctx, "SELECT pg_terminate_backend(pg_backend_pid())")
			return err
		}},
		{Name: "connection refused", Transient: true, Err: func(t *testing.T) error {
			// The driver's own error: passes.Open flattens its text to redact the DSN.
			refused := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN("postgres://postgres@127.0.0.1:1/none?sslmode=disable")))
			defer refused.Close()
			return refused.PingContext(ctx)
		}},
		{Name: "caller's deadline", Transient: true, Err: func(t *testing.T) error {
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
