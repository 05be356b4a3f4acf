package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// TestStartupChecksTheDatabaseCannotAnswerAreUnavailable holds the table under an ACCESS
// EXCLUSIVE lock (a lock no other database in the suite can take on a table while it is
// read): the checks time out, which says nothing about the configuration, so the result
// is Unavailable (the host retries), while a missing table stays a Failure.
func TestStartupChecksTheDatabaseCannotAnswerAreUnavailable(t *testing.T) {
	db := dbtest.Postgres(t)
	ctx := context.Background()
	table := newPrefix() + "audit_log"
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (id BIGINT PRIMARY KEY, occurred_at TIMESTAMPTZ NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+table) })
	newTable := func(name string) *passes.Table {
		tbl, err := passes.NewTable(db, "audit-log", passes.TableSpec{Table: name, Key: "id", Timestamp: "occurred_at"})
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.ExecContext(ctx, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	res := newTable(table).ValidateStartup(short)
	if !res.Failed() || !res.Unavailable() {
		t.Fatalf("checks on a locked table: failed %v, unavailable %v: %s", res.Failed(), res.Unavailable(), res.Message())
	}
	if res := newTable(newPrefix() + "nope").ValidateStartup(ctx); !res.Failed() || res.Unavailable() {
		t.Fatalf("a missing table: failed %v, unavailable %v: %s", res.Failed(), res.Unavailable(), res.Message())
	}
}
