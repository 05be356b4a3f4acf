package passes_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

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
