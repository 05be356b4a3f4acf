package mysql_test

import (
	"context"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/driver/mysql"
)

// TestReplicaStatusReadsTheReplicasOwnLag: on a real source and replica, the source is
// no replica; the replica replicates with a small lag; with its SQL thread stopped it
// is not replicating (MySQL's NULL lag, which must never read as no lag); started
// again, it replicates; applying each change 3 s late, its lag grows past 1 s under a
// write.
func TestReplicaStatusReadsTheReplicasOwnLag(t *testing.T) {
	r := dbtest.MySQLReplication(t)
	ctx := context.Background()
	open := func(dsn string) driver.ReplicaStatus {
		t.Helper()
		db, err := mysql.Driver{}.Open(ctx, dsn, driver.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		st, err := mysql.Driver{}.ReplicaStatus(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := open(r.SourceDSN); st.Replica {
		t.Errorf("the source reads as a replica: %+v", st)
	}
	if st := open(r.ReplicaDSN); !st.Replica || !st.Replicating || st.Lag > 5*time.Second {
		t.Errorf("a running replica: %+v, want replicating with a lag of seconds at most", st)
	}
	r.StopApplying(t)
	if st := open(r.ReplicaDSN); !st.Replica || st.Replicating {
		t.Errorf("a replica whose SQL thread is stopped: %+v, want a replica not replicating", st)
	}
	r.StartApplying(t)
	r.WaitFor(t, "replication running again", func() bool { return open(r.ReplicaDSN).Replicating })
	r.Delay(t, 3*time.Second)
	if _, err := r.Source.ExecContext(ctx, "CREATE TABLE "+dbName(t, r.SourceDSN)+".w (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	r.WaitFor(t, "a lag over 1s on the delayed replica", func() bool {
		st := open(r.ReplicaDSN)
		return st.Replicating && st.Lag > time.Second
	})
}

// TestReplicaStatusOnlyOnDriversThatListReplicas: the MySQL driver takes a list of
// replicas; it reports none of its source's own.
func TestReplicaStatusOnlyOnDriversThatListReplicas(t *testing.T) {
	if !(mysql.Driver{}).ListsReplicas() {
		t.Error("the MySQL driver takes no list of replicas; its source keeps no lag of them")
	}
	lag, replicas, err := mysql.Driver{}.ReplicaLag(context.Background(), nil)
	if lag != 0 || replicas || err != nil {
		t.Errorf("ReplicaLag on the source: %v %v %v, want none", lag, replicas, err)
	}
}

// dbName is the database a DSN names.
func dbName(t *testing.T, dsn string) string {
	t.Helper()
	c, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return c.DBName
}
