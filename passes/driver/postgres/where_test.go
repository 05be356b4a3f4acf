package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// TestWhereNotBooleanRefused: PostgreSQL types a where, so startup refuses one that is
// not a boolean condition, naming where. The wheres every database refuses at startup
// are stated in passes (TestTableWhereStartup); SQLite and MySQL read any value as
// true or false, so only PostgreSQL has the type to refuse these.
func TestWhereNotBooleanRefused(t *testing.T) {
	db := passtest.Postgres(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE audit_log (id BIGINT PRIMARY KEY, occurred_at TIMESTAMPTZ NOT NULL, state TEXT NOT NULL DEFAULT 'done')"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE INDEX audit_log_ts ON audit_log (occurred_at, id)"); err != nil {
		t.Fatal(err)
	}
	for _, where := range []string{"id + 1", "state"} {
		tbl, err := passes.NewTable(db.DB, "audit-log", passes.TableSpec{Table: "audit_log", Key: "id", Timestamp: "occurred_at", Where: where})
		if err != nil {
			t.Fatal(err)
		}
		if res := tbl.ValidateStartup(ctx); !res.Failed() || !strings.Contains(res.Message(), "where") {
			t.Errorf("where %q: startup %v %q, want a failure naming where", where, res.Failed(), res.Message())
		}
	}
}
