//go:build chaos

package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// TestSIGKILLMidDetachConcurrently kills `run` with SIGKILL while its retire phase is
// inside ALTER TABLE ... DETACH PARTITION ... CONCURRENTLY: an open REPEATABLE READ
// transaction that read the table holds the detach in its second step, with the
// partition already pending. The server session the node left behind must not finish
// the detach on its own once the reader is gone (it would leave a detached table no
// sweep drops): it ends when it finds its client gone, leaving the partition pending.
// The restarted node's next sweep finalizes the detach and retires the partition, and
// the table keeps every row it must keep and none it must not.
func TestSIGKILLMidDetachConcurrently(t *testing.T) {
	rec := the.results.begin(t, "SIGKILL of `run` mid DETACH PARTITION CONCURRENTLY, then `run` again", "-1 (killed), then 0 (SIGTERM)")
	f := newFixture(t)
	f.exec(`CREATE TABLE pevents (id bigint NOT NULL, at timestamptz NOT NULL, PRIMARY KEY (at, id)) PARTITION BY RANGE (at)`)
	for m := 1; m <= 3; m++ {
		f.exec(fmt.Sprintf(`CREATE TABLE pevents_m%d PARTITION OF pevents FOR VALUES FROM ('2000-%02d-01') TO ('2000-%02d-01')`, m, m, m+1))
	}
	f.exec(`CREATE TABLE pevents_rest PARTITION OF pevents FOR VALUES FROM ('2000-04-01') TO (MAXVALUE)`)
	// 300 rows in the three expired partitions, 50 expired rows in the boundary one,
	// 40 rows it keeps.
	f.exec(`INSERT INTO pevents (id, at) SELECT g, timestamptz '2000-01-01' + (g - 1) * interval '7 hours' FROM generate_series(1, 300) g`)
	f.exec(`INSERT INTO pevents (id, at) SELECT g, timestamptz '2000-04-02' + g * interval '1 hour' FROM generate_series(301, 350) g`)
	f.exec(`INSERT INTO pevents (id, at) SELECT g, now() + g * interval '1 second' FROM generate_series(351, 390) g`)
	keepSum := f.count(`SELECT sum(id) FROM pevents WHERE id > 350`)

	reader, err := f.db.BeginTx(context.Background(), &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = reader.Rollback() }()
	var seen int
	if err := reader.QueryRow(`SELECT count(*) FROM pevents`).Scan(&seen); err != nil || seen != 390 {
		t.Fatalf("the reader sees %d rows (%v)", seen, err)
	}
	path := writeConfig(t, "postgres", f.dsn, "", `  - name: pevents
    table: pevents
    key: [at, id]
    timestamp: at
    retention_period: 1d
    batch_size: 100
    sweep_interval: 1h
    max_startup_stagger: 0s
    partitions:
      lock_timeout: 10m
`)
	n := start(t, "run", "--config", path)
	detaching := `SELECT count(*) FROM pg_stat_activity WHERE query ILIKE 'ALTER TABLE%DETACH PARTITION%CONCURRENTLY%' AND datname = current_database()`
	waitUntil(t, "the node's detach waiting on the reader, the partition pending", func() bool {
		return f.count(detaching+` AND wait_event_type = 'Lock'`) == 1 &&
			f.count(`SELECT count(*) FROM pg_inherits WHERE inhrelid = 'pevents_m1'::regclass AND inhdetachpending`) == 1
	})
	n.signal(syscall.SIGKILL)
	rec.exit(n.wait())
	// The reader stays: the session left behind must end on its own, not wait for it.
	waitUntilWithin(t, 30*time.Second, "the killed node's detach session gone", func() bool { return f.count(detaching) == 0 })
	if err := reader.Rollback(); err != nil {
		t.Fatal(err)
	}
	if f.count(`SELECT count(*) FROM pg_inherits WHERE inhrelid = 'pevents_m1'::regclass AND inhdetachpending`) != 1 {
		t.Fatal("pevents_m1 is not pending after the kill: the killed node's session finished or undid the detach")
	}
	if f.count(`SELECT count(*) FROM pevents WHERE id > 350`) != 40 {
		t.Fatal("rows the pass keeps are gone after the kill")
	}

	killedRun := f.count(`SELECT coalesce(max(id), 0) FROM retention_metadata WHERE name = 'pevents' AND state = 'InProgress'`)
	if killedRun == 0 {
		t.Fatal("no pevents run InProgress after the SIGKILL")
	}

	n = start(t, "run", "--config", path)
	n.waitFor("a drained sweep after the restart", sweepDone("pevents", "drained"))
	waitUntilWithin(t, recoveryGuard, "the killed run closed", func() bool {
		return f.count(`SELECT count(*) FROM retention_metadata WHERE id = $1 AND state <> 'InProgress'`, killedRun) == 1
	})
	n.signal(syscall.SIGTERM)
	if code := rec.exit(n.wait()); code != 0 {
		t.Errorf("the restarted run exited %d after SIGTERM, want 0:\n%s", code, n.output())
	}
	stayed := false
	for m := 1; m <= 3; m++ {
		if f.count(fmt.Sprintf(`SELECT count(*) FROM pg_class WHERE relname = 'pevents_m%d'`, m)) != 0 {
			t.Errorf("pevents_m%d is still there after the restarted sweep", m)
			stayed = true
		}
	}
	if stayed {
		// Once in a CI run (2026-12-05) the restarted sweep deleted the rows and retired
		// nothing, 18 s in, with no clue why: its own words say what it did instead.
		t.Logf("the restarted node's output:\n%s", n.output())
	}
	if got, sum := f.count(`SELECT count(*) FROM pevents`), f.count(`SELECT coalesce(sum(id), 0) FROM pevents`); got != 40 || sum != keepSum {
		t.Errorf("the table holds %d rows (ids summing to %d); want exactly the 40 it keeps (%d)", got, sum, keepSum)
	}
	left := f.count(`SELECT count(*) FROM retention_metadata WHERE name = 'pevents' AND state = 'InProgress'`)
	if left != 0 {
		t.Errorf("%d pevents runs left InProgress", left)
	}
	// The report's figures, from the rows themselves: ids 1-350 expire, 351-390 stay;
	// nothing here has children, so nothing can be half-deleted.
	kept := f.count(`SELECT count(*) FROM pevents WHERE id > 350`)
	rec.final(figures{deleted: 350 - f.count(`SELECT count(*) FROM pevents WHERE id <= 350`), kept: kept, wrongly: 40 - kept, inProgress: left})
	if f.count(`SELECT count(*) FROM retention_log WHERE message LIKE 'partition public.pevents_m1 % retired:%'`) != 1 {
		t.Errorf("the ledger has no retired row for pevents_m1 after the restart:\n%s", f.runs())
	}
}
