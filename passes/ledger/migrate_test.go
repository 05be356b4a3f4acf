package ledger_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/retentionkit/retention/passes/ledger"
)

// testPrefix returns a prefix unique to the test and drops its tables afterwards.
func testPrefix(t *testing.T, db *bun.DB) string {
	t.Helper()
	p := fmt.Sprintf("l%08x_", rand.Uint32())
	t.Cleanup(func() {
		for _, table := range []string{"settings", "dead_letter", "work_queue", "log", "metadata", "node", "quarantine", "backlog_sample", "partition_retirements", "migrations", "migration_locks"} {
			_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+p+table)
		}
	})
	return p
}

func TestMigrateCreatesTheLedgerOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		p := testPrefix(t, db)
		applied, err := ledger.Migrate(ctx, db, p)
		if err != nil || len(applied) != 5 || !strings.Contains(applied[0], "ledger_tables") || !strings.Contains(applied[1], "node_heartbeats") || !strings.Contains(applied[2], "quarantine") || !strings.Contains(applied[3], "backlog_samples") || !strings.Contains(applied[4], "partition_retirements") {
			t.Fatalf("first Migrate = %v, %v", applied, err)
		}
		for _, table := range []string{"metadata", "log", "work_queue", "dead_letter", "settings", "node", "quarantine", "backlog_sample", "partition_retirements"} {
			if _, err := db.NewSelect().TableExpr(p + table).Count(ctx); err != nil {
				t.Errorf("table %s%s: %v", p, table, err)
			}
		}
		again, err := ledger.Migrate(ctx, db, p)
		if err != nil || len(again) != 0 {
			t.Fatalf("second Migrate = %v, %v; want nothing to do", again, err)
		}
	})
}

func TestMigrateFromTwoNodesAtOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		p := testPrefix(t, db)
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for range 2 {
			wg.Go(func() {
				_, err := ledger.Migrate(context.Background(), db, p)
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("concurrent Migrate: %v", err)
			}
		}
	})
}

func TestReferencesRestrictDeletes(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		p := testPrefix(t, db)
		if _, err := ledger.Migrate(ctx, db, p); err != nil {
			t.Fatal(err)
		}
		exec := func(q string, args ...any) error {
			_, err := db.ExecContext(ctx, strings.ReplaceAll(q, "{p}", p), args...)
			return err
		}
		// The instant is a parameter: MySQL's DATETIME takes no zone offset in a literal.
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if err := exec(`INSERT INTO {p}metadata (id, name, state, start_time) VALUES (1, 'x', 'Completed', ?)`, at); err != nil {
			t.Fatal(err)
		}
		if err := exec(`INSERT INTO {p}log (metadata_id, level, time, message) VALUES (1, 'warning', ?, 'm')`, at); err != nil {
			t.Fatal(err)
		}
		if err := exec(`DELETE FROM {p}metadata WHERE id = 1`); err == nil {
			t.Fatal("a metadata row with a log row was deleted: the reference does not restrict")
		}
	})
}

func TestCheckPrefix(t *testing.T) {
	for _, bad := range []string{"", "1x_", "x-y", "x; DROP TABLE y", strings.Repeat("a", 40)} {
		if err := ledger.CheckPrefix(bad); err == nil || !strings.Contains(err.Error(), "ledger.table_prefix") {
			t.Errorf("CheckPrefix(%q) = %v", bad, err)
		}
	}
	if err := ledger.CheckPrefix(ledger.DefaultPrefix); err != nil {
		t.Fatal(err)
	}
}

// migrated returns a ledger migrated under a prefix of the test's own.
func migrated(t *testing.T, db *bun.DB) *ledger.Ledger {
	t.Helper()
	p := testPrefix(t, db)
	if _, err := ledger.Migrate(context.Background(), db, p); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.New(db, p)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestMigrationsRollBack runs every down migration: after Migrate, bun's Rollback,
// group by group, must drop every ledger table, and Migrate must then make them again.
func TestMigrationsRollBack(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		p := testPrefix(t, db)
		if _, err := ledger.Migrate(ctx, db, p); err != nil {
			t.Fatal(err)
		}
		m := migrate.NewMigrator(db, ledger.Migrations(p),
			migrate.WithTableName(p+"migrations"), migrate.WithLocksTableName(p+"migration_locks"),
			migrate.WithMarkAppliedOnSuccess(true))
		for i := 0; ; i++ {
			group, err := m.Rollback(ctx)
			if err != nil {
				t.Fatalf("rollback %d: %v", i+1, err)
			}
			if group.IsZero() {
				break
			}
			if i > 10 {
				t.Fatal("Rollback never ran out of groups")
			}
		}
		for _, table := range []string{"metadata", "log", "work_queue", "dead_letter", "settings", "node", "quarantine", "backlog_sample", "partition_retirements"} {
			if _, err := db.NewSelect().TableExpr(p + table).Count(ctx); err == nil {
				t.Errorf("table %s%s is still there after every rollback", p, table)
			}
		}
		if applied, err := ledger.Migrate(ctx, db, p); err != nil || len(applied) != 5 {
			t.Fatalf("Migrate after the rollbacks = %v, %v; want all 5 again", applied, err)
		}
	})
}
