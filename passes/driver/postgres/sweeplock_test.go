package postgres_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// The sweep lock's PostgreSQL side: what happens when the server ends a holder's
// backend (pg_terminate_backend) and the settings a lock's connection gets. That a
// denied sweep builds nothing and a held one builds once is the conformance suite's
// sweeplock area.

// cutoffT is the cutoff these tests sweep at; eventsTable's rows are an hour older.
var cutoffT = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// newPrefix is a table or lock name prefix of the test's own, since these tests share
// the server's database with every other package's.
func newPrefix() string { return fmt.Sprintf("t%08x_", rand.Uint32()) }

// eventsTable creates a table of n expired rows (ids 1..n) and returns its name.
func eventsTable(t *testing.T, db *bun.DB, n int) string {
	t.Helper()
	name := newPrefix() + "events"
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+name+" (id BIGINT PRIMARY KEY, at TIMESTAMPTZ NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+name) })
	if _, err := db.ExecContext(ctx, "INSERT INTO "+name+" SELECT g, ? FROM generate_series(1, ?) g", cutoffT.Add(-time.Hour), n); err != nil {
		t.Fatal(err)
	}
	return name
}

func countRows(t *testing.T, db *bun.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func lockedTable(t *testing.T, db *bun.DB, table, member string) *passes.Table {
	t.Helper()
	tbl, err := passes.NewTable(db, "events", passes.TableSpec{Table: table, Key: "id", Timestamp: "at"})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err = tbl.WithSweepLock(passes.SweepLockOptions{Conn: passes.SweepConnOptions{ApplicationName: passes.MemberAppPrefix + member}})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// The lock lives and dies with the connection the batches run on: once the holder's
// backend is terminated, another member gets the lock and the old sweep's next batch
// fails without deleting.
func TestSweepLockDiesWithItsConnection(t *testing.T) {
	db1, db2 := dbtest.Postgres(t), dbtest.Postgres(t)
	table := eventsTable(t, db1, 30)
	ctx := context.Background()
	first, err := lockedTable(t, db1, table, "m1").Factory()(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.(passes.Closer).Close()
	if _, err := first.PurgeBatch(ctx, 10, cutoffT); err != nil {
		t.Fatal(err)
	}
	holders, err := passes.LockHolders(ctx, db2, []string{"events"})
	if err != nil {
		t.Fatal(err)
	}
	h, ok := holders["events"]
	if !ok || h.ApplicationName != "retention:m1" || h.Member != "m1" || h.PID == 0 || h.BackendStart.IsZero() {
		t.Fatalf("holders %+v: want the m1 session", holders)
	}
	if _, err := db2.ExecContext(ctx, "SELECT pg_terminate_backend(?)", h.PID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() bool {
		hs, err := passes.LockHolders(ctx, db2, []string{"events"})
		return err == nil && len(hs) == 0
	})
	second, err := lockedTable(t, db2, table, "m2").Factory()(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer second.(passes.Closer).Close()
	if n, err := second.PurgeBatch(ctx, 10, cutoffT); err != nil || n != 10 {
		t.Fatalf("the new holder's batch: %d, %v", n, err)
	}
	if n, err := first.PurgeBatch(ctx, 10, cutoffT); err == nil || n != 0 {
		t.Fatalf("the old sweep's batch after its connection died: %d, %v; want an error", n, err)
	}
	if got := countRows(t, db1, table); got != 10 {
		t.Fatalf("%d rows left, want 10", got)
	}
}

// A lock connection that dies stops an exclusive sweep before its next batch, and the
// lock is another's once the server lets go of it. (That a denied sweep builds nothing
// and a held one builds once is the conformance suite's sweeplock area; this kills a
// PostgreSQL backend.)
func TestExclusiveStopsWhenItsLockConnectionDies(t *testing.T) {
	db1, db2 := dbtest.Postgres(t), dbtest.Postgres(t)
	ctx := context.Background()
	identity := newPrefix() + "loop"
	batches := 0
	factory := func(context.Context) (passes.Pass, error) {
		return passes.PassFunc(func(context.Context, int, time.Time) (int, error) { batches++; return 1, nil }), nil
	}
	ex1, err := passes.ExclusiveWith(db1, passes.SweepLockOptions{Identity: identity, Conn: passes.SweepConnOptions{ApplicationName: "retention:m1"}}, factory)
	if err != nil {
		t.Fatal(err)
	}
	ex2, err := passes.Exclusive(db2, identity, factory)
	if err != nil {
		t.Fatal(err)
	}
	p1, err := ex1(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p1.PurgeBatch(ctx, 1, cutoffT); err != nil {
		t.Fatal(err)
	}
	holders, err := passes.LockHolders(ctx, db2, []string{identity})
	if err != nil || holders[identity].Member != "m1" {
		t.Fatalf("holders %+v, %v: want %s held by m1", holders, err, identity)
	}
	if _, err := db2.ExecContext(ctx, "SELECT pg_terminate_backend(?)", holders[identity].PID); err != nil {
		t.Fatal(err)
	}
	if _, err := p1.PurgeBatch(ctx, 1, cutoffT); !errors.Is(err, passes.ErrLockLost) {
		t.Fatalf("batch after the lock's connection died: %v; want ErrLockLost", err)
	}
	if batches != 1 {
		t.Fatalf("%d batches: one ran without the lock", batches)
	}
	_ = p1.(passes.Closer).Close()
	// The terminated backend lets go of its lock as it exits, a moment later.
	waitFor(t, 10*time.Second, func() bool {
		hs, err := passes.LockHolders(ctx, db2, []string{identity})
		return err == nil && len(hs) == 0
	})
	p2, err := ex2(ctx)
	if err != nil {
		t.Fatalf("sweep once the lock is free: %v", err)
	}
	if err := p2.(passes.Closer).Close(); err != nil {
		t.Fatal(err)
	}
}

// The settings a lock's connection gets are the documented defaults, and a negative
// value leaves the server's own.
func TestApplySweepConn(t *testing.T) {
	db := dbtest.Postgres(t)
	ctx := context.Background()
	read := func(o passes.SweepConnOptions) map[string]string {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Raw(func(any) error { return errBadConn }); _ = c.Close() }()
		if err := passes.ApplySweepConn(ctx, c, o); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, name := range []string{"application_name", "client_connection_check_interval", "tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count", "tcp_user_timeout"} {
			var v string
			if err := c.QueryRowContext(ctx, "SELECT current_setting(?)", name).Scan(&v); err != nil {
				t.Fatal(err)
			}
			got[name] = v
		}
		return got
	}
	got := read(passes.SweepConnOptions{ApplicationName: "retention:m'1"})
	want := map[string]string{"application_name": "retention:m'1", "client_connection_check_interval": "1s", "tcp_user_timeout": "7000"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	// Over TCP the keepalive settings read back as set; over a socket they read 0.
	if got["tcp_keepalives_idle"] != "4" && got["tcp_keepalives_idle"] != "0" {
		t.Errorf("tcp_keepalives_idle = %q, want 4", got["tcp_keepalives_idle"])
	}
	off := read(passes.SweepConnOptions{CheckInterval: -1, UserTimeout: 2500 * time.Millisecond})
	if off["client_connection_check_interval"] != "0" || off["tcp_user_timeout"] != "2500" {
		t.Errorf("with the check off and a 2.5s user timeout: %v", off)
	}
}

// waitFor polls cond until it holds, failing the test past within.
func waitFor(t *testing.T, within time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("condition not met within %v", within)
		}
		<-tick.C
	}
	return time.Since(start)
}

var errBadConn = driver.ErrBadConn
