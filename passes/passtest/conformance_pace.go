package passtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

// paceBehaviours: the pacing signals a table pass gives an adaptive sweep: its probe
// (the default one, or the configured probe_query) runs against the database, a probe
// the database refuses fails startup, and a database without replicas reports no lag;
// a session waiting on a row lock the sweep's connection holds is counted as blocked;
// the commit probe runs where the database has one and leaves no row behind; a session
// running a statement is counted among the busy sessions, unless it is the sweep's.
func paceBehaviours() []behaviour {
	return []behaviour{
		{name: "probe runs, a refused probe fails startup, no replica lag", run: paceProbe},
		{name: "a session waiting on the sweep's lock is counted", run: paceBlocked, skip: func(t Target) string {
			if t.NoRowLocks {
				return "the database has no row locks for a session to wait on"
			}
			return ""
		}},
		{name: "commit probe runs or reports none, and changes no row", run: paceCommitProbe},
		{name: "a session running a statement is counted busy, the sweep's own is not", onTarget: func(t *testing.T, target Target) {
			open := target.OpenAlone
			if open == nil {
				open = target.Open
			}
			paceBusy(t, open(t))
		}},
	}
}

func paceCommitProbe(t *testing.T, db *DB) {
	ctx := context.Background()
	a := newAudit(t, db, passes.TimestampNative)
	a.log(1, auditCutoff, "done")
	sig := a.table(a.spec()).Signals()
	for range 3 {
		if _, err := sig.CommitProbe(ctx); err != nil {
			t.Fatalf("commit probe: %v", err)
		}
	}
	if n := len(a.ids("audit_log")); n != 1 {
		t.Errorf("%d rows after three commit probes, want the 1 there was", n)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if has, err := sig.CommitProbe(cancelled); has && err == nil {
		t.Error("a commit probe on a cancelled context reported success")
	}
}

func paceProbe(t *testing.T, db *DB) {
	ctx := context.Background()
	a := newAudit(t, db, passes.TimestampNative)
	a.log(1, auditCutoff, "done")
	if err := a.table(a.spec()).Signals().Probe(ctx); err != nil {
		t.Fatalf("default probe: %v", err)
	}
	spec := a.spec()
	spec.ProbeQuery = "SELECT state FROM audit_log WHERE id = 1"
	if err := a.table(spec).Signals().Probe(ctx); err != nil {
		t.Fatalf("configured probe: %v", err)
	}
	if res := a.table(spec).ValidateStartup(ctx); res.Failed() {
		t.Fatalf("startup with a good probe: %s", res.Message())
	}
	spec.ProbeQuery = "SELECT no_such_column FROM audit_log"
	if res := a.table(spec).ValidateStartup(ctx); !res.Failed() || !strings.Contains(res.Message(), "probe_query") {
		t.Errorf("startup with a bad probe: %v %q, want a failure naming probe_query", res.Failed(), res.Message())
	}
	lag, replicas, err := a.table(a.spec()).Signals().ReplicaLag(ctx)
	if err != nil || replicas || lag != 0 {
		t.Errorf("replica lag on a database without replicas: %v %v %v", lag, replicas, err)
	}
}

// backendPass is a sweep whose backend is a connection the test holds.
type backendPass struct{ backend int }

func (backendPass) PurgeBatch(context.Context, int, time.Time) (int, error) { return 0, nil }
func (p backendPass) BackendPID() int                                       { return p.backend }

// paceBlocked: a session waiting on a row lock the sweep's connection holds is counted
// for that connection and no other; none is counted before the lock, once it is gone,
// or for a sweep with no connection yet.
func paceBlocked(t *testing.T, db *DB) {
	ctx := context.Background()
	a := newAudit(t, db, passes.TimestampNative)
	a.log(1, auditCutoff.Add(-time.Hour), "done")
	w := newRowWait(t, db)
	backend := w.holderBackend
	sig := a.table(a.spec()).Signals()
	if n := blockedBecomes(t, sig, backend, 0); n != 0 {
		t.Fatalf("blocked before any lock: %d", n)
	}
	w.lock(t)
	w.wait()
	if n := blockedBecomes(t, sig, backend, 1); n != 1 {
		t.Fatalf("blocked = %d, want the one waiting session counted", n)
	}
	if n, err := sig.Blocked(ctx, backendPass{backend + 100000}); err != nil || n != 0 {
		t.Errorf("another connection's blocked: %d %v; want 0", n, err)
	}
	w.release(t)
	if n := blockedBecomes(t, sig, backend, 0); n != 0 {
		t.Errorf("blocked after the lock went: %d", n)
	}
	if n, err := sig.Blocked(ctx, backendPass{}); err != nil || n != 0 {
		t.Errorf("a sweep with no connection yet: %d %v", n, err)
	}
}

// rowWait is row 1 of audit_log locked by one connection's open transaction (the
// holder) and a second connection (the waiter) whose statement waits for that lock.
type rowWait struct {
	holder, waiter               bun.Conn
	holderBackend, waiterBackend int
	tx                           bun.Tx
	waited                       chan struct{}
}

// newRowWait opens the two connections, closed when the test ends; nothing is locked
// yet.
func newRowWait(t *testing.T, db *DB) *rowWait {
	t.Helper()
	ctx := context.Background()
	drv, err := passes.DriverFor(db.DB)
	if err != nil {
		t.Fatal(err)
	}
	w := &rowWait{waited: make(chan struct{})}
	for _, c := range []struct {
		conn    *bun.Conn
		backend *int
	}{{&w.holder, &w.holderBackend}, {&w.waiter, &w.waiterBackend}} {
		conn, err := db.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		if *c.backend, err = drv.Backend(ctx, conn); err != nil {
			t.Fatal(err)
		}
		*c.conn = conn
	}
	return w
}

// lock locks row 1 in a transaction of the holder's, rolled back when the test ends
// (before the connections close: cleanups run last first), so a failure cannot wait
// out the lock.
func (w *rowWait) lock(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	tx, err := w.holder.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if _, err := tx.ExecContext(ctx, "UPDATE audit_log SET state = state WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	w.tx = tx
}

// wait sends the waiter's statement on row 1, which waits for the lock. Its own lock
// wait may time out (MySQL's driver sets 5 s), which ends the wait a test counts too;
// its error says nothing about the count.
func (w *rowWait) wait() {
	go func() {
		_, _ = w.waiter.ExecContext(context.Background(), "UPDATE audit_log SET state = state WHERE id = 1")
		close(w.waited)
	}()
}

// release rolls the holder's transaction back and waits for the waiter's statement.
func (w *rowWait) release(t *testing.T) {
	t.Helper()
	if err := w.tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	<-w.waited
}

// blockedBecomes reads Blocked for backend until it says want, or 30 s have passed, and
// returns the last reading. The readings are 150 ms apart on the wall clock because
// InnoDB refreshes its lock-wait tables from a cache only when they were last read more
// than 0.1 s ago: reads back to back would see the first one's snapshot for ever.
func blockedBecomes(t *testing.T, sig passes.PaceSignals, backend, want int) int {
	t.Helper()
	return countBecomes(t, 150*time.Millisecond, want, func() (int, error) {
		return sig.Blocked(context.Background(), backendPass{backend})
	})
}

// countBecomes reads count every every until it says want, or 30 s have passed, and
// returns the last reading; a read that fails fails the test.
func countBecomes(t *testing.T, every time.Duration, want int, count func() (int, error)) int {
	t.Helper()
	tick := time.NewTicker(every)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		n, err := count()
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

// paceBusy: with nothing running, no session is busy; a session whose statement waits
// on a row lock is counted, and left out when it is the sweep's backend; once it is
// done, none is busy again. A database that shows no sessions reports so, with 0.
func paceBusy(t *testing.T, db *DB) {
	ctx := context.Background()
	a := newAudit(t, db, passes.TimestampNative)
	a.log(1, auditCutoff.Add(-time.Hour), "done")
	sig := a.table(a.spec()).Signals()
	n, shown, err := sig.BusySessions(ctx, backendPass{})
	if err != nil || n != 0 {
		t.Fatalf("busy sessions with nothing running: %d %v, want 0", n, err)
	}
	if !shown {
		return
	}
	w := newRowWait(t, db)
	w.lock(t)
	// The holder, idle inside its transaction, is busy where the database shows such
	// sessions (PostgreSQL) and not where it shows them idle (MySQL): count from here.
	idleInTx, _, err := sig.BusySessions(ctx, backendPass{})
	if err != nil {
		t.Fatal(err)
	}
	w.wait()
	if n := busyBecomes(t, sig, backendPass{}, idleInTx+1); n != idleInTx+1 {
		t.Fatalf("busy = %d with a statement waiting, want %d", n, idleInTx+1)
	}
	if n, _, err := sig.BusySessions(ctx, backendPass{w.waiterBackend}); err != nil || n != idleInTx {
		t.Errorf("busy = %d %v with the waiting session the sweep's, want %d", n, err, idleInTx)
	}
	w.release(t)
	if n := busyBecomes(t, sig, backendPass{}, 0); n != 0 {
		t.Errorf("busy = %d once the statement is done, want 0", n)
	}
}

// busyBecomes reads BusySessions for sweep until it says want, or 30 s have passed,
// and returns the last reading; a session's state changes a moment after its
// statement is sent.
func busyBecomes(t *testing.T, sig passes.PaceSignals, sweep passes.Pass, want int) int {
	t.Helper()
	return countBecomes(t, 50*time.Millisecond, want, func() (int, error) {
		n, _, err := sig.BusySessions(context.Background(), sweep)
		return n, err
	})
}
