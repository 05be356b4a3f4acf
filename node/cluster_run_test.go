//go:build cluster

// Cluster mode through node.Open, on protoactor's in-memory provider instead of etcd.
// protoactor's cluster races inside itself at our version, so this runs without -race,
// behind the cluster build tag, as node/cluster's in-process tests do: make cluster, or
// go test -tags cluster -run TestOpenRunsClusterMode ./node/.

package node_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	protocluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/test"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// clusterDatabase is a database cluster mode runs on, as a test opens it: the
// config's driver, a DSN to a database of the test's own (or a shared one with names
// of the test's own), and the DDL of the swept table in its spelling.
type clusterDatabase struct {
	driver string
	dsn    func(t testing.TB) string
	table  string // CREATE TABLE %s (...): id, at
}

// clusterDatabases are the databases with session locks: PostgreSQL (TEST_DATABASE_URL)
// and MySQL/MariaDB (TEST_MYSQL_URL, a fresh database per test). Each skips when its
// variable is unset.
var clusterDatabases = []clusterDatabase{
	{passes.DriverPostgres, func(t testing.TB) string {
		dsn := os.Getenv("TEST_DATABASE_URL")
		if dsn == "" {
			t.Skip("TEST_DATABASE_URL is not set")
		}
		return dsn
	}, "CREATE TABLE %s (id BIGSERIAL PRIMARY KEY, at TIMESTAMPTZ NOT NULL)"},
	{passes.DriverMySQL, dbtest.MySQLDSN, "CREATE TABLE %s (id BIGINT AUTO_INCREMENT PRIMARY KEY, at TIMESTAMP(6) NOT NULL, KEY (at))"},
}

// TestOpenRunsClusterMode: on each database with session locks, a node opened with
// run's options from a file with cluster.enabled joins the cluster, sweeps its table
// pass under the pass's sweep lock as the member that owns it, serves /cluster, and
// leaves on Stop (Stop answers nil: not fenced, not degraded).
func TestOpenRunsClusterMode(t *testing.T) {
	for _, cd := range clusterDatabases {
		t.Run(cd.driver, func(t *testing.T) { openRunsClusterMode(t, cd) })
	}
}

func openRunsClusterMode(t *testing.T, cd clusterDatabase) {
	dsn := cd.dsn(t)
	ctx := t.Context()
	db, err := passes.Open(ctx, cd.driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	// Closed by a cleanup, not a defer: the cleanups below drop the test's tables
	// through db and run after the function returns (a deferred Close made every drop
	// fail silently and left the ncl<pid>_ ledger tables behind).
	t.Cleanup(func() { _ = db.Close() })
	table := fmt.Sprintf("node_cluster_events_%d", os.Getpid())
	old := time.Now().Add(-48 * time.Hour).UTC()
	for _, q := range []string{
		fmt.Sprintf(cd.table, table),
		fmt.Sprintf("INSERT INTO %s (at) VALUES ('%s'), ('%s'), ('%s')", table, old.Format(time.DateTime), old.Format(time.DateTime), time.Now().UTC().Format(time.DateTime)),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+table) })
	prefix := fmt.Sprintf("ncl%d_", os.Getpid())
	t.Cleanup(func() {
		for _, tbl := range []string{"settings", "dead_letter", "work_queue", "log", "metadata", "node", "quarantine", "backlog_sample", "partition_retirements", "migrations", "migration_locks"} {
			_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+prefix+tbl+" CASCADE")
		}
	})
	body := fmt.Sprintf(`database:
  driver: %s
  dsn: %q
ledger:
  table_prefix: %s
node:
  admin: 127.0.0.1:0
cluster:
  enabled: true
  etcd:
    endpoints: ["127.0.0.1:2379"]
passes:
  - name: events
    table: %s
    key: id
    timestamp: at
    retention_period: 1d
    max_startup_stagger: 0s
`, cd.driver, dsn, prefix, table)
	cfg := configFile(t, t.TempDir(), body)
	done := make(chan string, 8)
	watch := actors.ObserverFunc(func(e actors.Event) error {
		if d, ok := e.(actors.SweepDone); ok && d.Reason == actors.Drained {
			select {
			case done <- d.Name:
			default:
			}
		}
		return nil
	})
	agent := test.NewInMemAgent()
	opts := runOptions()
	opts.Observers = []actors.Observer{watch}
	opts.ClusterProvider = func() (protocluster.ClusterProvider, error) {
		return test.NewTestProvider(agent, test.WithTestProviderRefreshTtl(time.Second)), nil
	}
	n, err := node.Open(ctx, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitSweeps(t, done, "events")
	var left int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&left); err != nil || left != 1 {
		t.Fatalf("rows left = %d (%v), want the one row not yet expired", left, err)
	}
	if body := get(t, "http://"+n.AdminAddr()+"/cluster"); !strings.Contains(body, `"events"`) {
		t.Fatalf("/cluster does not list the pass:\n%s", body)
	}
	if err := n.Stop(context.WithoutCancel(ctx)); err != nil {
		t.Fatalf("Stop = %v, want nil for a member that was not fenced", err)
	}
}
