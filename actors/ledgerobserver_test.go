package actors_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// TestLedgerRecordsSweeps runs real sweeps on the wall clock and reads the ledger back:
// a completed sweep with a skipped row, and a failed one with its error.
func TestLedgerRecordsSweeps(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		p := fmt.Sprintf("l%08x_", rand.Uint32())
		t.Cleanup(func() {
			for _, table := range []string{"settings", "dead_letter", "work_queue", "log", "metadata", "node", "quarantine", "backlog_sample", "partition_retirements", "migrations", "migration_locks", "holder", "events"} {
				_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+p+table)
			}
		})
		if _, err := ledger.Migrate(ctx, db, p); err != nil {
			t.Fatal(err)
		}
		led, _ := ledger.New(db, p)
		for _, s := range []string{
			"CREATE TABLE " + p + "events (id BIGINT PRIMARY KEY, at BIGINT NOT NULL)",
			"CREATE TABLE " + p + "holder (id BIGINT PRIMARY KEY, event_id BIGINT NOT NULL REFERENCES " + p + "events (id))",
			"INSERT INTO " + p + "events (id, at) VALUES (1, 10), (2, 20), (3, 30), (4, 40)",
			"INSERT INTO " + p + "holder (id, event_id) VALUES (1, 3)",
		} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		tbl, err := passes.NewTable(db, "events", passes.TableSpec{Table: p + "events", Key: "id", Timestamp: "at", TimestampFormat: passes.TimestampUnixSeconds})
		if err != nil {
			t.Fatal(err)
		}
		opts := passes.DefaultOptions()
		opts.RetentionPeriod, opts.MaxStartupStagger = passes.Retain(time.Hour), 0
		boom := errors.New("permission denied for table orders")
		done := make(chan actors.SweepDone, 2)
		rt := actors.New(actors.Config{Logger: quietLogger(), Observers: []actors.Observer{
			&actors.LedgerObserver{Ledger: led},
			actors.ObserverFunc(func(e actors.Event) error {
				if d, ok := e.(actors.SweepDone); ok {
					done <- d
				}
				return nil
			}),
		}})
		if err := rt.Register(tbl.Registration(opts),
			passes.Registration{Name: "orders", Options: opts, New: passes.Reuse(passes.PassFunc(func(context.Context, int, time.Time) (int, error) {
				return 0, boom
			}))}); err != nil {
			t.Fatal(err)
		}
		if err := rt.Start(ctx); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			select {
			case <-done:
			case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
				t.Fatal("the sweeps did not end")
			}
		}
		if err := rt.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if failures, _ := rt.ObserverFailures(); failures != 0 {
			t.Fatalf("%d ledger writes failed", failures)
		}

		runs, err := led.Runs(ctx, "events", 5)
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs of events = %+v, %v", runs, err)
		}
		r := runs[0]
		if r.State != ledger.Completed || r.RowsDeleted != 3 || r.RowsSkipped != 1 || r.Batches != 1 || r.EndTime == nil || *r.StopReason != "held" {
			t.Fatalf("events run = %+v", r)
		}
		logs, _ := led.Logs(ctx, r.ID)
		if len(logs) != 1 || logs[0].RowKey == nil || *logs[0].RowKey != "3" {
			t.Fatalf("events logs = %+v, want the skipped row 3", logs)
		}
		failed, _ := led.Runs(ctx, "orders", 5)
		if len(failed) == 0 || failed[len(failed)-1].State != ledger.Failed || failed[len(failed)-1].Error == nil {
			t.Fatalf("orders runs = %+v", failed)
		}
	})
}

// TestABrokenLedgerNeverStopsASweep drops the ledger's tables under a running runtime:
// every write fails, each failure is counted, and the sweeps go on.
func TestABrokenLedgerNeverStopsASweep(t *testing.T) {
	db := dbtest.SQLite(t)
	l := migratedLedger(t, db)
	if _, err := db.ExecContext(context.Background(), "DROP TABLE "+l.Prefix()+"metadata"); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	n := startNode(t, l, actors.Config{}, func() passes.Registration {
		opts := passes.DefaultOptions()
		opts.RetentionPeriod, opts.MaxStartupStagger = passes.Retain(time.Hour), 0
		return passes.Registration{Name: "p", Options: opts, New: passes.Reuse(passes.PassFunc(func(context.Context, int, time.Time) (int, error) {
			calls.Add(1)
			return 0, nil
		}))}
	}())
	select {
	case d := <-n.done:
		if d.Reason != actors.Drained {
			t.Fatalf("sweep ended %s", d.Reason)
		}
	case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
		t.Fatal("the sweep did not end")
	}
	if failures, _ := n.rt.ObserverFailures(); failures == 0 || calls.Load() != 1 {
		t.Fatalf("observer failures %d, calls %d: want failed ledger writes and a finished sweep", failures, calls.Load())
	}
}
