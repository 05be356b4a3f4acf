package ledger_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

func TestMigrateTablesNamesWhatItCreated(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		p := testPrefix(t, db)
		// A user's table under the same prefix that existed before is not the ledger's doing.
		if _, err := db.ExecContext(ctx, "CREATE TABLE "+p+"users_own (id INTEGER PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+p+"users_own") })
		// In upper case: PostgreSQL folds the names it creates to lower case, SQLite keeps them.
		first, err := ledger.MigrateTables(ctx, db, strings.ToUpper(p))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"backlog_sample", "partition_retirements", "dead_letter", "log", "metadata", "migration_locks", "migrations", "node", "quarantine", "settings", "work_queue"}
		for _, w := range want {
			if !slices.ContainsFunc(first.Created, func(c string) bool { return strings.EqualFold(c, p+w) }) {
				t.Errorf("created %v: no %s%s", first.Created, p, w)
			}
		}
		if len(first.Created) != len(want) || len(first.Applied) == 0 {
			t.Errorf("first call = %+v: want the migrations applied and not the user's table", first)
		}
		again, err := ledger.MigrateTables(ctx, db, strings.ToUpper(p))
		if err != nil || len(again.Applied) != 0 || len(again.Created) != 0 {
			t.Fatalf("second call = %+v, %v: want nothing done", again, err)
		}
	})
}

func TestMigrateTablesRefusesABadPrefix(t *testing.T) {
	db := dbtest.SQLite(t)
	if _, err := ledger.MigrateTables(context.Background(), db, "bad-prefix"); err == nil {
		t.Fatal("a prefix with a dash was accepted")
	}
}
