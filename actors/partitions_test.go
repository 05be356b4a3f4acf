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

// TestPartitionRetirementIsABatch runs a pass with partitions: in a runtime: each
// retired partition is one batch of the sweep, so max_batches_per_sweep bounds the
// retirements (the sweep ends at its batch limit, not as contended though no batch
// counted a row), each retirement reaches the observers as a PartitionEvent, and the
// ledger holds a log row for it, written for the report made before the drop, with
// both bounds and the rows as an estimate.
func TestPartitionRetirementIsABatch(t *testing.T) {
	t.Run("bounded", func(t *testing.T) { retirementSweep(t, 2, actors.BatchLimit, 2) })
	// Unbounded, six retirements in a row: none counts a row, yet none is idle, so
	// the sweep is not taken for contended after ContendedAfter of them.
	t.Run("unbounded", func(t *testing.T) { retirementSweep(t, 0, actors.Drained, 7) })
}

// retirementSweep runs one sweep of six expired monthly partitions and a current one
// with maxBatches, and checks its end, its batches and the ledger's log rows.
func retirementSweep(t *testing.T, maxBatches int, reason actors.StopReason, batches int) {
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
	for m := 1; m <= 6; m++ {
		exec(fmt.Sprintf(`CREATE TABLE {t}_m%d PARTITION OF {t} FOR VALUES FROM ('2000-%02d-01') TO ('2000-%02d-01')`, m, m, m+1))
		exec(fmt.Sprintf(`INSERT INTO {t} (id, at) VALUES (%d, '2000-%02d-10')`, m, m))
		t.Cleanup(func() {
			_, _ = db.ExecContext(context.Background(), fmt.Sprintf("DROP TABLE IF EXISTS %s_m%d", table, m))
		})
	}
	exec(`CREATE TABLE {t}_rest PARTITION OF {t} FOR VALUES FROM ('2000-07-01') TO (MAXVALUE)`)
	exec(`INSERT INTO {t} (id, at) VALUES (99, now())`)
	led := migratedLedger(t, db)
	tbl, err := passes.NewTable(db, "events", passes.TableSpec{Table: table, KeyColumns: []string{"at", "id"}, Timestamp: "at", Partitions: &passes.PartitionSpec{}})
	if err != nil {
		t.Fatal(err)
	}
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.BatchSize, opts.MaxStartupStagger, opts.MaxBatchesPerSweep = passes.Retain(time.Hour), 10, 0, maxBatches
	done := make(chan actors.SweepDone, 1)
	var retired []string
	rt := actors.New(actors.Config{Logger: quietLogger(), Observers: []actors.Observer{
		&actors.LedgerObserver{Ledger: led},
		actors.ObserverFunc(func(e actors.Event) error {
			switch e := e.(type) {
			case actors.PartitionEvent:
				if e.Report.Outcome == passes.PartitionRetired {
					retired = append(retired, e.Report.Partition[strings.Index(e.Report.Partition, ".")+1:])
				}
			case actors.SweepDone:
				select {
				case done <- e:
				default:
				}
			}
			return nil
		})}})
	if err := rt.Register(tbl.Registration(opts)); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sweep := <-done
	if err := rt.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if sweep.Reason != reason || sweep.Batches != batches || sweep.Rows != 0 {
		t.Fatalf("sweep ended %s after %d batches and %d rows; want %s after %d batches, no row counted", sweep.Reason, sweep.Batches, sweep.Rows, reason, batches)
	}
	var want []string
	for m := 1; m <= min(batches, 6); m++ {
		want = append(want, fmt.Sprintf("%s_m%d", table, m))
	}
	if fmt.Sprint(retired) != fmt.Sprint(want) {
		t.Fatalf("retired %v, want %v (oldest first, one a batch)", retired, want)
	}
	runs, err := led.Runs(ctx, "events", 1)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	logs, err := led.Logs(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var retiring int
	for _, l := range logs {
		if strings.Contains(l.Message, " retiring: estimated rows ") && strings.Contains(l.Message, ", mode drop, cutoff ") &&
			strings.Contains(l.Message, "[2000-0") {
			retiring++
		}
	}
	if retiring != len(want) {
		t.Fatalf("the ledger logs %d retiring rows, want %d: %+v", retiring, len(want), logs)
	}
}
