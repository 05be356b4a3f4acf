package sqlite_test

import (
	"context"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// TestPartitionsRefused: SQLite has no partitioned tables, so a pass with partitions
// fails startup and says why.
func TestPartitionsRefused(t *testing.T) {
	db := passtest.SQLite(t)
	if _, err := db.ExecContext(context.Background(), `CREATE TABLE events (id INTEGER NOT NULL, at TEXT NOT NULL, PRIMARY KEY (at, id))`); err != nil {
		t.Fatal(err)
	}
	spec := passes.TableSpec{Table: "events", KeyColumns: []string{"at", "id"}, Timestamp: "at", Partitions: &passes.PartitionSpec{}}
	tbl, err := passes.NewTable(db.DB, "events", spec)
	if err != nil {
		t.Fatal(err)
	}
	if res := tbl.ValidateStartup(context.Background()); !res.Failed() || !strings.Contains(res.Message(), "SQLite has no partitioned tables") {
		t.Fatalf("failed=%v %q", res.Failed(), res.Message())
	}
}
