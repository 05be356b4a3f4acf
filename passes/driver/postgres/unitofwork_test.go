package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// The unit of work retries what the driver classes as "retry the unit"; PostgreSQL can
// raise any SQLSTATE on demand, so these tests inject the real errors here.

// raise makes PostgreSQL fail the current statement with a real error of the given
// SQLSTATE.
func raise(ctx context.Context, db bun.IDB, code string) error {
	_, err := db.ExecContext(ctx, "DO $$ BEGIN RAISE EXCEPTION 'injected' USING ERRCODE = '"+code+"'; END $$")
	return err
}

func TestTxUnitOfWorkRetriesSerializationFailuresAndDeadlocks(t *testing.T) {
	db := dbtest.Postgres(t)
	ctx := context.Background()
	table := scratchTable(t, db)
	for _, code := range []string{"40001", "40P01"} {
		attempts := 0
		err := passes.TxUnitOfWork{DB: db}.Execute(ctx, func(ctx context.Context) error {
			attempts++
			tx := passes.DB(ctx, db)
			if _, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES (?)", attempts); err != nil {
				return err
			}
			if attempts < 3 {
				return raise(ctx, tx, code)
			}
			return nil
		})
		if err != nil || attempts != 3 {
			t.Fatalf("%s: Execute = %v after %d attempts, want success on the third", code, err, attempts)
		}
	}
	var values []int
	if err := db.NewSelect().TableExpr(table).Column("v").Scan(ctx, &values); err != nil {
		t.Fatal(err)
	}
	if len(values) != 2 || values[0] != 3 || values[1] != 3 {
		t.Fatalf("committed rows %v: the failed attempts were not rolled back", values)
	}
}

func TestTxUnitOfWorkGivesUpAndDoesNotRetryOtherErrors(t *testing.T) {
	db := dbtest.Postgres(t)
	ctx := context.Background()
	attempts := 0
	err := passes.TxUnitOfWork{DB: db, Attempts: 2}.Execute(ctx, func(ctx context.Context) error {
		attempts++
		return raise(ctx, passes.DB(ctx, db), "40001")
	})
	if err == nil || attempts != 2 || !strings.Contains(err.Error(), "2 times") {
		t.Fatalf("Execute = %v after %d attempts", err, attempts)
	}
	attempts = 0
	err = passes.TxUnitOfWork{DB: db}.Execute(ctx, func(ctx context.Context) error {
		attempts++
		return raise(ctx, passes.DB(ctx, db), "23505")
	})
	if err == nil || attempts != 1 || passes.IsRetryable(err) {
		t.Fatalf("a unique violation was retried: %v after %d attempts", err, attempts)
	}
	boom := errors.New("boom")
	if err := (passes.TxUnitOfWork{DB: db}).Execute(ctx, func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Execute = %v", err)
	}
}

// scratchTable creates a table of one integer column v, dropped when the test ends.
func scratchTable(t *testing.T, db *bun.DB) string {
	t.Helper()
	table := fmt.Sprintf("uow_scratch_%d", time.Now().UnixNano()%1_000_000_000)
	if _, err := db.ExecContext(context.Background(), "CREATE TABLE "+table+" (v INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+table) })
	return table
}
