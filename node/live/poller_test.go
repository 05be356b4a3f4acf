package live_test

import (
	"context"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/node/live"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// TestPollerAppliesStoredSettings: a real ledger (SQLite) and a real runtime on the
// manual clock; what is stored reaches the pass at the next poll, and what is removed
// returns it to its registration.
func TestPollerAppliesStoredSettings(t *testing.T) {
	ctx := context.Background()
	db := dbtest.SQLite(t)
	if _, err := ledger.Migrate(ctx, db, "live_"); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.New(db, "live_")
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	quiet := logrus.New()
	quiet.SetLevel(logrus.PanicLevel)
	rt := actors.New(actors.Config{Clock: clk, Logger: quiet})
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(time.Hour)
	if err := rt.Register(passes.Registration{Name: "audit-log", New: actortest.NewFakePass().Factory(), Options: opts}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer rt.Stop(ctx)
	p := &live.Poller{Settings: l, Runtime: rt, Clock: clk, Interval: 2 * time.Second}
	p.Start(ctx)
	defer p.Stop()
	status := func() actors.PassStatus { return rt.Status().Passes[0] }

	for key, value := range map[string]string{"pass.audit-log.batch_size": "40", "pass.audit-log.paused": "true", "pass.audit-log.sweep_interval": "10m0s"} {
		if err := l.SetSetting(ctx, key, value, clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if st := status(); st.BatchSize != opts.BatchSize || st.Paused {
		t.Fatalf("before the poll %+v", st)
	}
	clk.Advance(2 * time.Second) // the poll runs in the timer's callback, here
	if st := status(); st.BatchSize != 40 || !st.Paused || st.SweepInterval != 10*time.Minute {
		t.Fatalf("after the poll %+v", st)
	}
	if _, err := l.UnsetSetting(ctx, "pass.audit-log.paused"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.UnsetSetting(ctx, "pass.audit-log.batch_size"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	if st := status(); st.BatchSize != opts.BatchSize || st.Paused || st.SweepInterval != 10*time.Minute {
		t.Fatalf("after unset %+v: want the file's batch size, not paused, the interval still set", st)
	}
}
