package passes_test

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// TestStartupChecksTheDatabaseCannotAnswerAreUnavailable holds the table under an ACCESS
// EXCLUSIVE lock: the checks time out, which says nothing about the configuration, so
// the result is Unavailable (the host retries), while a missing table stays a Failure.
func TestStartupChecksTheDatabaseCannotAnswerAreUnavailable(t *testing.T) {
	db := dbtest.Postgres(t)
	f := newFixture(t, db, passes.TimestampNative)
	ctx := context.Background()
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.ExecContext(ctx, "LOCK TABLE "+f.p+"audit_log IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	res := f.table(f.spec()).ValidateStartup(short)
	if !res.Failed() || !res.Unavailable() {
		t.Fatalf("checks on a locked table: failed %v, unavailable %v: %s", res.Failed(), res.Unavailable(), res.Message())
	}
	spec := f.spec()
	spec.Table = f.p + "nope"
	if res := f.table(spec).ValidateStartup(ctx); !res.Failed() || res.Unavailable() {
		t.Fatalf("a missing table: failed %v, unavailable %v: %s", res.Failed(), res.Unavailable(), res.Message())
	}
}
