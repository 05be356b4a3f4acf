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
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// Every sweep's end keeps a backlog sample of its pass, with nobody scraping /metrics:
// 30 expired rows, a sweep of at most one batch of 10, three sweeps, three samples of
// 20, 10 and 0 rows; a fourth sweep finding the same 0 keeps none.
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
	opts.BatchSize, opts.MaxBatchesPerSweep, opts.MaxStartupStagger, opts.SweepInterval = 10, 1, 0, time.Hour
	c := NewBacklogCollector([]Table{{Table: tbl, Options: opts}}, l)
	c.Recorder = l
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	sampler := c.SampleSweeps(sctx, time.Nanosecond) // every sweep, however close together

	swept := make(chan actors.SweepDone, 8)
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	// The sampler is told after the test's observer, so a sample may land after the
	// test hears of the sweep: the test waits for the sample, not the sweep.
	rt := actors.New(actors.Config{Logger: quiet, Observers: []actors.Observer{sampler, actors.ObserverFunc(func(e actors.Event) error {
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

	var rows []int64
	for sweep := range 4 {
		select {
		case <-swept:
		case <-time.After(time.Minute): // a bound on a hang
			t.Fatalf("sweep %d did not end", sweep+1)
		}
		deadline := time.Now().Add(time.Minute)
		tick := time.NewTicker(20 * time.Millisecond) // polling the ledger for the outcome
		defer tick.Stop()
		for {
			hist, err := l.BacklogHistory(ctx, "docs", time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if sweep == 3 && len(hist) == 3 && sampler.Measured("docs") == 4 {
				break // measured, and not kept: the same as the last sample
			}
			if len(hist) == sweep+1 && sweep < 3 {
				rows = append(rows, hist[sweep].Rows)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after sweep %d the ledger holds %d samples: %+v", sweep+1, len(hist), hist)
			}
			<-tick.C
		}
		if sweep < 3 {
			if err := rt.Trigger("docs"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fmt.Sprint(rows) != "[20 10 0]" {
		t.Errorf("samples = %v; want [20 10 0], one at each sweep's end", rows)
	}
	if hist, _ := l.BacklogHistory(ctx, "docs", time.Time{}); len(hist) != 3 {
		t.Errorf("%d samples after a fourth sweep that changed nothing; want 3", len(hist))
	}
}
