package node_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/passes"
)

// TestSweepDeletesExpiredRowsOnce: the library's one-off sweep of a file with one table
// pass deletes its expired rows and only those, reports them in its result and its
// callbacks, and leaves the database closed for the next opener.
func TestSweepDeletesExpiredRowsOnce(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	dbPath := dir + "/node.db"
	seed(t, ctx, dbPath) // two expired rows, one fresh
	cfg := loadConfig(t, dir, dbPath, "")

	var batched int
	var before, done []string
	res, err := node.Sweep(ctx, cfg, node.SweepOptions{
		BeforeSweep: func(_ context.Context, ps []node.Pass) {
			for _, p := range ps {
				before = append(before, p.Name())
			}
		},
		Batch:    func(e actors.BatchDone) { batched += e.Rows },
		PassDone: func(name string) { done = append(done, name) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("Err of a clean sweep: %v", err)
	}
	if len(res.Passes) != 1 {
		t.Fatalf("result has %d passes, want 1: %+v", len(res.Passes), res.Passes)
	}
	got := res.Passes[0]
	if got.Name != "events" || got.Rows != 2 || got.Skipped != 0 || got.Sweeps != 1 || got.Batches < 1 || got.Reason != actors.Drained {
		t.Errorf("totals %+v; want events: 2 rows deleted in one drained sweep", got)
	}
	if batched != 2 || len(before) != 1 || before[0] != "events" || len(done) != 1 || done[0] != "events" {
		t.Errorf("callbacks: %d rows in batches, before %v, done %v; want 2, [events], [events]", batched, before, done)
	}

	db, err := passes.Open(ctx, passes.DriverSQLite, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var left int
	if err := db.NewRaw("SELECT count(*) FROM events").Scan(ctx, &left); err != nil {
		t.Fatal(err)
	}
	if left != 1 {
		t.Errorf("%d rows left, want the fresh one", left)
	}
}

// TestSweepRefusesUnknownPass: a pass the file does not have is a configuration error,
// naming the passes it has, before anything is swept.
func TestSweepRefusesUnknownPass(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	dbPath := dir + "/node.db"
	seed(t, ctx, dbPath)
	cfg := loadConfig(t, dir, dbPath, "")
	_, err := node.Sweep(ctx, cfg, node.SweepOptions{Only: []string{"nope"}})
	var ce *node.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("Sweep of an unknown pass: %v; want a *node.ConfigError", err)
	}
	if want := `--pass "nope": no such pass in the configuration (passes: events)`; ce.Err == nil || ce.Err.Error() != want {
		t.Errorf("error %q; want %q", ce.Err, want)
	}
}

// TestSweepDrainsPastTheBatchLimit: a pass bounded to one single-row batch per sweep
// deletes one expired row a sweep; drained, it sweeps again until none is left, and the
// totals add its sweeps up. Without Drain it stops after one, at its batch limit.
func TestSweepDrainsPastTheBatchLimit(t *testing.T) {
	ctx := t.Context()
	const bounded = "    batch_size: 1\n    max_batches_per_sweep: 1\n    pacing: fixed\n"
	dir := t.TempDir()
	dbPath := dir + "/node.db"
	seed(t, ctx, dbPath) // two expired rows, one fresh
	cfg := loadConfig(t, dir, dbPath, bounded)

	once, err := node.Sweep(ctx, cfg, node.SweepOptions{NoLedger: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := once.Passes[0]; got.Rows != 1 || got.Sweeps != 1 || got.Reason != actors.BatchLimit || once.Err() != nil {
		t.Errorf("one sweep: %+v, Err %v; want 1 row in 1 sweep stopped at the batch limit, no error", got, once.Err())
	}

	seed2 := dir + "/drain.db"
	seed(t, ctx, seed2)
	cfg = loadConfig(t, dir, seed2, bounded)
	drained, err := node.Sweep(ctx, cfg, node.SweepOptions{Drain: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := drained.Passes[0]; got.Rows != 2 || got.Sweeps < 2 || got.Left != nil || drained.Err() != nil {
		t.Errorf("drain: %+v, Err %v; want both expired rows over 2 or more sweeps, nothing left", got, drained.Err())
	}
}

// TestOpenTables: the one-off commands' opening builds the file's table passes and its
// ledger on the database, and with Existing leaves a missing SQLite file uncreated.
func TestOpenTables(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	dbPath := dir + "/node.db"
	seed(t, ctx, dbPath)
	tables, err := node.OpenTables(ctx, loadConfig(t, dir, dbPath, ""), node.TablesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tables.Passes) != 1 || tables.Passes[0].Name() != "events" || !tables.Passes[0].IsTable() || tables.Ledger == nil {
		t.Errorf("tables: %d passes, ledger %v; want the events table pass and a ledger", len(tables.Passes), tables.Ledger != nil)
	}
	if err := tables.Close(); err != nil {
		t.Fatal(err)
	}

	missing := dir + "/missing.db"
	if _, err := node.OpenTables(ctx, loadConfig(t, dir, missing, ""), node.TablesOptions{Existing: true}); err == nil {
		t.Fatal("OpenTables with Existing opened a missing database")
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("OpenTables with Existing left %s behind (stat: %v)", missing, err)
	}
}

// TestDryRunCountsWithoutDeleting: the library's dry run counts the expired rows a sweep
// would delete at the pass's cutoff and deletes none; an unknown pass is refused as
// Sweep refuses it.
func TestDryRunCountsWithoutDeleting(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	dbPath := dir + "/node.db"
	seed(t, ctx, dbPath) // two expired rows, one fresh
	cfg := loadConfig(t, dir, dbPath, "")

	est, err := node.DryRun(ctx, cfg, node.DryRunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(est) != 1 || est[0].Name != "events" || est[0].Deletable != 2 || est[0].Held != 0 || est[0].Quarantined != 0 {
		t.Fatalf("estimates %+v; want events: 2 deletable", est)
	}
	if age := time.Since(est[0].Cutoff); age < 23*time.Hour || age > 25*time.Hour {
		t.Errorf("cutoff %v is %v ago; want a day ago (retention_period: 1d)", est[0].Cutoff, age)
	}
	if left := countEvents(t, ctx, dbPath); left != 3 {
		t.Errorf("%d rows left after the dry run, want all 3", left)
	}
	var ce *node.ConfigError
	if _, err := node.DryRun(ctx, cfg, node.DryRunOptions{Only: []string{"nope"}}); !errors.As(err, &ce) {
		t.Errorf("DryRun of an unknown pass: %v; want a *node.ConfigError", err)
	}
}

// TestSweepRunsAGoPass: a Go pass given in SweepOptions.Passes is swept beside the file's
// table passes and, named in Only, alone; drained, it sweeps again while it stops at its
// batch limit. Its totals are in the result like a table pass's, and DryRun takes its
// name but has nothing to count for it. A Go pass that repeats a file's pass name is
// refused.
func TestSweepRunsAGoPass(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	dbPath := dir + "/node.db"
	seed(t, ctx, dbPath)
	cfg := loadConfig(t, dir, dbPath, "")

	var memo []int // the Go pass's own store: ten expired entries
	for i := range 10 {
		memo = append(memo, i)
	}
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.MaxStartupStagger = passes.Retain(time.Hour), 0
	opts.BatchSize, opts.MaxBatchesPerSweep = 3, 2
	purge := func(_ context.Context, limit int, _ time.Time) (int, error) {
		n := min(limit, len(memo))
		memo = memo[n:]
		return n, nil
	}
	goPass := node.GoPass(passes.Registration{Name: "memo", Options: opts, New: passes.Reuse(passes.PassFunc(purge))})

	once, err := node.Sweep(ctx, cfg, node.SweepOptions{Passes: []node.Pass{goPass}, Only: []string{"memo"}, NoLedger: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(once.Passes) != 1 || once.Passes[0].Name != "memo" || once.Passes[0].Rows != 6 || once.Passes[0].Reason != actors.BatchLimit {
		t.Fatalf("one sweep of the Go pass: %+v; want memo alone, 6 entries in 2 batches of 3, stopped at the batch limit", once.Passes)
	}
	if left := countEvents(t, ctx, dbPath); left != 3 {
		t.Errorf("sweeping only the Go pass touched the table: %d rows left, want 3", left)
	}

	drained, err := node.Sweep(ctx, cfg, node.SweepOptions{Passes: []node.Pass{goPass}, Drain: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := drained.Err(); err != nil {
		t.Fatalf("drain with a Go pass: %v", err)
	}
	byName := map[string]node.SweepTotals{}
	for _, p := range drained.Passes {
		byName[p.Name] = p
	}
	if got := byName["memo"]; got.Rows != 4 || got.Sweeps < 1 || got.Left != nil || len(memo) != 0 {
		t.Errorf("drained Go pass: %+v, %d entries left; want the other 4 deleted, nothing left", got, len(memo))
	}
	if got := byName["events"]; got.Rows != 2 {
		t.Errorf("the table pass beside it: %+v; want its 2 expired rows deleted", got)
	}

	est, err := node.DryRun(ctx, cfg, node.DryRunOptions{Passes: []node.Pass{goPass}, Only: []string{"memo"}})
	if err != nil || len(est) != 0 {
		t.Errorf("dry run of the Go pass alone: %+v, %v; want no estimate and no error", est, err)
	}

	clash := node.GoPass(passes.Registration{Name: "events", Options: opts, New: passes.Reuse(passes.PassFunc(purge))})
	var ce *node.ConfigError
	if _, err := node.Sweep(ctx, cfg, node.SweepOptions{Passes: []node.Pass{clash}}); !errors.As(err, &ce) {
		t.Errorf("Sweep with a Go pass named like a table pass: %v; want a *node.ConfigError", err)
	}
}

// countEvents is how many rows the events table holds.
func countEvents(t *testing.T, ctx context.Context, dbPath string) int {
	t.Helper()
	db, err := passes.Open(ctx, passes.DriverSQLite, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.NewRaw("SELECT count(*) FROM events").Scan(ctx, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
