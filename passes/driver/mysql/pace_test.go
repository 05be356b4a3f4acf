package mysql_test

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// connPass is a sweep whose backend is a connection the test holds.
type connPass struct{ id int }

func (connPass) PurgeBatch(context.Context, int, time.Time) (int, error) { return 0, nil }
func (p connPass) BackendPID() int                                       { return p.id }

// TestSignalsBlocked: a transaction waiting on a row lock the sweep's connection holds
// is counted (INNODB_LOCK_WAITS on MariaDB); none is counted before the lock, once it
// is gone, or for a sweep with no connection yet. MySQL reports no replica lag.
func TestSignalsBlocked(t *testing.T) {
	db := openMySQL(t, "")
	cutoff := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	fixture := passtest.Seed(t, db, passtest.Fixture{Table: "events", Cutoff: cutoff, Expired: 1})
	ctx := context.Background()
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	var id int
	if err := holder.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	tbl, err := passes.NewTable(db.DB, "events", fixture.Spec())
	if err != nil {
		t.Fatal(err)
	}
	sig := tbl.Signals()
	if n, err := sig.Blocked(ctx, connPass{id}); err != nil || n != 0 {
		t.Fatalf("blocked before any lock: %d %v", n, err)
	}
	waiter, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	// The waiter outwaits the driver's 5 s lock wait timeout, however slow the polling.
	if _, err := waiter.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 60"); err != nil {
		t.Fatal(err)
	}
	tx, err := holder.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() // before the waiter closes (defers run last first), so a failure cannot wait out the lock
	if _, err := tx.ExecContext(ctx, "UPDATE events SET id = id WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := waiter.ExecContext(ctx, "UPDATE events SET id = id WHERE id = 1")
		waited <- err
	}()
	if n := blockedBecomes(t, sig, id, 1); n != 1 {
		t.Fatalf("blocked = %d, want the one waiting transaction counted", n)
	}
	if n, err := sig.Blocked(ctx, connPass{id + 100000}); err != nil || n != 0 {
		t.Errorf("another connection's blocked: %d %v; want 0", n, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if n := blockedBecomes(t, sig, id, 0); n != 0 {
		t.Errorf("blocked after the lock went: %d", n)
	}
	if n, err := sig.Blocked(ctx, connPass{}); err != nil || n != 0 {
		t.Errorf("a sweep with no connection yet: %d %v", n, err)
	}
	if lag, ok, err := sig.ReplicaLag(ctx); err != nil || ok || lag != 0 {
		t.Errorf("replica lag = %v, %v, %v; want none reported", lag, ok, err)
	}
}

// blockedBecomes reads Blocked for connection id until it says want, or 30 s have
// passed, and returns the last reading. InnoDB refreshes the lock-wait tables from a
// cache only when they were last read more than 0.1 s ago, so reads back to back would
// see the first one's snapshot for ever: the readings are 150 ms apart, on the wall
// clock, because the server's cache is.
func blockedBecomes(t *testing.T, sig passes.PaceSignals, id, want int) int {
	t.Helper()
	tick := time.NewTicker(150 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		n, err := sig.Blocked(context.Background(), connPass{id})
		if err != nil {
			t.Fatal(err)
		}
		if n == want {
			return n
		}
		select {
		case <-tick.C:
		case <-deadline:
			return n
		}
	}
}
