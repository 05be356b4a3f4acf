//go:build chaos

package chaos

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest/pgcluster"
)

// cluster is the PostgreSQL cluster the suite created (passes/dbtest/pgcluster) on a
// port that was free when it started. It is the suite's to stop, crash and restart.
type cluster struct{ *pgcluster.Cluster }

// serverSettings make the throwaway cluster fast (no fsync) and its deadlock detector
// quick, so the deadlock scenario resolves in a tenth of a second.
var serverSettings = []string{
	"fsync=off", "synchronous_commit=off", "full_page_writes=off",
	"deadlock_timeout=100ms", "max_connections=200", "shared_buffers=64MB",
}

// clusterOptions name the suite's clusters chaos_<port>.
var clusterOptions = pgcluster.Options{Prefix: "chaos", Settings: serverSettings}

// createCluster creates and starts a cluster on a free port, after removing what an
// interrupted earlier run left behind.
func createCluster() (*cluster, error) {
	pgcluster.DropStale(clusterOptions.Prefix)
	c, err := pgcluster.Create(clusterOptions)
	if err != nil {
		return nil, err
	}
	return &cluster{c}, nil
}

// testDSN is DSN with the application name the fault injectors spare.
// Its read timeout is longer than pgdriver's 10s default, for the suite's own
// measurements on a machine shared with other work.
func (c *cluster) testDSN(db string) string {
	return c.DSN(db) + "&read_timeout=120s&application_name=" + testApp
}

// testApp names the suite's own connections, so killing "every backend" spares them.
const testApp = "chaos-suite"

// createDatabase creates a fresh database for one scenario and returns its name.
func (c *cluster) createDatabase(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "_", " ", "_", "-", "_").Replace(t.Name()))
	db := open(t, c.testDSN("postgres"))
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return name
}

// open opens a PostgreSQL database through the project's own driver setup.
func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := passes.Open(context.Background(), passes.DriverPostgres, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return db.DB
}
