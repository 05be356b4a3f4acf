package actortest_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// recorder is a testing.TB whose Fatalf records instead of stopping.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func tableOptions(batch, limit int) passes.Options {
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(24 * time.Hour)
	opts.BatchSize, opts.MaxBatchesPerSweep = batch, limit
	return opts
}

// TestSweepOnceRunsATablePassAtTheCutoff runs the real table pass on the runtime: the
// sweep's cutoff is exactly SweepCutoff, so the fixture's split is the pass's.
func TestSweepOnceRunsATablePassAtTheCutoff(t *testing.T) {
	passtest.Each(t, func(t *testing.T, db *passtest.DB) {
		opts := tableOptions(10, 100)
		tbl := passtest.Seed(t, db, passtest.Fixture{Table: "audit", Cutoff: actortest.SweepCutoff(opts), Expired: 57, Fresh: 13, Spacing: time.Millisecond})
		pass, err := passes.NewTable(db.DB, "audit", tbl.Spec())
		if err != nil {
			t.Fatal(err)
		}
		done, events := actortest.SweepOnce(t, actors.Config{}, pass.Registration(opts))
		if done.Reason != actors.Drained || done.Rows != 57 || done.Batches != 6 || !done.Cutoff.Equal(tbl.Cutoff) {
			t.Fatalf("sweep = %+v, want 57 rows in 6 batches, drained, at %v", done, tbl.Cutoff)
		}
		if got := actortest.Filter[actors.BatchDone](events, actortest.Of("audit", actortest.Is[actors.BatchDone]())); len(got) != 6 {
			t.Fatalf("%d BatchDone events, want 6", len(got))
		}
		tbl.RequireSwept(t)
	})
}

// TestSweepOnceStopsAtTheBatchLimit leaves the rest for the next sweep, and keeps every
// fresh row.
func TestSweepOnceStopsAtTheBatchLimit(t *testing.T) {
	passtest.Each(t, func(t *testing.T, db *passtest.DB) {
		opts := tableOptions(10, 2)
		tbl := passtest.Seed(t, db, passtest.Fixture{Table: "audit", Cutoff: actortest.SweepCutoff(opts), Expired: 35, Fresh: 5})
		pass, err := passes.NewTable(db.DB, "audit", tbl.Spec())
		if err != nil {
			t.Fatal(err)
		}
		done, _ := actortest.SweepOnce(t, actors.Config{}, pass.Registration(opts))
		if done.Reason != actors.BatchLimit || done.Rows != 20 || !done.WorkRemains {
			t.Fatalf("sweep = %+v, want 20 rows, batch limit, work remains", done)
		}
		tbl.RequireCount(t, 20)
		tbl.RequireKept(t, tbl.Fresh...)
	})
}

// TestSweepOnceReportsAFailedSweep returns the failed sweep and the failure's event;
// the restarted pass waits its backoff on the standing clock.
func TestSweepOnceReportsAFailedSweep(t *testing.T) {
	boom := errors.New("boom")
	fake := actortest.NewFakePass(actortest.Rows(10), actortest.Fail(boom))
	done, events := actortest.SweepOnce(t, actors.Config{}, passes.Registration{Name: "p", New: fake.Factory(), Options: tableOptions(10, 100)})
	if done.Reason != actors.Failed || done.Rows != 10 {
		t.Fatalf("sweep = %+v", done)
	}
	failed := actortest.Filter[actors.PassFailed](events, actortest.Is[actors.PassFailed]())
	if len(failed) != 1 || !errors.Is(failed[0].Err, boom) {
		t.Fatalf("PassFailed events = %+v", failed)
	}
	if n := len(fake.Calls()); n != 2 {
		t.Fatalf("%d calls, want 2: nothing sweeps after the failure", n)
	}
}

// TestSweepOnceRefusesBatchDelay: a delay on a clock nobody moves would never end.
func TestSweepOnceRefusesBatchDelay(t *testing.T) {
	opts := tableOptions(10, 100)
	opts.BatchDelay = time.Second
	r := &recorder{TB: t}
	actortest.SweepOnce(r, actors.Config{}, passes.Registration{Name: "paced", New: actortest.NewFakePass().Factory(), Options: opts})
	if len(r.failures) != 1 || !strings.Contains(r.failures[0], "SweepOnce paced: BatchDelay is 1s") {
		t.Fatalf("failures %q", r.failures)
	}
}
