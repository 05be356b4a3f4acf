package actors_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// TestExpiredButContendedStatus: a pass whose retire phase cannot take an expired
// partition's lock says, in its status, how many wholly expired partitions the sweep
// left attached and why (contended), apart from "nothing expired"; once the holder is
// gone a later sweep retires them and the status clears.
func TestExpiredButContendedStatus(t *testing.T) {
	t.Parallel()
	db := dbtest.Postgres(t)
	ctx := context.Background()
	table := fmt.Sprintf("t%08x_events", rand.Uint32())
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, strings.ReplaceAll(q, "{t}", table)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE {t} (id BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL, PRIMARY KEY (at, id)) PARTITION BY RANGE (at)`)
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+table) })
	for m := 1; m <= 3; m++ {
		exec(fmt.Sprintf(`CREATE TABLE {t}_m%d PARTITION OF {t} FOR VALUES FROM ('2000-%02d-01') TO ('2000-%02d-01')`, m, m, m+1))
		exec(fmt.Sprintf(`INSERT INTO {t} (id, at) VALUES (%d, '2000-%02d-10')`, m, m))
		t.Cleanup(func() {
			_, _ = db.ExecContext(context.Background(), fmt.Sprintf("DROP TABLE IF EXISTS %s_m%d", table, m))
		})
	}
	exec(`CREATE TABLE {t}_rest PARTITION OF {t} FOR VALUES FROM ('2000-04-01') TO (MAXVALUE)`)
	exec(`INSERT INTO {t} (id, at) VALUES (99, now())`)
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback() }()
	if _, err := holder.ExecContext(ctx, "LOCK TABLE "+table+"_m1 IN ACCESS SHARE MODE"); err != nil {
		t.Fatal(err)
	}
	tbl, err := passes.NewTable(db, "events", passes.TableSpec{Table: table, KeyColumns: []string{"at", "id"}, Timestamp: "at",
		Partitions: &passes.PartitionSpec{LockTimeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.BatchSize, opts.MaxStartupStagger, opts.SweepInterval = passes.Retain(time.Hour), 10, 0, time.Hour
	rt := actors.New(actors.Config{Logger: quietLogger()})
	if err := rt.Register(tbl.Registration(opts)); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rt.Stop(ctx) }()
	// swept waits for the pass's sweep number n to end (a bound on a hang).
	swept := func(n int64) actors.PassStatus {
		t.Helper()
		var ended actors.PassStatus
		waitUntil(t, func() bool {
			for _, s := range rt.Status().Passes {
				if s.Name == "events" && s.Sweeps >= n && s.State == actors.StateWaiting && !s.LastSweepEnded.IsZero() {
					ended = s
					return true
				}
			}
			return false
		})
		return ended
	}
	first := swept(1)
	if first.ExpiredPartitionsLeft != 3 || !strings.HasPrefix(first.ExpiredPartitionsReason, "contended: ") {
		t.Fatalf("after the contended sweep: %d expired partitions left (%q); want 3, contended", first.ExpiredPartitionsLeft, first.ExpiredPartitionsReason)
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	// Another session (autovacuum) may hold the partition for a moment after the
	// holder is gone, so sweeps are asked for until one retires them all (bounded).
	for n := first.Sweeps + 1; ; n++ {
		if n > first.Sweeps+20 {
			t.Fatal("no later sweep retired the expired partitions")
		}
		if err := rt.Trigger("events"); err != nil {
			t.Fatal(err)
		}
		s := swept(n)
		if s.ExpiredPartitionsLeft == 0 {
			if s.ExpiredPartitionsReason != "" {
				t.Fatalf("cleared count with a reason left: %q", s.ExpiredPartitionsReason)
			}
			break
		}
		if !strings.HasPrefix(s.ExpiredPartitionsReason, "contended: ") {
			t.Fatalf("sweep %d: %d left, reason %q", n, s.ExpiredPartitionsLeft, s.ExpiredPartitionsReason)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_inherits WHERE inhparent = to_regclass(?)", table).Scan(&n); err != nil || n != 1 {
		t.Fatalf("partitions left attached: %d, %v; want only the current one", n, err)
	}
}
