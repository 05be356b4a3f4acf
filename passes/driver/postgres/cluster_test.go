package postgres_test

import (
	"context"
	"testing"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/passtest"
)

// TestOpenWithClusterOptions: PostgreSQL opens with a cluster's sweep-connection
// options (keepalives, no read timeout); the conformance suite's sweeplock area states
// the locks themselves.
func TestOpenWithClusterOptions(t *testing.T) {
	passtest.Postgres(t) // skips without TEST_DATABASE_URL, fails under CI
	db, err := passes.OpenWith(context.Background(), passes.DriverPostgres, dbtest.PostgresURL(), passes.OpenOptions{Cluster: &passes.SweepConnOptions{}, NoReadTimeout: true})
	if err != nil {
		t.Fatalf("OpenWith cluster options on the test server: %v", err)
	}
	_ = db.Close()
}
