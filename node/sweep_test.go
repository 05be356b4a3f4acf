package node_test

import (
	"context"
	"errors"
	"os"
	"testing"

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
