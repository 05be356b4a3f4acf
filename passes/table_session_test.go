package passes_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// TestSweepSessionSettings: the sweep's connection carries its synchronous_commit and
// statement timeout for every batch (the pass's trusted where reads them, so a row is
// deleted only when they are in force), and the connection goes back to the pool with
// the server's defaults.
func TestSweepSessionSettings(t *testing.T) {
	db := dbtest.Postgres(t)
	db.SetMaxOpenConns(1) // the pool's only connection: the one the sweep pinned
	cases := []struct {
		name, sync, want string
		timeout          time.Duration
		wantTimeout      string
	}{
		{"default is asynchronous", "", "off", 0, "0"},
		{"configured on", "on", "on", 0, "0"},
		{"with a statement timeout", "local", "local", 1500 * time.Millisecond, "1500ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, db, passes.TimestampNative)
			f.log(1, cutoffT.Add(-time.Hour), "done")
			f.log(2, cutoffT.Add(-time.Minute), "done")
			spec := f.spec()
			spec.SynchronousCommit, spec.StatementTimeout = c.sync, c.timeout
			spec.Where = "current_setting('synchronous_commit') = '" + c.want + "' AND current_setting('statement_timeout') = '" + c.wantTimeout + "'"
			p, err := f.table(spec).Factory()(ctx)
			if err != nil {
				t.Fatal(err)
			}
			closer := p.(passes.Closer)
			t.Cleanup(func() { _ = closer.Close() }) // else the fixture's cleanup waits for the pool's only connection
			if n, err := p.PurgeBatch(ctx, 1, cutoffT); err != nil || n != 1 {
				t.Fatalf("first batch = %d, %v; want 1 row deleted under the sweep's settings", n, err)
			}
			if n, err := p.PurgeBatch(ctx, 1, cutoffT); err != nil || n != 1 {
				t.Fatalf("second batch = %d, %v; want 1 row deleted under the sweep's settings", n, err)
			}
			if err := closer.Close(); err != nil {
				t.Fatal(err)
			}
			var sync, timeout string
			if err := db.QueryRowContext(ctx, "SELECT current_setting('synchronous_commit'), current_setting('statement_timeout')").Scan(&sync, &timeout); err != nil {
				t.Fatal(err)
			}
			if sync != "on" || timeout != "0" {
				t.Fatalf("after the sweep the pool's connection has synchronous_commit %q, statement_timeout %q; want the defaults on, 0", sync, timeout)
			}
		})
	}
}

func TestSynchronousCommitValidated(t *testing.T) {
	spec := passes.TableSpec{Table: "t", Key: "id", Timestamp: "ts", SynchronousCommit: "sometimes"}
	err := spec.Validate("events")
	if err == nil || !strings.Contains(err.Error(), `pass "events": synchronous_commit must be one of off, local, remote_write, on, remote_apply, got `+"`sometimes`") {
		t.Fatalf("Validate = %v", err)
	}
}

// TestStatementTimeoutWithoutChildren: a pass without children deletes in one statement
// outside an explicit transaction; its statement timeout still holds.
func TestStatementTimeoutWithoutChildren(t *testing.T) {
	db := dbtest.Postgres(t)
	f := newFixture(t, db, passes.TimestampNative)
	f.log(1, cutoffT.Add(-time.Hour), "done")
	spec := f.spec()
	spec.Children = nil
	spec.Where = "pg_sleep(0.5) IS NOT NULL" // trusted SQL: a slow predicate
	spec.StatementTimeout = 50 * time.Millisecond
	p, err := f.table(spec).Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.(passes.Closer).Close()
	_, err = p.PurgeBatch(context.Background(), 10, cutoffT)
	if err == nil || !strings.Contains(err.Error(), "57014") && !strings.Contains(err.Error(), "statement timeout") {
		t.Fatalf("PurgeBatch = %v, want the statement timeout", err)
	}
	if got := f.ids("audit_log"); len(got) != 1 {
		t.Fatalf("rows %v", got)
	}
}

// TestCancelledBatchCancelsItsStatement: when a batch's context ends, the statement
// running on the sweep's connection is cancelled on the server (pgdriver alone would
// wait for it), so the batch returns PostgreSQL's cancellation.
func TestCancelledBatchCancelsItsStatement(t *testing.T) {
	db := dbtest.Postgres(t)
	f := newFixture(t, db, passes.TimestampNative)
	f.log(1, cutoffT.Add(-time.Hour), "done")
	spec := f.spec()
	spec.Children = nil
	spec.Where = "pg_sleep(30) IS NOT NULL" // trusted SQL: a statement that outlasts the batch
	p, err := f.table(spec).Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.(passes.Closer).Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.PurgeBatch(ctx, 10, cutoffT)
		done <- err
	}()
	var running int
	deadline := time.Now().Add(20 * time.Second)
	for running == 0 && time.Now().Before(deadline) { // wait until the statement runs on the server
		_ = db.QueryRowContext(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND state = 'active' AND pid <> pg_backend_pid()").Scan(&running)
	}
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "57014") {
		t.Fatalf("PurgeBatch = %v, want the server's cancellation (57014)", err)
	}
	if got := f.ids("audit_log"); len(got) != 1 {
		t.Fatalf("rows %v", got)
	}
}
