package actors_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// TestTwoRuntimesSweepOneTableAtOnce runs two runtimes (two nodes, as far as the
// database can tell) over the same table at the same moment, on the wall clock: no
// errors, and exactly the expired rows are gone.
func TestTwoRuntimesSweepOneTableAtOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		table := fmt.Sprintf("t%08x_events", rand.Uint32())
		if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (id BIGINT PRIMARY KEY, at BIGINT NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+table) })
		if _, err := db.ExecContext(ctx, "CREATE INDEX "+table+"_at ON "+table+" (at, id)"); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		cutoff := now.Add(-time.Hour).Unix()
		const rows = 3000
		var values []string
		for id := 1; id <= rows; id++ {
			at := cutoff - int64(rows-id) - 1 // expired
			if id%10 == 0 {
				at = cutoff + int64(id) // kept
			}
			values = append(values, fmt.Sprintf("(%d, %d)", id, at))
		}
		for start := 0; start < len(values); start += 500 {
			if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" (id, at) VALUES "+strings.Join(values[start:min(start+500, len(values))], ", ")); err != nil {
				t.Fatal(err)
			}
		}

		var mu sync.Mutex
		var failures []error
		done := make(chan actors.SweepDone, 2)
		var runtimes []*actors.Runtime
		for range 2 {
			tbl, err := passes.NewTable(db, "events", passes.TableSpec{Table: table, Key: "id", Timestamp: "at", TimestampFormat: passes.TimestampUnixSeconds})
			if err != nil {
				t.Fatal(err)
			}
			opts := passes.DefaultOptions()
			opts.RetentionPeriod, opts.BatchSize, opts.MaxStartupStagger, opts.MaxBatchesPerSweep = passes.Retain(time.Hour), 50, 0, 1000
			rt := actors.New(actors.Config{Logger: quietLogger(), Observers: []actors.Observer{actors.ObserverFunc(func(e actors.Event) error {
				switch e := e.(type) {
				case actors.PassFailed:
					mu.Lock()
					failures = append(failures, e.Err)
					mu.Unlock()
				case actors.SweepDone:
					done <- e
				}
				return nil
			})}})
			if err := rt.Register(tbl.Registration(opts)); err != nil {
				t.Fatal(err)
			}
			runtimes = append(runtimes, rt)
		}
		for _, rt := range runtimes {
			if err := rt.Start(ctx); err != nil {
				t.Fatal(err)
			}
		}
		total := 0
		for range 2 {
			select {
			case d := <-done:
				total += d.Rows
				// While the other runtime holds the rows, a sweep may find only locked
				// ones and end contended; the counts below still prove nothing was lost.
				if d.Reason != actors.Drained && d.Reason != actors.Contended {
					t.Errorf("sweep ended %s", d.Reason)
				}
			case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
				t.Fatal("the sweeps did not finish")
			}
		}
		for _, rt := range runtimes {
			_ = rt.Stop(ctx)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(failures) > 0 {
			t.Fatalf("failures: %v", failures)
		}
		var left []int64
		if err := db.NewSelect().TableExpr(table).Column("id").Order("id").Scan(ctx, &left); err != nil {
			t.Fatal(err)
		}
		if len(left) != rows/10 || total != rows-rows/10 {
			t.Fatalf("%d rows left (want %d), %d deleted in all (want %d)", len(left), rows/10, total, rows-rows/10)
		}
		for i, id := range left {
			if id != int64(10*(i+1)) {
				t.Fatalf("kept %v..., want every tenth id", left[:min(len(left), 20)])
			}
		}
	})
}
