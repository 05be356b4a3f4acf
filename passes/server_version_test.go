package passes_test

import (
	"context"
	"testing"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

func TestPostgresVersionNum(t *testing.T) {
	db := dbtest.Postgres(t)
	n, err := passes.PostgresVersionNum(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if n < 100000 || n > 1000000 {
		t.Fatalf("server_version_num = %d, not a version of a supported server", n)
	}
	lite := dbtest.SQLite(t)
	if _, err := passes.PostgresVersionNum(context.Background(), lite); err == nil {
		t.Fatal("SQLite answered a PostgreSQL version")
	}
}
