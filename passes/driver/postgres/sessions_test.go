package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// PostgreSQL pins a sweep's connection and sets its session (driver.Sessions); these
// tests read that session's settings and the server's own cancellation, which only
// PostgreSQL has (a driver that does not pin bounds statements by the batch's context).

var sessionCutoff = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// sessionTable is a table of expired rows on a fresh schema.
func sessionTable(t *testing.T, expired int) (*passtest.DB, *passtest.Table) {
	t.Helper()
	db := passtest.Postgres(t)
	return db, passtest.Seed(t, db, passtest.Fixture{Table: "events", Cutoff: sessionCutoff, Expired: expired})
}

// TestSweepSessionSettings: the sweep's connection carries its synchronous_commit and
// statement timeout for every batch (the pass's trusted where reads them, so a row is
// deleted only when they are in force), and the connection goes back to the pool with
// the server's defaults.
func TestSweepSessionSettings(t *testing.T) {
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
			db, fixture := sessionTable(t, 2)
			db.SetMaxOpenConns(1) // the pool's only connection: the one the sweep pinned
			spec := fixture.Spec()
			spec.SynchronousCommit, spec.StatementTimeout = c.sync, c.timeout
			spec.Where = "current_setting('synchronous_commit') = '" + c.want + "' AND current_setting('statement_timeout') = '" + c.wantTimeout + "'"
			tbl, err := passes.NewTable(db.DB, "events", spec)
			if err != nil {
				t.Fatal(err)
			}
			p, err := tbl.Factory()(ctx)
			if err != nil {
				t.Fatal(err)
			}
			closer := p.(passes.Closer)
			t.Cleanup(func() { _ = closer.Close() }) // else the fixture's cleanup waits for the pool's only connection
			for batch := 1; batch <= 2; batch++ {
				if n, err := p.PurgeBatch(ctx, 1, sessionCutoff); err != nil || n != 1 {
					t.Fatalf("batch %d = %d, %v; want 1 row deleted under the sweep's settings", batch, n, err)
				}
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

// TestStatementTimeout: the statement timeout on the sweep's session holds for a pass
// without children, which deletes in one statement outside an explicit transaction, and
// for one with children, whose batch is one transaction.
func TestStatementTimeout(t *testing.T) {
	for _, children := range []bool{false, true} {
		t.Run(fmt.Sprintf("children %v", children), func(t *testing.T) {
			db, fixture := sessionTable(t, 1)
			spec := fixture.Spec()
			if children {
				if _, err := db.DB.ExecContext(context.Background(), "CREATE TABLE events_child (id BIGINT PRIMARY KEY, events_id BIGINT REFERENCES events (id))"); err != nil {
					t.Fatal(err)
				}
				spec.Children = []passes.ChildSpec{{Table: "events_child", ForeignKey: "events_id"}}
			}
			spec.Where = "pg_sleep(0.5) IS NOT NULL" // trusted SQL: a slow predicate
			spec.StatementTimeout = 50 * time.Millisecond
			tbl, err := passes.NewTable(db.DB, "events", spec)
			if err != nil {
				t.Fatal(err)
			}
			p, err := tbl.Factory()(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer p.(passes.Closer).Close()
			_, err = p.PurgeBatch(context.Background(), 10, sessionCutoff)
			if err == nil || !strings.Contains(err.Error(), "57014") && !strings.Contains(err.Error(), "statement timeout") {
				t.Fatalf("PurgeBatch = %v, want the statement timeout", err)
			}
			fixture.RequireCount(t, 1)
		})
	}
}

// TestCancelledBatchCancelsItsStatement: when a batch's context ends, the statement
// running on the sweep's connection is cancelled on the server (pgdriver alone would
// wait for it), so the batch returns PostgreSQL's cancellation.
func TestCancelledBatchCancelsItsStatement(t *testing.T) {
	db, fixture := sessionTable(t, 1)
	spec := fixture.Spec()
	spec.Where = "pg_sleep(30) IS NOT NULL" // trusted SQL: a statement that outlasts the batch
	tbl, err := passes.NewTable(db.DB, "events", spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tbl.Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.(passes.Closer).Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.PurgeBatch(ctx, 10, sessionCutoff)
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
	fixture.RequireCount(t, 1)
}
