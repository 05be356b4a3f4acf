package passes_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// raise makes PostgreSQL fail the current statement with a real error of the given
// SQLSTATE.
func raise(ctx context.Context, db bun.IDB, code string) error {
	_, err := db.ExecContext(ctx, "DO $$ BEGIN RAISE EXCEPTION 'injected' USING ERRCODE = '"+code+"'; END $$")
	return err
}

func TestTxUnitOfWorkRetriesSerializationFailuresAndDeadlocks(t *testing.T) {
	db := dbtest.Postgres(t)
	ctx := context.Background()
	table := newScratchTable(t, db)
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

func TestStagedTx(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		table := newScratchTable(t, db)
		count := func() int {
			n, err := db.NewSelect().TableExpr(table).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
		staged := &passes.StagedTx{DB: db}
		if err := staged.Commit(ctx); err != nil {
			t.Fatalf("Commit with nothing staged: %v", err)
		}
		txCtx, tx, err := staged.Tx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := passes.DB(txCtx, db).ExecContext(txCtx, "INSERT INTO "+table+" (v) VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES (2)"); err != nil {
			t.Fatal(err)
		}
		if err := staged.Rollback(); err != nil {
			t.Fatal(err)
		}
		if count() != 0 {
			t.Fatal("a rolled back stage was written")
		}
		_, tx, _ = staged.Tx(ctx)
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES (3)"); err != nil {
			t.Fatal(err)
		}
		if err := staged.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if count() != 1 || staged.Rollback() != nil {
			t.Fatalf("after Commit: %d rows", count())
		}
	})
}

func newScratchTable(t *testing.T, db *bun.DB) string {
	t.Helper()
	f := &fixture{t: t, db: db, p: newFixturePrefix()}
	table := f.p + "scratch"
	f.exec("CREATE TABLE " + table + " (v INTEGER NOT NULL)")
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+table) })
	return table
}

func TestTableStatementTimeout(t *testing.T) {
	db := dbtest.Postgres(t)
	f := newFixture(t, db, passes.TimestampNative)
	f.log(1, cutoffT.Add(-time.Hour), "done")
	spec := f.spec()
	spec.Where = "pg_sleep(0.5) IS NOT NULL" // trusted SQL: a slow predicate
	spec.StatementTimeout = 50 * time.Millisecond
	p, _ := f.table(spec).Factory()(context.Background())
	_, err := p.PurgeBatch(context.Background(), 10, cutoffT)
	if err == nil || !strings.Contains(err.Error(), "57014") && !strings.Contains(err.Error(), "statement timeout") {
		t.Fatalf("PurgeBatch = %v, want the statement timeout", err)
	}
	if got := f.ids("audit_log"); len(got) != 1 {
		t.Fatalf("rows %v", got)
	}
}
