//go:build chaos

package chaos

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestRowsInsertedAcrossTheCutoff inserts rows while `sweep --drain` runs, each with a
// timestamp within 3 seconds either side of the cutoff at the moment it is written (so
// as often just expired as not), each with a child. The drain runs many sweeps (10
// batches each), each with its own cutoff, which the ledger records. No row at or
// after the latest cutoff may go; every row written before the last sweep started with
// a timestamp before that sweep's cutoff must go; every cutoff is its sweep's start
// less the retention; the seeded rows end exact; exit 0.
func TestRowsInsertedAcrossTheCutoff(t *testing.T) {
	rec := the.results.begin(t, "rows written during `sweep --drain` with timestamps ±3s around the moving cutoff", "0")
	f := newFixture(t)
	f.seed(1, 20000)
	f.exec(`CREATE SEQUENCE chaos_ids START 10000000`)
	f.exec(`CREATE TABLE chaos_inserted (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, inserted_at timestamptz NOT NULL)`)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var insertErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		insertErr = insertAcrossCutoff(ctx, f)
	}()
	began := time.Now()
	code, p := runToEnd(t, "sweep", "--drain", "--config", f.config(passOpts{batchDelay: "10ms", maxBatches: 10}, "", ""))
	cancel()
	wg.Wait()
	if insertErr != nil {
		t.Fatalf("inserting: %v", insertErr)
	}
	if rec.exit(code) != 0 {
		t.Errorf("sweep --drain exited %d, want 0:\n%s", code, p.output())
	}
	g := f.measure()
	rec.final(g)
	g.exact(t, "after the drain")
	g.noRunInProgress(t, "after the drain")
	g.ledgerMatches(t, "after the drain", g.deleted)

	sweeps := f.count(`SELECT count(*) FROM retention_metadata WHERE name = 'events'`)
	inserted := f.count(`SELECT count(*) FROM chaos_inserted`)
	t.Logf("%d sweeps, %d rows inserted during the drain, %d of them deleted", sweeps, inserted,
		f.count(`SELECT count(*) FROM chaos_inserted i WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = i.id)`))
	if sweeps < 3 || inserted < 100 {
		t.Fatalf("%d sweeps and %d rows inserted: too few to cross a cutoff", sweeps, inserted)
	}
	if bad := f.count(`SELECT count(*) FROM retention_metadata WHERE name = 'events'
		AND (abs(extract(epoch FROM (start_time - interval '30 days' - cutoff))) > 1 OR start_time < $1 OR start_time > now())`, began); bad != 0 {
		t.Errorf("%d runs with a cutoff that is not their start less 30 days, or a start outside the drain", bad)
	}
	if wrong := f.count(`SELECT count(*) FROM chaos_inserted i
		WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = i.id)
		AND i.created_at >= (SELECT max(cutoff) FROM retention_metadata WHERE name = 'events')`); wrong != 0 {
		t.Errorf("%d rows written during the drain were deleted with a timestamp at or after every cutoff", wrong)
	}
	if left := f.count(`WITH last AS (SELECT start_time, cutoff FROM retention_metadata WHERE name = 'events' ORDER BY start_time DESC LIMIT 1)
		SELECT count(*) FROM chaos_inserted i, last
		WHERE EXISTS (SELECT 1 FROM events e WHERE e.id = i.id)
		AND i.created_at < last.cutoff AND i.inserted_at < last.start_time - interval '200 milliseconds'`); left != 0 {
		t.Errorf("%d rows written before the last sweep, expired at its cutoff, were left", left)
	}
}

// insertAcrossCutoff writes an event (and a note for it) every 5 ms until ctx ends,
// stamped within 3 seconds of now less the retention, and records it in chaos_expect
// (judged by the scenario, not by the rules' snapshot) and chaos_inserted.
func insertAcrossCutoff(ctx context.Context, f *fixture) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := f.db.ExecContext(ctx, `WITH r AS (
				INSERT INTO events (id, created_at, state)
				VALUES (nextval('chaos_ids'), clock_timestamp() - interval '30 days' + (random() * 6 - 3) * interval '1 second', 'done')
				RETURNING id, created_at),
			n AS (INSERT INTO event_notes (id, event_id) SELECT id, id FROM r),
			x AS (INSERT INTO chaos_expect (id, goes, items, notes, parts) SELECT id, NULL, 0, 1, 0 FROM r)
			INSERT INTO chaos_inserted (id, created_at, inserted_at) SELECT id, created_at, clock_timestamp() FROM r`)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
