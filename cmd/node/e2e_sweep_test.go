// End-to-end tests of `sweep`: dry run, drain, progress, bounds, and `status` after it.
package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

func TestDryRunThenDrain(t *testing.T) {
	t.Parallel()
	eachDriver(t, func(t *testing.T, e *env) {
		e.seed(1000)
		path := e.config("", "")
		before := e.count("1 = 1")
		dry := retention(t, "sweep", "--config", path, "--dry-run")
		if dry.code != 0 || e.count("1 = 1") != before {
			t.Fatalf("dry run: exit %d, rows %d -> %d: %s", dry.code, before, e.count("1 = 1"), dry.stderr)
		}
		var name string
		var would, kept int
		for _, line := range strings.Split(dry.stdout, "\n") {
			if strings.HasPrefix(line, "audit-log") {
				fmt.Sscan(line, &name, &would, &kept)
			}
		}
		cutoff := time.Now().Add(-30 * 24 * time.Hour).Unix()
		wantGone := e.count(fmt.Sprintf("occurred_at < %d AND state = 'done' AND id NOT IN (SELECT audit_log_id FROM %slegal_hold)", cutoff, e.prefix))
		if would != wantGone || kept == 0 {
			t.Fatalf("dry run says %d would go, %d kept; the table says %d:\n%s", would, kept, wantGone, dry.stdout)
		}
		drain := retention(t, "sweep", "--config", path, "--drain")
		if drain.code != 0 {
			t.Fatalf("drain: exit %d: %s", drain.code, drain.stderr)
		}
		if got := before - e.count("1 = 1"); got != would {
			t.Fatalf("drain deleted %d, the dry run said %d\n%s", got, would, drain.stdout)
		}
		if left := e.count(fmt.Sprintf("occurred_at < %d AND state = 'done' AND id NOT IN (SELECT audit_log_id FROM %slegal_hold)", cutoff, e.prefix)); left != 0 {
			t.Fatalf("%d expired rows left", left)
		}
		if !strings.Contains(drain.stdout, "DELETED") || !strings.Contains(drain.stdout, "drained") {
			t.Fatalf("no summary:\n%s", drain.stdout)
		}
	})
}

func TestSweepProgressBars(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	e.seed(500)
	r := retention(t, "sweep", "--config", e.config("", ""), "--progress", "always")
	if r.code != 0 || !strings.Contains(r.stdout, "rows [") || !strings.Contains(r.stdout, "audit-log") || !strings.Contains(r.stdout, "STOP REASON") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r := retention(t, "sweep", "--config", e.config("", ""), "--progress", "sometimes"); r.code != 2 {
		t.Fatalf("a bad --progress exited %d, want 2", r.code)
	}
}

func TestStatusShowsTheLastRunAndBacklog(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	e.seed(200)
	path := e.config("", "")
	if r := retention(t, "sweep", "--config", path); r.code != 0 {
		t.Fatalf("sweep: %d %s", r.code, r.stderr)
	}
	r := retention(t, "status", "--config", path)
	if r.code != 0 || !strings.Contains(r.stdout, "Completed") || !strings.Contains(r.stdout, "drained") {
		t.Fatalf("status: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "audit-log") && !strings.HasPrefix(strings.Fields(line)[1], "0") {
			t.Fatalf("backlog after a drained sweep is not 0: %q", line)
		}
	}
}

// TestDrainExitsOneWhileLockedRowsRemain holds 50 expired, deletable rows locked in
// another transaction: SKIP LOCKED passes over them, and the drain, after retrying within
// --drain-retry, exits 1 naming how many are left and why. Once they are released a drain
// deletes them and exits 0.
func TestDrainExitsOneWhileLockedRowsRemain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverPostgres)
	e.seed(1000)
	path := e.config("", "")
	ctx := context.Background()
	cutoff := time.Now().Add(-30 * 24 * time.Hour).Unix()
	deletable := fmt.Sprintf("occurred_at < %d AND state = 'done' AND id NOT IN (SELECT audit_log_id FROM %slegal_hold)", cutoff, e.prefix)
	holder, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	var locked []int64
	if err := holder.NewRaw("SELECT id FROM "+e.prefix+"audit_log WHERE "+deletable+" AND id > 500 ORDER BY id LIMIT 50 FOR UPDATE").Scan(ctx, &locked); err != nil || len(locked) != 50 {
		t.Fatalf("locked %d rows: %v", len(locked), err)
	}

	r := retention(t, "sweep", "--config", path, "--drain", "--drain-retry", "1s")
	if r.code != 1 || !strings.Contains(r.stderr, "audit-log: 50 expired rows left (") || !strings.Contains(r.stderr, "locked by other transactions") {
		t.Fatalf("drain with locked rows: exit %d, stderr:\n%s\nstdout:\n%s", r.code, r.stderr, r.stdout)
	}
	if left := e.count(deletable); left != 50 {
		t.Fatalf("%d deletable rows left, want the 50 locked ones", left)
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if r := retention(t, "sweep", "--config", path, "--drain"); r.code != 0 {
		t.Fatalf("drain after the locks went: exit %d: %s", r.code, r.stderr)
	}
	if left := e.count(deletable); left != 0 {
		t.Fatalf("%d deletable rows left after the locks went", left)
	}
}

// TestASweepWhoseBatchesTimeOutExitsOne makes every batch outlast batch_timeout: the
// sweep, drained or not, deleted nothing and must not exit 0.
func TestASweepWhoseBatchesTimeOutExitsOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverPostgres)
	e.seed(100)
	before := e.count("1 = 1")
	path := e.config("    where: \"(SELECT pg_sleep(0.5)) IS NOT NULL\"\n    batch_timeout: 100ms", "")
	r := retention(t, "sweep", "--config", path)
	if r.code != 1 || !strings.Contains(r.stderr, "audit-log: a batch timed out") || !strings.Contains(r.stdout, "cancelled") {
		t.Fatalf("sweep: exit %d, stderr:\n%s\nstdout:\n%s", r.code, r.stderr, r.stdout)
	}
	r = retention(t, "sweep", "--config", path, "--drain", "--drain-retry", "1s")
	if r.code != 1 || !strings.Contains(r.stderr, "expired rows left (its batches time out") {
		t.Fatalf("drain: exit %d, stderr:\n%s\nstdout:\n%s", r.code, r.stderr, r.stdout)
	}
	if e.count("1 = 1") != before {
		t.Fatal("a cancelled batch deleted rows")
	}
}
