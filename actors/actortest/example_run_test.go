package actortest_test

import (
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
)

// testAuditSweeps is a test of a pass on virtual time, as a user writes one: a real
// runtime in a synctest bubble, the harness moving the clock. TestExampleRun runs it.
func testAuditSweeps(t *testing.T) {
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Rows(500), actortest.Rows(20))
		opts := passes.DefaultOptions()
		opts.RetentionPeriod = passes.Retain(time.Hour)
		opts.BatchSize = 500
		opts.SweepInterval = 10 * time.Minute
		h.Register(passes.Registration{Name: "audit", New: fake.Factory(), Options: opts})
		h.Start()

		// The first sweep comes within the startup stagger and drains in two batches.
		done := h.ExpectWithin(opts.MaxStartupStagger, actortest.Is[actors.SweepDone]()).(actors.SweepDone)
		if done.Rows != 520 || done.Batches != 2 || done.Reason != actors.Drained {
			t.Fatalf("first sweep = %+v", done)
		}
		// The next waits the interval, from the end of this one: not a moment sooner.
		h.ExpectNone(opts.SweepInterval-time.Nanosecond, actortest.Is[actors.SweepStarted]())
		h.ExpectWithin(time.Nanosecond, actortest.Is[actors.SweepStarted]())
	})
}

// Run needs the test's *testing.T (it opens a testing/synctest bubble), so this example
// is a whole test file rather than a runnable example; TestExampleRun runs it.
func ExampleRun() {}
