//go:build chaos

package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"
)

// mariadbFixture is a MariaDB scenario's database: the PostgreSQL fixture's tables in
// InnoDB, with its keep-set snapshot and figures, on the suite's own server.
type mariadbFixture struct {
	sqlFixture
	server *mariadbServer
	name   string
}

// mariadbSchema is the PostgreSQL fixture's schema (fixture.go) in MySQL's dialect.
// created_at is a DATETIME(6) holding UTC wall time: the node's sessions run at
// time_zone '+00:00', so no timestamp_zone is needed.
var mariadbSchema = []string{
	`CREATE TABLE events (id BIGINT PRIMARY KEY, created_at DATETIME(6) NOT NULL, state VARCHAR(16) NOT NULL,
		KEY events_created (created_at, id)) ENGINE=InnoDB`,
	`CREATE TABLE event_items (id BIGINT PRIMARY KEY, event_id BIGINT NOT NULL, KEY event_items_event (event_id),
		CONSTRAINT event_items_event FOREIGN KEY (event_id) REFERENCES events (id)) ENGINE=InnoDB`,
	`CREATE TABLE item_parts (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, KEY item_parts_item (item_id)) ENGINE=InnoDB`,
	`CREATE TABLE event_notes (id BIGINT PRIMARY KEY, event_id BIGINT NOT NULL, KEY event_notes_event (event_id)) ENGINE=InnoDB`,
	`CREATE TABLE holds (id BIGINT PRIMARY KEY, event_id BIGINT NOT NULL, KEY holds_event (event_id),
		CONSTRAINT holds_event FOREIGN KEY (event_id) REFERENCES events (id)) ENGINE=InnoDB`,
	`CREATE TABLE chaos_expect (id BIGINT PRIMARY KEY, goes BOOLEAN, items INT NOT NULL, notes INT NOT NULL, parts INT NOT NULL) ENGINE=InnoDB`,
	`CREATE TABLE chaos_held (id BIGINT PRIMARY KEY) ENGINE=InnoDB`,
}

func newMariaDBFixture(t *testing.T) *mariadbFixture {
	t.Helper()
	s := the.mariadb.get(t)
	f := &mariadbFixture{sqlFixture: sqlFixture{t: t}, server: s, name: s.createDatabase(t)}
	f.reconnect()
	t.Cleanup(func() { f.db.Close() })
	for _, q := range mariadbSchema {
		f.exec(q)
	}
	return f
}

// reconnect opens the suite's pool on the scenario's database (again, after a fault
// that killed its connections).
func (f *mariadbFixture) reconnect() {
	if f.db != nil {
		f.db.Close()
	}
	db, err := sql.Open("mysql", f.server.dsn(chaosSuiteUser, f.name))
	if err != nil {
		f.t.Fatal(err)
	}
	f.db = db
}

// seed writes events from..to as the PostgreSQL fixture's seed does (nine in ten 40
// days old, every seventh pending, every fiftieth on hold, children for every third, a
// note for every fourth), from MariaDB's sequence tables, and snapshots the keep-set in
// the same transaction.
func (f *mariadbFixture) seed(from, to int) {
	f.t.Helper()
	r := strings.NewReplacer("{seq}", fmt.Sprintf("seq_%d_to_%d", from, to), "{from}", fmt.Sprint(from), "{to}", fmt.Sprint(to))
	f.execInTx(r,
		`INSERT INTO events (id, created_at, state)
		 SELECT seq, CASE WHEN seq % 10 = 0 THEN UTC_TIMESTAMP(6) - INTERVAL 1 HOUR
		                  ELSE UTC_TIMESTAMP(6) - INTERVAL 40 DAY + INTERVAL seq SECOND END,
		             CASE WHEN seq % 7 = 0 THEN 'pending' ELSE 'done' END
		 FROM {seq}`,
		`INSERT INTO event_items (id, event_id)
		 SELECT g.seq * 10 + k.seq, g.seq FROM {seq} g, seq_1_to_2 k WHERE g.seq % 3 = 0`,
		`INSERT INTO item_parts (id, item_id)
		 SELECT i.id * 10 + 1, i.id FROM event_items i WHERE i.event_id BETWEEN {from} AND {to} AND i.id % 2 = 1`,
		`INSERT INTO event_notes (id, event_id) SELECT seq, seq FROM {seq} WHERE seq % 4 = 0`,
		`INSERT INTO holds (id, event_id) SELECT seq, seq FROM {seq} WHERE seq % 50 = 1`,
		mariadbSnapshot)
}

// mariadbSnapshot is snapshot (fixture.go) in MySQL's dialect. Its plan is pinned
// (FORCE INDEX, STRAIGHT_JOIN): the tables were filled in the same transaction, so the
// optimizer may plan on the statistics of empty tables, and in full runs of the suite
// it did: for each event it scanned every item part and looked its item up (133
// million lookups, over four minutes of the 20,000-row seed, against a second).
const mariadbSnapshot = `INSERT IGNORE INTO chaos_expect (id, goes, items, notes, parts)
		SELECT e.id,
		       e.created_at < UTC_TIMESTAMP(6) - INTERVAL 30 DAY AND e.state = 'done'
		         AND NOT EXISTS (SELECT 1 FROM holds h FORCE INDEX (holds_event) WHERE h.event_id = e.id),
		       (SELECT count(*) FROM event_items i FORCE INDEX (event_items_event) WHERE i.event_id = e.id),
		       (SELECT count(*) FROM event_notes n FORCE INDEX (event_notes_event) WHERE n.event_id = e.id),
		       (SELECT count(*) FROM event_items i FORCE INDEX (event_items_event)
		          STRAIGHT_JOIN item_parts p FORCE INDEX (item_parts_item) ON p.item_id = i.id WHERE i.event_id = e.id)
		FROM events e`

func (f *mariadbFixture) eventsLeft() int { return f.count(`SELECT count(*) FROM events`) }

// measure is fixture.measure on MariaDB, from one consistent snapshot.
func (f *mariadbFixture) measure() figures {
	f.t.Helper()
	return measureIn(f.t, f.db, mariadbLedgerExists)
}

// mariadbLedgerExists counts the ledger's table in the scenario's database.
const mariadbLedgerExists = `SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'retention_metadata'`

// eventsConfig writes a node configuration for the events pass on MariaDB, the node
// connecting as chaosNodeUser.
func (f *mariadbFixture) eventsConfig(o passOpts) string {
	f.t.Helper()
	return writeConfig(f.t, "mysql", f.server.dsn(chaosNodeUser, f.name), "", eventsPass(o))
}

// afterRecovery is fixture.afterRecovery on MariaDB.
func (f *mariadbFixture) afterRecovery(path string) figures {
	f.t.Helper()
	return recoverLedger(f.t, path, f.measure, func(since time.Time) int {
		return f.count(`SELECT count(*) FROM retention_metadata WHERE state = 'InProgress' AND start_time < ?`, since.UTC())
	}, func() string {
		return fmt.Sprintf("%d runs", f.count(`SELECT count(*) FROM retention_metadata WHERE state = 'InProgress'`))
	})
}

// killSessions kills every session of the node's user on the scenario's database
// (KILL CONNECTION: the statement and the session) every interval, until the returned
// stop is called, which says how many it killed.
func (f *mariadbFixture) killSessions(every time.Duration) (stop func() int) {
	f.t.Helper()
	admin, err := sql.Open("mysql", f.server.dsn(chaosSuiteUser, ""))
	if err != nil {
		f.t.Fatal(err)
	}
	return injectEvery(every, func(ctx context.Context) int64 {
		rows, err := admin.QueryContext(ctx, `SELECT id FROM information_schema.PROCESSLIST WHERE user = ? AND db = ?`, chaosNodeUser, f.name)
		if err != nil {
			return 0
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if rows.Scan(&id) == nil {
				ids = append(ids, id)
			}
		}
		rows.Close()
		var killed int64
		for _, id := range ids {
			if _, err := admin.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err == nil {
				killed++
			}
		}
		return killed
	}, func() { admin.Close() })
}

// TestMariaDBConnectionsKilledMidBatch is TestBackendsKilledMidBatch on MariaDB: the
// node's sessions are ended with KILL CONNECTION.
func TestMariaDBConnectionsKilledMidBatch(t *testing.T) {
	rec := the.results.begin(t, "MariaDB: KILL CONNECTION of every node session every 200 ms until 3 sweeps failed, under `run`", "0 (SIGTERM)")
	sessionsKilledMidBatch(t, rec, newMariaDBFixture(t))
}

// TestMariaDBServerRestartUnderRun is TestServerRestartUnderRun on MariaDB: the server
// is killed with SIGKILL (no shutdown; InnoDB recovers from its redo log on the way up)
// and started again on the same data directory.
func TestMariaDBServerRestartUnderRun(t *testing.T) {
	rec := the.results.begin(t, "MariaDB: the server killed with SIGKILL and started again mid-drain, under `run`", "0 (SIGTERM)")
	serverRestartUnderRun(t, rec, newMariaDBFixture(t))
}

// TestMariaDBSIGKILLAndRestart is TestSIGKILLAndRestart on MariaDB.
func TestMariaDBSIGKILLAndRestart(t *testing.T) {
	rec := the.results.begin(t, "MariaDB: SIGKILL of `run` mid-drain, then `run` again", "-1 (killed), then 0 (SIGTERM)")
	sigkillAndRestart(t, rec, newMariaDBFixture(t))
}

// TestMariaDBLockHeldPastLockWaitTimeout: another session holds FOR UPDATE locks on
// rows of a table the configuration does not list, which references ten expired events
// ON DELETE CASCADE. A batch holding one of those events cannot pass them over (the
// cascade must lock the referencing row, a wait SKIP LOCKED does not cover), so it waits
// the node's innodb_lock_wait_timeout (5 s), fails with 1205, rolls back whole, and is
// retried until `sweep --drain --drain-retry 3s` gives up: exit 1, the batches before
// it deleted, nothing wrongly or half deleted. Once the locks go, a second drain deletes the rest
// and exits 0.
func TestMariaDBLockHeldPastLockWaitTimeout(t *testing.T) {
	rec := the.results.begin(t, "MariaDB: FOR UPDATE held past innodb_lock_wait_timeout (5s) on rows an unlisted ON DELETE CASCADE reference would delete, through `sweep --drain`; then released", "1, then 0")
	f := newMariaDBFixture(t)
	f.seed(1, 3000)
	f.exec(`CREATE TABLE event_audit (id BIGINT PRIMARY KEY, event_id BIGINT NOT NULL, KEY event_audit_event (event_id),
		CONSTRAINT event_audit_event FOREIGN KEY (event_id) REFERENCES events (id) ON DELETE CASCADE) ENGINE=InnoDB`)
	f.exec(`INSERT INTO event_audit (id, event_id) SELECT id, id FROM chaos_expect WHERE goes ORDER BY id LIMIT 400, 10`)
	ctx := context.Background()
	locker, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Rollback()
	var locked int
	if err := locker.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT id FROM event_audit FOR UPDATE) l`).Scan(&locked); err != nil || locked != 10 {
		t.Fatalf("locking the audit rows: %d rows, %v", locked, err)
	}
	goes := f.count(`SELECT count(*) FROM chaos_expect WHERE goes`)

	path := f.eventsConfig(passOpts{batchSize: 100})
	code, p := runToEnd(t, "sweep", "--drain", "--drain-retry", "3s", "--config", path)
	rec.exit(code)
	g := f.measure()
	g.partial(t, "with the locks held")
	g.noRunInProgress(t, "with the locks held")
	if code != 1 || g.deleted == 0 || g.deleted >= goes || !strings.Contains(strings.ToLower(p.output()), "lock wait timeout") {
		t.Errorf("with the locks held: exit %d (want 1), %d deleted (want some of the %d expired, not all), or no lock wait timeout logged:\n%s",
			code, g.deleted, goes, p.output())
	}
	if left := f.count(`SELECT count(*) FROM event_audit`); left != 10 {
		t.Errorf("%d of the 10 locked audit rows left, want all", left)
	}

	if err := locker.Rollback(); err != nil {
		t.Fatal(err)
	}
	code, p = runToEnd(t, "sweep", "--drain", "--config", path)
	if rec.exit(code) != 0 {
		t.Errorf("the drain after the locks went exited %d, want 0:\n%s", code, p.output())
	}
	g = f.measure()
	rec.final(g)
	g.exact(t, "after the locks went")
	g.noRunInProgress(t, "after the locks went")
	g.ledgerMatches(t, "after both drains", g.deleted)
}

// The MariaDB fixture as a faultDB (faultdb_test.go).

func (f *mariadbFixture) hasLedger() bool { return f.count(mariadbLedgerExists) == 1 }

func (f *mariadbFixture) crashServer() error { return f.server.Crash() }

func (f *mariadbFixture) restartServer() error {
	if err := f.server.Start(); err != nil {
		return err
	}
	f.reconnect()
	return nil
}

func (f *mariadbFixture) ensureServer() {
	if !f.server.answers() {
		_ = f.server.Start()
	}
}

// runs lists the events pass's ledger runs, for the log.
func (f *mariadbFixture) runs() string { return ledgerRuns(f.db) }

// TestMariaDBDeadlock is TestDeadlock on MariaDB, with InnoDB's row locks: a trigger on
// deleting the items of one expired event locks chaos_lock's row 3, then asks for row
// 2; another session, already heavy with 5,000 rows written (InnoDB rolls back the
// lighter of two deadlocked transactions, so the batch is the victim), holds row 2 and,
// once the batch waits for it, asks for row 3. InnoDB's detector aborts the
// batch with 1213; the node must retry it, delete every expired row and exit 0, and the
// server must count the deadlock.
func TestMariaDBDeadlock(t *testing.T) {
	rec := the.results.begin(t, "MariaDB: a deadlock between a batch and another session (1213 to the batch), `sweep --drain`", "0")
	f := newMariaDBFixture(t)
	f.seed(1, 2000)
	victim := f.count(`SELECT min(id) FROM chaos_expect WHERE goes AND items > 0 AND id > 500`)
	f.exec(`CREATE TABLE chaos_lock (id INT PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB`)
	f.exec(`INSERT INTO chaos_lock VALUES (2, 0), (3, 0)`)
	f.exec(`CREATE TABLE chaos_ballast (id INT PRIMARY KEY) ENGINE=InnoDB`)
	f.exec(fmt.Sprintf(`CREATE TRIGGER event_items_deadlock BEFORE DELETE ON event_items FOR EACH ROW
		BEGIN
			IF OLD.event_id = %d THEN
				UPDATE chaos_lock SET n = n + 1 WHERE id = 3;
				UPDATE chaos_lock SET n = n + 1 WHERE id = 2;
			END IF;
		END`, victim))
	deadlocksBefore := f.count(`SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'INNODB_DEADLOCKS'`)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO chaos_ballast SELECT seq FROM seq_1_to_5000`,
		`UPDATE chaos_lock SET n = n + 1 WHERE id = 2`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	other := make(chan error, 1)
	go func() { other <- f.closeCycle(ctx, tx) }()
	drainThroughDeadlock(t, rec, f, cancel, other)
	if n := f.count(`SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'INNODB_DEADLOCKS'`); n <= deadlocksBefore {
		t.Errorf("the server counted no deadlock (%d before, %d after): the fault was not injected", deadlocksBefore, n)
	}
}

// closeCycle waits until a transaction waits for a lock tx holds (the batch, holding
// row 3, asking for row 2), asks for row 3, which closes the cycle, and commits once it
// has the row.
func (f *mariadbFixture) closeCycle(ctx context.Context, tx *sql.Tx) error {
	defer tx.Rollback()
	// InnoDB refreshes the lock tables' cache only when it was last read over 0.1 s ago:
	// read every 10 ms, it never refreshed, and the wait was never seen (docs/drivers.md,
	// "Pacing signals").
	tick := time.NewTicker(150 * time.Millisecond)
	defer tick.Stop()
	for {
		var waiting int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.INNODB_LOCK_WAITS w
			JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id
			WHERE b.trx_mysql_thread_id = CONNECTION_ID()`).Scan(&waiting); err != nil {
			return err
		}
		if waiting > 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no batch waited for row 2: %w", ctx.Err())
		case <-tick.C:
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE chaos_lock SET n = n + 1 WHERE id = 3`); err != nil {
		return err
	}
	return tx.Commit()
}
