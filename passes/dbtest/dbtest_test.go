package dbtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes/dbtest"
)

// TestPostgresSmoke proves the PostgreSQL wiring: bun's pgdriver connects to the test
// server and answers a query.
func TestPostgresSmoke(t *testing.T) {
	db := dbtest.Postgres(t)
	var version string
	if err := db.NewSelect().ColumnExpr("version()").Scan(context.Background(), &version); err != nil {
		t.Fatalf("select version(): %v", err)
	}
	if !strings.HasPrefix(version, "PostgreSQL") {
		t.Fatalf("version() = %q", version)
	}
	var sum int
	if err := db.QueryRowContext(context.Background(), "SELECT 40 + 2").Scan(&sum); err != nil || sum != 42 {
		t.Fatalf("SELECT 40 + 2 = %d, %v", sum, err)
	}
}

func TestSQLiteSmoke(t *testing.T) {
	db := dbtest.SQLite(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO t (id) VALUES (1), (2), (3)"); err != nil {
		t.Fatal(err)
	}
	n, err := db.NewSelect().Table("t").Count(ctx)
	if err != nil || n != 3 {
		t.Fatalf("count = %d, %v", n, err)
	}
}
