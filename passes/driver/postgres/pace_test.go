package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// pidPass is a sweep whose backend is a session the test holds.
type pidPass struct{ pid int }

func (pidPass) PurgeBatch(context.Context, int, time.Time) (int, error) { return 0, nil }
func (p pidPass) BackendPID() int                                       { return p.pid }

// TestSignalsBlocked: a session waiting for a lock the sweep's backend holds is counted
// (pg_locks); none is counted once the lock is gone, nor for a sweep with no backend
// yet. Only PostgreSQL reports sessions blocked by a backend; SQLite reports none.
func TestSignalsBlocked(t *testing.T) {
	db := passtest.Postgres(t)
	cutoff := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	fixture := passtest.Seed(t, db, passtest.Fixture{Table: "events", Cutoff: cutoff, Expired: 1})
	ctx := context.Background()
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	var pid int
	if err := holder.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	tbl, err := passes.NewTable(db.DB, "events", fixture.Spec())
	if err != nil {
		t.Fatal(err)
	}
	sig := tbl.Signals()
	if n, err := sig.Blocked(ctx, pidPass{pid}); err != nil || n != 0 {
		t.Fatalf("blocked before any lock: %d %v", n, err)
	}
	tx, err := holder.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE events SET id = id WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	waiter := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "UPDATE events SET id = id WHERE id = 1")
		waiter <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := sig.Blocked(ctx, pidPass{pid})
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("blocked = %d, want the waiting session counted", n)
		}
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-waiter; err != nil {
		t.Fatal(err)
	}
	if n, err := sig.Blocked(ctx, pidPass{pid}); err != nil || n != 0 {
		t.Errorf("blocked after the lock went: %d %v", n, err)
	}
	if n, err := sig.Blocked(ctx, pidPass{}); err != nil || n != 0 {
		t.Errorf("a sweep with no backend yet: %d %v", n, err)
	}
}
