//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// sqliteSchema is the SQLite scenario's tables: events with unix-second timestamps, a
// child without a foreign key (so only the pass keeps it whole), a block child, and
// the keep-set.
var sqliteSchema = []string{
	`CREATE TABLE events (id INTEGER PRIMARY KEY, created_at INTEGER NOT NULL, state TEXT NOT NULL)`,
	`CREATE INDEX events_created ON events (created_at, id)`,
	`CREATE TABLE event_notes (id INTEGER PRIMARY KEY, event_id INTEGER NOT NULL)`,
	`CREATE INDEX event_notes_event ON event_notes (event_id)`,
	`CREATE TABLE holds (id INTEGER PRIMARY KEY, event_id INTEGER NOT NULL REFERENCES events (id))`,
	`CREATE INDEX holds_event ON holds (event_id)`,
	`CREATE TABLE chaos_expect (id INTEGER PRIMARY KEY, goes INTEGER NOT NULL, notes INTEGER NOT NULL)`,
	`CREATE TABLE chaos_lock (n INTEGER NOT NULL)`,
	`INSERT INTO chaos_lock VALUES (0)`,
}

const sqlitePass = `  - name: events
    table: events
    key: id
    timestamp: created_at
    timestamp_format: unix
    filter: { column: state, in: [done] }
    retention_period: 30d
    batch_size: 50
    batch_delay: 20ms
    max_startup_stagger: 0s
    max_batches_per_sweep: 1000
    children:
      - { table: event_notes, foreign_key: event_id }
      - { table: holds, foreign_key: event_id, on_delete: block }
`

// TestSQLiteWriterHoldsTheLock takes SQLite's write lock in another connection
// mid-drain and holds it past the node's busy timeout (200 ms) until the node gives
// up (--drain-retry 2s): `sweep --drain` must leave whole batches, no half-deleted
// row, and exit 1; once the lock goes, a second drain deletes the rest and exits 0.
func TestSQLiteWriterHoldsTheLock(t *testing.T) {
	rec := the.results.begin(t, "SQLite: another writer holds the write lock past busy_timeout (200ms) mid `sweep --drain`; then releases", "1, then 0")
	dir := t.TempDir()
	file := filepath.Join(dir, "app.db")
	bdb, err := passes.Open(context.Background(), passes.DriverSQLite, file)
	if err != nil {
		t.Fatal(err)
	}
	db := bdb.DB
	defer db.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range sqliteSchema {
		exec(q)
	}
	now := time.Now().Unix()
	exec(fmt.Sprintf(`WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < 3000)
		INSERT INTO events SELECT x, CASE WHEN x %% 10 = 0 THEN %d ELSE %d + x END,
			CASE WHEN x %% 7 = 0 THEN 'pending' ELSE 'done' END FROM g`, now-3600, now-40*86400))
	exec(`INSERT INTO event_notes SELECT id, id FROM events WHERE id % 4 = 0`)
	exec(`INSERT INTO holds SELECT id, id FROM events WHERE id % 50 = 1`)
	exec(fmt.Sprintf(`INSERT INTO chaos_expect SELECT e.id,
		e.created_at < %d AND e.state = 'done' AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.event_id = e.id),
		(SELECT count(*) FROM event_notes n WHERE n.event_id = e.id) FROM events e`, now-30*86400))
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	measure := func() figures { return measureSQLite(t, count) }
	before := count(`SELECT count(*) FROM events`)
	logPhase := phaseLogger(t)

	path := writeConfig(t, "sqlite", "file:"+file+"?_pragma=busy_timeout(200)", "", sqlitePass)
	n := start(t, "sweep", "--drain", "--drain-retry", "2s", "--config", path)
	n.waitFor("the sweep", msg("sweep started", "events"))
	logPhase("sweep started")
	waitUntil(t, "200 rows deleted", func() bool { return count(`SELECT count(*) FROM events`) <= before-200 })
	logPhase("200 rows deleted")
	holder, err := db.BeginTx(context.Background(), nil) // BEGIN IMMEDIATE: the DSN's _txlock
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.Exec(`UPDATE chaos_lock SET n = n + 1`); err != nil {
		t.Fatal(err)
	}
	code := rec.exit(n.wait())
	logPhase("the drain gave up")
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	g := measure()
	if code != 1 || g.wrongly != 0 || g.half != 0 || g.deleted%50 != 0 || g.left == 0 {
		t.Errorf("with the lock held: exit %d (want 1), %d wrongly deleted, %d half-deleted, %d deleted (want whole 50-row batches), %d left:\n%s",
			code, g.wrongly, g.half, g.deleted, g.left, n.output())
	}

	code, p := runToEnd(t, "sweep", "--drain", "--config", path)
	logPhase("the second drain ended")
	if rec.exit(code) != 0 {
		t.Errorf("the drain after the lock went exited %d, want 0:\n%s", code, p.output())
	}
	g = recoverLedger(t, path, measure, func(since time.Time) int {
		return count(`SELECT count(*) FROM retention_metadata WHERE state = 'InProgress' AND start_time < ?`, since.UTC().Format("2006-01-02 15:04:05.999999-07:00"))
	}, func() string {
		return fmt.Sprintf("%d runs", count(`SELECT count(*) FROM retention_metadata WHERE state = 'InProgress'`))
	})
	logPhase("ledger recovered")
	rec.final(g)
	g.exact(t, "after the second drain")
	g.noRunInProgress(t, "after the second drain and recovery")
	g.ledgerAtMost(t, "after both drains")
}

// measureSQLite is measure for the SQLite scenario's tables.
func measureSQLite(t *testing.T, count func(string, ...any) int) figures {
	t.Helper()
	gone := `NOT EXISTS (SELECT 1 FROM events e WHERE e.id = x.id)`
	g := figures{
		deleted: count(`SELECT count(*) FROM chaos_expect x WHERE ` + gone),
		kept:    count(`SELECT count(*) FROM chaos_expect x WHERE NOT ` + gone),
		wrongly: count(`SELECT count(*) FROM chaos_expect x WHERE NOT x.goes AND ` + gone),
		left:    count(`SELECT count(*) FROM chaos_expect x WHERE x.goes AND NOT ` + gone),
		half: count(`SELECT count(*) FROM chaos_expect x JOIN events e ON e.id = x.id
				WHERE x.notes <> (SELECT count(*) FROM event_notes n WHERE n.event_id = x.id)`) +
			count(`SELECT count(*) FROM event_notes n WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = n.event_id)`),
		inProgress: -1, ledgerRows: -1,
	}
	if count(`SELECT count(*) FROM sqlite_master WHERE name = 'retention_metadata'`) == 1 {
		g.inProgress = count(`SELECT count(*) FROM retention_metadata WHERE state = 'InProgress'`)
		g.ledgerRows = count(`SELECT coalesce(sum(rows_deleted), 0) FROM retention_metadata WHERE name = 'events'`)
	}
	return g
}
