package sqlite_test

import (
	"context"
	"testing"

	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/passtest"
)

// TestErrorsAreClassified: SQLite's real errors land in the classes a batch acts on.
func TestErrorsAreClassified(t *testing.T) {
	db := dbtest.SQLite(t)
	if _, err := db.ExecContext(context.Background(), "CREATE TABLE t (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	passtest.CheckClassified(t, []passtest.Classified{
		{Name: "no such table", Err: passtest.Exec(db, "SELECT 1 FROM no_such_table"), Drift: true},
		{Name: "no such column", Err: passtest.Exec(db, "SELECT no_such_column FROM t"), Drift: true},
		{Name: "unique violation", Err: passtest.Exec(db, "INSERT INTO t VALUES (1), (1)")},
		{Name: "syntax error", Err: passtest.Exec(db, "SELEC 1")},
	})
}
