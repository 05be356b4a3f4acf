package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// Replication is a MySQL/MariaDB source and a replica of it, for the tests of the
// replica lag that paces adaptive passes: a fresh database on the source (replication
// makes it on the replica too), the DSNs of both, and an administrative connection to
// the replica that stops and starts its replication. The test holds a lock on the
// replica while it runs, so two packages' tests never stop replication under each
// other, and its cleanup leaves replication running with no delay.
type Replication struct {
	// SourceDSN and ReplicaDSN name the test's database on the source and the replica.
	SourceDSN, ReplicaDSN string
	// Source and Replica are administrative connections to the two servers.
	Source, Replica *sql.DB
	delayed         bool
}

// MySQLReplication sets up a Replication on the servers TEST_MYSQL_SOURCE_URL and
// TEST_MYSQL_REPLICA_URL name (go-sql-driver DSNs without a database, of a user that
// may create databases on the source and stop and start replication on the replica;
// .ci/run starts such a pair). It skips when they are unset, and fails under CI=true.
func MySQLReplication(t testing.TB) *Replication {
	t.Helper()
	srcURL, repURL := os.Getenv("TEST_MYSQL_SOURCE_URL"), os.Getenv("TEST_MYSQL_REPLICA_URL")
	if srcURL == "" || repURL == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("TEST_MYSQL_SOURCE_URL or TEST_MYSQL_REPLICA_URL is not set (CI=true: .ci/run starts a source and its replica)")
		}
		t.Skip("TEST_MYSQL_SOURCE_URL and TEST_MYSQL_REPLICA_URL are not set: no source and replica for the replica lag tests")
	}
	src, rep := mustParse(t, srcURL), mustParse(t, repURL)
	r := &Replication{Source: mustOpen(t, src), Replica: mustOpen(t, rep)}
	ctx := context.Background()
	hold, err := r.Replica.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got sql.NullInt64
	if err := hold.QueryRowContext(ctx, "SELECT GET_LOCK('rt_replication_tests', 600)").Scan(&got); err != nil || got.Int64 != 1 {
		t.Fatalf("the replica's test lock: %v %v", got, err)
	}
	t.Cleanup(func() {
		_, _ = hold.ExecContext(context.Background(), "DO RELEASE_LOCK('rt_replication_tests')")
		_ = hold.Close()
	})
	t.Cleanup(func() { r.restore(t) })
	name := fmt.Sprintf("%s%08x", MySQLPrefix, rand.Uint32())
	if _, err := r.Source.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = r.Source.ExecContext(context.Background(), "DROP DATABASE IF EXISTS `"+name+"`") })
	r.WaitFor(t, "the test's database on the replica", func() bool {
		var n int
		err := r.Replica.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name).Scan(&n)
		return err == nil && n == 1
	})
	src.DBName, rep.DBName = name, name
	r.SourceDSN, r.ReplicaDSN = src.FormatDSN(), rep.FormatDSN()
	return r
}

func mustParse(t testing.TB, dsn string) *gomysql.Config {
	t.Helper()
	c, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("a replication test DSN: %v", err)
	}
	return c
}

func mustOpen(t testing.TB, c *gomysql.Config) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// StopApplying stops the replica's SQL thread: it still receives the source's changes
// but applies none, and reports its lag as NULL.
func (r *Replication) StopApplying(t testing.TB) { r.exec(t, "STOP SLAVE SQL_THREAD") }

// StartApplying starts the replica's SQL thread again.
func (r *Replication) StartApplying(t testing.TB) { r.exec(t, "START SLAVE SQL_THREAD") }

// Delay makes the replica apply each change d after the source made it (whole
// seconds), so its lag grows to d under any write.
func (r *Replication) Delay(t testing.TB, d time.Duration) {
	r.exec(t, "STOP SLAVE") // MariaDB changes the source's settings only with both threads stopped
	r.exec(t, fmt.Sprintf("CHANGE MASTER TO MASTER_DELAY = %d", int(d.Seconds())))
	r.exec(t, "START SLAVE")
	r.delayed = true
}

func (r *Replication) exec(t testing.TB, q string) {
	t.Helper()
	if _, err := r.Replica.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%s on the replica: %v", q, err)
	}
}

// restore leaves the replica replicating with no delay for the next test.
func (r *Replication) restore(t testing.TB) {
	ctx := context.Background()
	if r.delayed {
		_, _ = r.Replica.ExecContext(ctx, "STOP SLAVE")
		_, _ = r.Replica.ExecContext(ctx, "CHANGE MASTER TO MASTER_DELAY = 0")
	}
	if _, err := r.Replica.ExecContext(ctx, "START SLAVE"); err != nil {
		t.Errorf("START SLAVE on the replica after the test: %v", err)
	}
}

// WaitFor polls cond until it holds, failing the test after a minute.
func (r *Replication) WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute", what)
		}
		<-time.After(50 * time.Millisecond)
	}
}
