package metrics

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// A pass's start and every sweep's end keep a backlog sample of the pass, with nobody
// scraping /metrics: 30 expired rows, a sweep of at most one batch of 10, three sweeps,
// samples of 30 (before the first sweep), 20, 10 and 0 rows; a fourth sweep finding the
// same 0 keeps none. The sweeps after the first end within the sampler's one-minute
// floor: each is measured when the floor has passed, not dropped. On a manual clock.
func TestBacklogSampledAtEverySweepsEnd(t *testing.T) {
	ctx := context.Background()
	db, err := passes.Open(ctx, passes.DriverSQLite, filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := ledger.Migrate(ctx, db, "r_"); err != nil {
		t.Fatal(err)
	}
	l, _ := ledger.New(db, "r_")
	old := time.Now().Add(-40 * 24 * time.Hour).Unix()
	for _, q := range []string{
		"CREATE TABLE doc (id BIGINT PRIMARY KEY, at BIGINT NOT NULL)",
		fmt.Sprintf("WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM g WHERE i < 30) INSERT INTO doc (id, at) SELECT i, %d FROM g", old),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tbl, err := passes.NewTable(db, "docs", passes.TableSpec{Table: "doc", Key: "id", Timestamp: "at", TimestampFormat: passes.TimestampUnixSeconds})
	if err != nil {
		t.Fatal(err)
	}
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(30 * 24 * time.Hour)
	// The first sweep waits out a stagger on a manual clock, so the start's sample is
	// taken before any row goes; the later sweeps are triggered.
	opts.BatchSize, opts.MaxBatchesPerSweep, opts.MaxStartupStagger, opts.SweepInterval = 10, 1, time.Hour, 24*time.Hour
	clk := clock.NewManual(time.Now())
	c := NewBacklogCollector([]Table{{Table: tbl, Options: opts}})
	c.Recorder = l
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	sampler := c.SampleSweeps(sctx, time.Minute, clk)

	swept := make(chan actors.SweepDone, 8)
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	// The sampler is told after the test's observer, so a sample may land after the
	// test hears of the sweep: the test waits for the sample, not the sweep.
	rt := actors.New(actors.Config{Logger: quiet, Clock: clk, Observers: []actors.Observer{sampler, actors.ObserverFunc(func(e actors.Event) error {
		if d, ok := e.(actors.SweepDone); ok {
			swept <- d
		}
		return nil
	})}})
	if err := rt.Register(tbl.Registration(opts)); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rt.Stop(ctx) }()

	poll := func(what string, cond func([]ledger.BacklogSample) bool) []ledger.BacklogSample {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		tick := time.NewTicker(20 * time.Millisecond) // polling the ledger for the outcome
		defer tick.Stop()
		for {
			hist, err := l.BacklogHistory(ctx, "docs", time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if cond(hist) {
				return hist
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s: the ledger holds %+v", what, hist)
			}
			<-tick.C
		}
	}
	hist := poll("the start's sample", func(h []ledger.BacklogSample) bool { return len(h) == 1 })
	rows := []int64{hist[0].Rows}
	// To the stagger's end and no further: the first sweep starts there, and a clock
	// that jumped on past its batch's BatchTimeout (a minute) would cancel the batch
	// mid-flight, as CI once saw (the sweep reported 0 deleted, cancelled).
	due, ok := clk.NextDue()
	if !ok {
		t.Fatal("no stagger timer on the clock")
	}
	clk.AdvanceTo(due)
	for sweep := range 4 {
		select {
		case <-swept:
		case <-time.After(time.Minute): // a bound on a hang
			t.Fatalf("sweep %d did not end", sweep+1)
		}
		if sweep > 0 {
			// Within the floor: the sampler defers the measurement by a timer due a
			// minute after the last (the runtime's own next sweep is a day away).
			at := clk.Now()
			poll("the deferred measurement's timer", func([]ledger.BacklogSample) bool {
				due, ok := clk.NextDue()
				return ok && !due.After(at.Add(time.Minute))
			})
			if n := sampler.Measured("docs"); n != sweep+1 {
				t.Fatalf("sweep %d: %d measurements before the floor passed; want %d", sweep+1, n, sweep+1)
			}
			clk.Advance(time.Minute)
		}
		if sweep < 3 {
			hist := poll(fmt.Sprintf("sweep %d's sample", sweep+1), func(h []ledger.BacklogSample) bool { return len(h) == sweep+2 })
			rows = append(rows, hist[sweep+1].Rows)
		} else {
			// Measured, and not kept: the same as the last sample.
			poll("the fourth sweep's measurement", func(h []ledger.BacklogSample) bool { return len(h) == 4 && sampler.Measured("docs") == 5 })
		}
		if sweep < 3 {
			if err := rt.Trigger("docs"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fmt.Sprint(rows) != "[30 20 10 0]" {
		t.Errorf("samples = %v; want [30 20 10 0], one at the start and one at each sweep's end", rows)
	}
	if hist, _ := l.BacklogHistory(ctx, "docs", time.Time{}); len(hist) != 4 {
		t.Errorf("%d samples after a fourth sweep that changed nothing; want 4", len(hist))
	}
}
