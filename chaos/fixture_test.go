//go:build chaos

package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fixture is one scenario's database: the events table with its children, the
// expectations snapshotted from it, and the configuration files pointing at it.
//
//	events        (id, created_at timestamptz, state)    the pass's table
//	event_items   (id, event_id REFERENCES events)       child, deleted with the parent
//	item_parts    (id, item_id)  no foreign key          grandchild, under event_items
//	event_notes   (id, event_id) no foreign key          child: only the pass keeps it whole
//	holds         (id, event_id REFERENCES events)       block child: keeps its parent
//
// item_parts and event_notes have no foreign key on purpose: nothing but the pass's own
// ordering stops a parent from leaving them behind, so an orphan there is a half-delete.
type fixture struct {
	sqlFixture
	name string // the database
	dsn  string // what the node connects with
}

// sqlFixture is a scenario's test and its pool on the scenario's database, with the
// two statements every fixture runs.
type sqlFixture struct {
	t  *testing.T
	db *sql.DB
}

// schema is the scenario's tables; chaos_expect is the keep-set, written before the
// node runs.
var schema = []string{
	`CREATE TABLE events (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, state text NOT NULL)`,
	`CREATE INDEX events_created ON events (created_at, id)`,
	`CREATE TABLE event_items (id bigint PRIMARY KEY, event_id bigint NOT NULL REFERENCES events (id))`,
	`CREATE INDEX event_items_event ON event_items (event_id)`,
	`CREATE TABLE item_parts (id bigint PRIMARY KEY, item_id bigint NOT NULL)`,
	`CREATE INDEX item_parts_item ON item_parts (item_id)`,
	`CREATE TABLE event_notes (id bigint PRIMARY KEY, event_id bigint NOT NULL)`,
	`CREATE INDEX event_notes_event ON event_notes (event_id)`,
	`CREATE TABLE holds (id bigint PRIMARY KEY, event_id bigint NOT NULL REFERENCES events (id))`,
	`CREATE INDEX holds_event ON holds (event_id)`,
	// goes: the rules say the row must be deleted (true), kept (false), or it was
	// written during the run and its scenario judges it (null). The counts are its
	// children when the snapshot was taken.
	`CREATE TABLE chaos_expect (id bigint PRIMARY KEY, goes boolean, items int NOT NULL, notes int NOT NULL, parts int NOT NULL)`,
	// held: rows the rules would delete but the scenario's fault keeps (a lock, a
	// restricting reference); filled by the scenario, in SQL.
	`CREATE TABLE chaos_held (id bigint PRIMARY KEY)`,
}

// newFixture creates the scenario's database and tables.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	name := the.pg.createDatabase(t)
	f := &fixture{sqlFixture: sqlFixture{t: t, db: open(t, the.pg.testDSN(name))}, name: name, dsn: the.pg.DSN(name)}
	t.Cleanup(func() { f.db.Close() })
	for _, s := range schema {
		f.exec(s)
	}
	return f
}

func (f *sqlFixture) exec(q string, args ...any) {
	f.t.Helper()
	if _, err := f.db.ExecContext(context.Background(), q, args...); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
}

// execInTx runs the statements, their placeholders replaced by r, in one
// transaction: a seed and its keep-set snapshot commit together, so a running node
// never sees a row whose expectation is not yet written.
func (f *sqlFixture) execInTx(r *strings.Replacer, stmts ...string) {
	f.t.Helper()
	ctx := context.Background()
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	defer tx.Rollback()
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, r.Replace(q)); err != nil {
			f.t.Fatalf("%s: %v", q, err)
		}
	}
	if err := tx.Commit(); err != nil {
		f.t.Fatal(err)
	}
}

func (f *sqlFixture) count(q string, args ...any) int {
	f.t.Helper()
	var n int
	if err := f.db.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
	return n
}

// reconnect replaces the suite's pool after a fault that killed its connections.
func (f *fixture) reconnect() {
	f.db.Close()
	f.db = open(f.t, the.pg.testDSN(f.name))
}

// seed writes events from..to: nine in ten expired (40 days old, 30 is the retention),
// every seventh 'pending' (filtered out), every fiftieth on hold; children for every
// third (two items, one part under every odd item), a note for every fourth. The rows
// and their expectations commit in one transaction, so a running node never sees a
// row whose expectation is not yet written.
func (f *fixture) seed(from, to int) {
	f.t.Helper()
	r := strings.NewReplacer("{from}", fmt.Sprint(from), "{to}", fmt.Sprint(to))
	f.execInTx(r,
		`INSERT INTO events (id, created_at, state)
		 SELECT g, CASE WHEN g % 10 = 0 THEN now() - interval '1 hour'
		                ELSE now() - interval '40 days' + g * interval '1 second' END,
		           CASE WHEN g % 7 = 0 THEN 'pending' ELSE 'done' END
		 FROM generate_series({from}, {to}) g`,
		`INSERT INTO event_items (id, event_id)
		 SELECT g * 10 + k, g FROM generate_series({from}, {to}) g, generate_series(1, 2) k WHERE g % 3 = 0`,
		`INSERT INTO item_parts (id, item_id)
		 SELECT i.id * 10 + 1, i.id FROM event_items i WHERE i.event_id BETWEEN {from} AND {to} AND i.id % 2 = 1`,
		`INSERT INTO event_notes (id, event_id) SELECT g, g FROM generate_series({from}, {to}) g WHERE g % 4 = 0`,
		`INSERT INTO holds (id, event_id) SELECT g, g FROM generate_series({from}, {to}) g WHERE g % 50 = 1`,
		`ANALYZE`, // fresh tables have no statistics: the snapshot's subqueries would scan
		snapshot)
}

// snapshot adds every event not yet in chaos_expect, judged by the pass's rules as
// SQL: expired (older than 30 days), state 'done', no hold.
const snapshot = `INSERT INTO chaos_expect (id, goes, items, notes, parts)
		SELECT e.id,
		       e.created_at < now() - interval '30 days' AND e.state = 'done'
		         AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.event_id = e.id),
		       (SELECT count(*) FROM event_items i WHERE i.event_id = e.id),
		       (SELECT count(*) FROM event_notes n WHERE n.event_id = e.id),
		       (SELECT count(*) FROM item_parts p JOIN event_items i ON i.id = p.item_id WHERE i.event_id = e.id)
		FROM events e
		ON CONFLICT (id) DO NOTHING`

// hold records the ids a query returns as held: rows the rules would delete that the
// scenario's fault keeps.
func (f *fixture) hold(query string) int {
	f.t.Helper()
	f.exec(`INSERT INTO chaos_held (id) ` + query + ` ON CONFLICT DO NOTHING`)
	return f.count(`SELECT count(*) FROM chaos_held`)
}

// release forgets the held rows: from now on the rules alone decide.
func (f *fixture) release() { f.exec(`DELETE FROM chaos_held`) }

// figures is the state of the tables against the expectations.
type figures struct {
	deleted    int // snapshotted events gone
	kept       int // snapshotted events still there
	wrongly    int // gone although the rules keep them
	left       int // still there although the rules delete them and nothing holds them
	heldGone   int // held rows that went anyway
	half       int // kept parents that lost a child, and children left by a deleted parent
	inProgress int // ledger runs in state InProgress (-1: no ledger)
	ledgerRows int // rows_deleted the ledger recorded for the events pass
}

// measure computes the figures, all in SQL, from one snapshot of the database.
func (f *fixture) measure() figures {
	f.t.Helper()
	return measureIn(f.t, f.db, `SELECT count(*) FROM pg_tables WHERE tablename = 'retention_metadata'`)
}

// measureIn computes the figures in one read-only REPEATABLE READ transaction of db,
// so every count sees the same snapshot.
func measureIn(t *testing.T, db *sql.DB, ledgerExists string) figures {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	return figuresFrom(func(q string) int {
		t.Helper()
		var n int
		if err := tx.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}, ledgerExists)
}

// figuresFrom computes the figures with count, which runs a query in one snapshot of
// the scenario's database; ledgerExists counts the ledger's table (1: there). The
// queries are plain SQL that PostgreSQL and MySQL read alike.
func figuresFrom(count func(string) int, ledgerExists string) figures {
	var g figures
	gone := `NOT EXISTS (SELECT 1 FROM events e WHERE e.id = x.id)`
	held := `x.id IN (SELECT id FROM chaos_held)`
	g.deleted = count(`SELECT count(*) FROM chaos_expect x WHERE ` + gone)
	g.kept = count(`SELECT count(*) FROM chaos_expect x WHERE NOT ` + gone)
	g.wrongly = count(`SELECT count(*) FROM chaos_expect x WHERE x.goes IS FALSE AND ` + gone)
	g.left = count(`SELECT count(*) FROM chaos_expect x WHERE x.goes IS TRUE AND NOT ` + held + ` AND NOT ` + gone)
	g.heldGone = count(`SELECT count(*) FROM chaos_expect x WHERE ` + held + ` AND ` + gone)
	g.half = count(`SELECT count(*) FROM chaos_expect x JOIN events e ON e.id = x.id WHERE
			x.items <> (SELECT count(*) FROM event_items i WHERE i.event_id = x.id)
		 OR x.notes <> (SELECT count(*) FROM event_notes n WHERE n.event_id = x.id)
		 OR x.parts <> (SELECT count(*) FROM item_parts p JOIN event_items i ON i.id = p.item_id WHERE i.event_id = x.id)`) +
		count(`SELECT count(*) FROM event_notes n WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = n.event_id)`) +
		count(`SELECT count(*) FROM event_items i WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = i.event_id)`) +
		count(`SELECT count(*) FROM item_parts p WHERE NOT EXISTS (SELECT 1 FROM event_items i WHERE i.id = p.item_id)`)
	g.inProgress, g.ledgerRows = -1, -1
	if count(ledgerExists) == 1 {
		g.inProgress = count(`SELECT count(*) FROM retention_metadata WHERE state = 'InProgress'`)
		g.ledgerRows = count(`SELECT coalesce(sum(rows_deleted), 0) FROM retention_metadata WHERE name = 'events'`)
	}
	return g
}

// exact checks the keep-set: nothing wrongly deleted, nothing the rules delete left
// unless held, nothing held gone, no half-deleted parent.
func (g figures) exact(t *testing.T, when string) {
	t.Helper()
	if g.wrongly != 0 || g.left != 0 || g.heldGone != 0 || g.half != 0 {
		t.Errorf("%s: %d rows wrongly deleted, %d left that should have gone, %d held rows gone, %d half-deleted (deleted %d, kept %d)",
			when, g.wrongly, g.left, g.heldGone, g.half, g.deleted, g.kept)
	}
}

// partial checks what must hold at any moment, also mid-drain: nothing wrongly
// deleted, nothing held gone, no half-deleted parent.
func (g figures) partial(t *testing.T, when string) {
	t.Helper()
	if g.wrongly != 0 || g.heldGone != 0 || g.half != 0 {
		t.Errorf("%s: %d rows wrongly deleted, %d held rows gone, %d half-deleted (deleted %d, kept %d)",
			when, g.wrongly, g.heldGone, g.half, g.deleted, g.kept)
	}
}

// noRunInProgress checks the ledger has no run left InProgress.
func (g figures) noRunInProgress(t *testing.T, when string) {
	t.Helper()
	if g.inProgress != 0 {
		t.Errorf("%s: %d ledger runs left InProgress", when, g.inProgress)
	}
}

// ledgerMatches checks the ledger recorded exactly the rows the table lost.
func (g figures) ledgerMatches(t *testing.T, when string, deleted int) {
	t.Helper()
	if g.ledgerRows != deleted {
		t.Errorf("%s: the ledger recorded %d rows deleted by the events pass, the table lost %d", when, g.ledgerRows, deleted)
	}
}

// passOpts are the events pass's settings that scenarios change.
type passOpts struct {
	batchSize        int
	batchDelay       string
	sweepInterval    string
	maxBatches       int
	statementTimeout string
	batchTimeout     string
}

func (o passOpts) withDefaults() passOpts {
	if o.batchSize == 0 {
		o.batchSize = 200
	}
	if o.batchDelay == "" {
		o.batchDelay = "0s"
	}
	if o.sweepInterval == "" {
		o.sweepInterval = "1h"
	}
	if o.maxBatches == 0 {
		o.maxBatches = 1000
	}
	if o.statementTimeout == "" {
		o.statementTimeout = "30s"
	}
	if o.batchTimeout == "" {
		o.batchTimeout = "1m"
	}
	return o
}

// config writes a node configuration for the events pass (and any more passes given,
// and any more lines of the node section) and returns its path.
func (f *fixture) config(o passOpts, morePasses, nodeLines string) string {
	f.t.Helper()
	return writeConfig(f.t, "postgres", f.dsn, nodeLines, eventsPass(o)+morePasses)
}

// eventsPass is the YAML of the events pass with its children.
func eventsPass(o passOpts) string {
	o = o.withDefaults()
	return fmt.Sprintf(`  - name: events
    table: events
    key: id
    timestamp: created_at
    filter: { column: state, in: [done] }
    retention_period: 30d
    batch_size: %d
    batch_delay: %s
    sweep_interval: %s
    max_startup_stagger: 0s
    max_batches_per_sweep: %d
    statement_timeout: %s
    batch_timeout: %s
    children:
      - table: event_items
        foreign_key: event_id
        children:
          - { table: item_parts, foreign_key: item_id }
      - { table: event_notes, foreign_key: event_id }
      - { table: holds, foreign_key: event_id, on_delete: block }
`, o.batchSize, o.batchDelay, o.sweepInterval, o.maxBatches, o.statementTimeout, o.batchTimeout)
}

// writeConfig writes a node configuration: the database, the node section with
// nodeLines added, and the passes.
func writeConfig(t *testing.T, driver, dsn, nodeLines, passesYAML string) string {
	t.Helper()
	body := fmt.Sprintf("database:\n  driver: %s\n  dsn: %q\nnode:\n  shutdown_grace: 20s\n  max_concurrent_deletes: 2\n%spasses:\n%s", driver, dsn, nodeLines, passesYAML)
	path := filepath.Join(t.TempDir(), fmt.Sprintf("retention-%d.yaml", time.Now().UnixNano()))
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// ledgerAtMost checks the ledger never recorded more rows than the table lost (after
// faults that may have cut a ledger write short, fewer is possible).
func (g figures) ledgerAtMost(t *testing.T, when string) {
	t.Helper()
	if g.ledgerRows > g.deleted {
		t.Errorf("%s: the ledger recorded %d rows deleted by the events pass, more than the %d the table lost", when, g.ledgerRows, g.deleted)
	}
}

// recoveryGuard bounds how long a node may take to close the runs a dead or cut-off
// node left InProgress.
const recoveryGuard = 45 * time.Second

// afterRecovery measures the tables after the scenario's nodes exited. If the ledger
// still has runs InProgress (a node died, or its last ledger write was cut off), it
// starts a fresh `run` on the same configuration, as an operator would after a fault,
// and gives it recoveryGuard to close them as abandoned before measuring again.
func (f *fixture) afterRecovery(path string) figures {
	f.t.Helper()
	return recoverLedger(f.t, path, f.measure, func(since time.Time) int {
		return f.count(`SELECT count(*) FROM retention_metadata WHERE state = 'InProgress' AND start_time < $1`, since)
	}, f.openRuns)
}

// recoverLedger is afterRecovery for any database: measure measures, stale counts the
// runs InProgress that started before a time, open lists those InProgress.
func recoverLedger(t *testing.T, path string, measure func() figures, stale func(time.Time) int, open func() string) figures {
	t.Helper()
	g := measure()
	if g.inProgress <= 0 {
		return g
	}
	t.Logf("%d runs InProgress after the node exited; starting a fresh node to recover them", g.inProgress)
	n := start(t, "run", "--config", path)
	deadline := time.Now().Add(recoveryGuard)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) && stale(n.began) > 0 {
		<-tick.C
	}
	n.signal(syscall.SIGTERM)
	if code := n.wait(); code != 0 {
		t.Errorf("the recovery node exited %d, want 0:\n%s", code, n.output())
	}
	if g = measure(); g.inProgress > 0 {
		t.Logf("InProgress after the recovery node's %v: %s", time.Since(n.began).Round(time.Second), open())
	}
	return g
}

// openRuns lists the ledger's runs InProgress (id, name, start, node), for the log.
func (f *fixture) openRuns() string {
	f.t.Helper()
	rows, err := f.db.QueryContext(context.Background(), `SELECT id, name, start_time::text, coalesce(node_id::text, '')
		FROM retention_metadata WHERE state = 'InProgress' ORDER BY id`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id int64
		var name, started, node string
		if err := rows.Scan(&id, &name, &started, &node); err != nil {
			return err.Error()
		}
		out = append(out, fmt.Sprintf("%d %s started %s node %s", id, name, started, node))
	}
	return strings.Join(out, "; ")
}

// runs lists the events pass's ledger runs (id, state, stop reason, rows), for the log.
func (f *fixture) runs() string { return ledgerRuns(f.db) }

// ledgerRuns lists the events pass's ledger runs in db, for the log.
func ledgerRuns(db *sql.DB) string {
	rows, err := db.QueryContext(context.Background(), `SELECT id, state, coalesce(stop_reason, ''), rows_deleted
		FROM retention_metadata WHERE name = 'events' ORDER BY id`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, n int64
		var state, reason string
		if err := rows.Scan(&id, &state, &reason, &n); err != nil {
			return err.Error()
		}
		out = append(out, fmt.Sprintf("%d %s/%s %d", id, state, reason, n))
	}
	return strings.Join(out, "; ")
}

// The fixture as a faultDB (faultdb_test.go).

func (f *fixture) eventsConfig(o passOpts) string { return f.config(o, "", "") }

func (f *fixture) hasLedger() bool {
	return f.count(`SELECT count(*) FROM pg_tables WHERE tablename = 'retention_metadata'`) == 1
}

func (f *fixture) killSessions(every time.Duration) (stop func() int) {
	return killBackends(f.t, f.name, every)
}

func (f *fixture) crashServer() error { return the.pg.Crash() }

func (f *fixture) restartServer() error {
	if err := the.pg.Start(); err != nil {
		return err
	}
	f.reconnect()
	return nil
}

func (f *fixture) ensureServer() { _ = the.pg.Start() }
