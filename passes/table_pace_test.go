package passes_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

func TestProbeQueryValidate(t *testing.T) {
	refused := []struct{ query, problem string }{
		{"DELETE FROM audit_log", "SELECT or WITH"},
		{"SELECT 1; DELETE FROM audit_log", "';'"},
		{"SELECT 1 -- x", "comment"},
		{"SELECT 1)", "closes a parenthesis"},
		{"SELECT $$x$$", "'$'"},
		{"  ", "blank"},
	}
	for _, tc := range refused {
		spec := passes.TableSpec{Table: "audit_log", Key: "id", Timestamp: "occurred_at", ProbeQuery: tc.query}
		err := spec.Validate("audit")
		if err == nil || !strings.Contains(err.Error(), "probe_query") || !strings.Contains(err.Error(), tc.problem) || !strings.Contains(err.Error(), `pass "audit"`) {
			t.Errorf("probe_query %q: error %v, want one naming the pass, probe_query and %q", tc.query, err, tc.problem)
		}
	}
	for _, q := range []string{"SELECT 1", "select id from audit_log where id = 7", "WITH x AS (SELECT 1) SELECT * FROM x"} {
		spec := passes.TableSpec{Table: "audit_log", Key: "id", Timestamp: "occurred_at", ProbeQuery: q}
		if err := spec.Validate("audit"); err != nil {
			t.Errorf("probe_query %q refused: %v", q, err)
		}
	}
}

// TestTableSignalsProbe: the default probe and a configured one run against the table;
// a probe the database refuses fails startup, naming probe_query.
func TestTableSignalsProbe(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		f.log(1, cutoffT, "done")
		ctx := context.Background()
		if err := f.table(f.spec()).Signals().Probe(ctx); err != nil {
			t.Fatalf("default probe: %v", err)
		}
		spec := f.spec()
		spec.ProbeQuery = "SELECT state FROM " + f.p + "audit_log WHERE id = 1"
		if err := f.table(spec).Signals().Probe(ctx); err != nil {
			t.Fatalf("configured probe: %v", err)
		}
		if res := f.table(spec).ValidateStartup(ctx); res.Failed() {
			t.Fatalf("startup with a good probe: %s", res.Message())
		}
		spec.ProbeQuery = "SELECT no_such_column FROM " + f.p + "audit_log"
		if res := f.table(spec).ValidateStartup(ctx); !res.Failed() || !strings.Contains(res.Message(), "probe_query") {
			t.Errorf("startup with a bad probe: %v %q, want a failure naming probe_query", res.Failed(), res.Message())
		}
		lag, replicas, err := f.table(f.spec()).Signals().ReplicaLag(ctx)
		if err != nil || replicas || lag != 0 {
			t.Errorf("replica lag on a database without replicas: %v %v %v", lag, replicas, err)
		}
	})
}

// pidPass is a sweep whose backend is a session the test holds.
type pidPass struct{ pid int }

func (pidPass) PurgeBatch(context.Context, int, time.Time) (int, error) { return 0, nil }
func (p pidPass) BackendPID() int                                       { return p.pid }

// TestTableSignalsBlocked: on PostgreSQL, a session waiting for a lock the sweep's
// backend holds is counted; none is counted once the lock is gone.
func TestTableSignalsBlocked(t *testing.T) {
	db := dbtest.Postgres(t)
	if db.Dialect().Name() != dialect.PG {
		t.Fatal("not PostgreSQL")
	}
	f := newFixture(t, db, passes.TimestampNative)
	f.log(1, cutoffT, "done")
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
	sig := f.table(f.spec()).Signals()
	if n, err := sig.Blocked(ctx, pidPass{pid}); err != nil || n != 0 {
		t.Fatalf("blocked before any lock: %d %v", n, err)
	}
	tx, err := holder.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+f.p+"audit_log SET state = 'failed' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	waiter := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "UPDATE "+f.p+"audit_log SET state = 'done' WHERE id = 1")
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
