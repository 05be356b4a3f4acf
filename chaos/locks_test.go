//go:build chaos

package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLockedRows holds, in another session, FOR UPDATE locks on 50 expired events for
// as long as `sweep --drain` runs. SKIP LOCKED passes them over: the drain must delete
// every other expired row, leave those 50, and, its retries spent (--drain-retry 3s),
// exit 1 naming how many are left; once the locks go, a second drain deletes them and
// exits 0.
func TestLockedRows(t *testing.T) {
	rec := the.results.begin(t, "FOR UPDATE on 50 expired events in another session, held through `sweep --drain`; then released", "1, then 0")
	lockedDrain(t, rec, `SELECT id FROM events WHERE id IN (SELECT id FROM chaos_expect WHERE goes ORDER BY id LIMIT 50 OFFSET 300) FOR UPDATE`,
		`SELECT id FROM chaos_expect WHERE goes ORDER BY id LIMIT 50 OFFSET 300`)
}

// TestLockedChildren holds, in another session, FOR UPDATE locks on the items of 10
// expired events (the events themselves are free) for as long as `sweep --drain` runs
// with a 2 s statement timeout. Those 10 events cannot go with their children; every
// other expired row must, and the drain must exit 1 naming how many are left; once the
// locks go, a second drain deletes them and exits 0.
func TestLockedChildren(t *testing.T) {
	rec := the.results.begin(t, "FOR UPDATE on the children of 10 expired events in another session, held through `sweep --drain`; then released", "1, then 0")
	lockedDrain(t, rec, `SELECT id FROM event_items WHERE event_id IN (SELECT id FROM chaos_expect WHERE goes AND items > 0 ORDER BY id DESC LIMIT 10) FOR UPDATE`,
		`SELECT id FROM chaos_expect WHERE goes AND items > 0 ORDER BY id DESC LIMIT 10`)
}

// lockedDrain seeds, takes the locks of lockQuery in a transaction of its own, holds the
// events heldQuery returns, and runs the two drains.
func lockedDrain(t *testing.T, rec *record, lockQuery, heldQuery string) {
	t.Helper()
	f := newFixture(t)
	f.seed(1, 3000)
	held := f.hold(heldQuery)
	ctx := context.Background()
	locker, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Rollback()
	var locked int
	if err := locker.QueryRowContext(ctx, `SELECT count(*) FROM (`+lockQuery+`) l`).Scan(&locked); err != nil || locked == 0 {
		t.Fatalf("%s: %d rows, %v", lockQuery, locked, err)
	}

	path := f.config(passOpts{batchSize: 100, statementTimeout: "2s"}, "", "")
	code, p := runToEnd(t, "sweep", "--drain", "--drain-retry", "3s", "--config", path)
	rec.exit(code)
	g := f.measure()
	g.exact(t, "with the locks held")
	g.noRunInProgress(t, "with the locks held")
	if code != 1 || !p.names(held) {
		t.Errorf("a drain that left %d locked rows exited %d, want 1 naming the %d rows left:\n%s", held, code, held, p.output())
	}

	if err := locker.Rollback(); err != nil {
		t.Fatal(err)
	}
	f.release()
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

// TestDeadlock makes a batch of `sweep --drain` deadlock with another session: a
// trigger on deleting the children of one expired event takes advisory lock 3, pauses,
// then asks for lock 2; the other session holds lock 2 and, once the batch holds 3,
// asks for 3. The server's detector (deadlock_timeout 100ms; 30s in the other session)
// aborts the batch with 40P01; the node must retry it, delete every expired row and
// exit 0.
func TestDeadlock(t *testing.T) {
	rec := the.results.begin(t, "a deadlock between a batch and another session (40P01 to the batch), `sweep --drain`", "0")
	f := newFixture(t)
	f.seed(1, 2000)
	victim := f.count(`SELECT min(id) FROM chaos_expect WHERE goes AND items > 0 AND id > 500`)
	f.exec(fmt.Sprintf(`CREATE FUNCTION chaos_deadlock() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF OLD.event_id = %d THEN
				PERFORM pg_advisory_xact_lock(3);
				PERFORM pg_sleep(0.3);
				PERFORM pg_advisory_xact_lock(2);
			END IF;
			RETURN OLD;
		END $$`, victim))
	f.exec(`CREATE TRIGGER event_items_deadlock BEFORE DELETE ON event_items FOR EACH ROW EXECUTE FUNCTION chaos_deadlock()`)
	deadlocksBefore := f.count(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`)

	other := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `SET LOCAL deadlock_timeout = '30s'; SELECT pg_advisory_xact_lock(2)`); err != nil {
		t.Fatal(err)
	}
	go func() { other <- closeCycle(ctx, tx) }()
	drainThroughDeadlock(t, rec, f, cancel, other)
	waitUntil(t, "the server to count the deadlock", func() bool {
		return f.count(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`) > deadlocksBefore
	})
}

// drainThroughDeadlock runs `sweep --drain` while the other session (other reports
// how it ended) closes a deadlock with a batch, then stops that session: the drain must
// exit 0 with every expired row gone and the ledger's count exact, and the other
// session must have committed (the batch was the victim, and was retried).
func drainThroughDeadlock(t *testing.T, rec *record, f faultDB, cancel context.CancelFunc, other <-chan error) {
	t.Helper()
	code, p := runToEnd(t, "sweep", "--drain", "--config", f.eventsConfig(passOpts{batchSize: 100}))
	if rec.exit(code) != 0 {
		t.Errorf("sweep --drain exited %d, want 0:\n%s", code, p.output())
	}
	cancel()
	if err := <-other; err != nil {
		t.Errorf("the other session: %v (the batch should have been the deadlock's victim)", err)
	}
	g := f.measure()
	rec.final(g)
	g.exact(t, "after the drain")
	g.noRunInProgress(t, "after the drain")
	g.ledgerMatches(t, "after the drain", g.deleted)
}

// closeCycle waits until another backend holds advisory lock 3, then asks for it while
// tx holds lock 2, which closes the cycle; it commits once it has the lock.
func closeCycle(ctx context.Context, tx *sql.Tx) error {
	defer tx.Rollback()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var holders int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 3
			AND granted AND pid <> pg_backend_pid()`).Scan(&holders); err != nil {
			return err
		}
		if holders > 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no batch took lock 3: %w", ctx.Err())
		case <-tick.C:
		}
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(3)`); err != nil {
		return err
	}
	return tx.Commit()
}

// TestRestrictingUnlistedForeignKeys references expired events from three tables the
// configuration does not list: ON DELETE RESTRICT, NO ACTION, and DEFERRABLE INITIALLY
// DEFERRED (which fails only at COMMIT, after the batch deleted the children). The
// referenced events must stay with all their children, each in quarantine by key, with
// a summary of the held rows logged; every other expired row goes. Rows left that the pass reported are left on
// purpose (docs/node.md): the drain exits 0 with a warning naming how many.
func TestRestrictingUnlistedForeignKeys(t *testing.T) {
	rec := the.results.begin(t, "unlisted FKs to expired events: RESTRICT, NO ACTION, DEFERRABLE INITIALLY DEFERRED; `sweep --drain`", "0 (a warning names the rows left)")
	f := newFixture(t)
	f.seed(1, 3000)
	for _, q := range []string{
		`CREATE TABLE audits (id bigint PRIMARY KEY, event_id bigint NOT NULL REFERENCES events (id) ON DELETE RESTRICT)`,
		`CREATE TABLE reviews (id bigint PRIMARY KEY, event_id bigint NOT NULL REFERENCES events (id))`,
		`CREATE TABLE receipts (id bigint PRIMARY KEY, event_id bigint NOT NULL REFERENCES events (id) DEFERRABLE INITIALLY DEFERRED)`,
		`INSERT INTO audits SELECT id, id FROM chaos_expect WHERE goes AND id % 97 = 3`,
		`INSERT INTO reviews SELECT id, id FROM chaos_expect WHERE goes AND id % 97 = 5`,
		`INSERT INTO receipts SELECT id, id FROM chaos_expect WHERE goes AND id % 97 IN (7, 9, 12)`,
	} {
		f.exec(q)
	}
	held := f.hold(`SELECT event_id FROM audits UNION SELECT event_id FROM reviews UNION SELECT event_id FROM receipts`)
	if f.count(`SELECT count(*) FROM chaos_expect WHERE id IN (SELECT event_id FROM receipts) AND items > 0`) == 0 {
		t.Fatal("no deferred reference to an event with children: the scenario would not test a half-delete")
	}

	code, p := runToEnd(t, "sweep", "--drain", "--drain-retry", "2s", "--config", f.config(passOpts{batchSize: 100}, "", ""))
	warned := p.logged(func(m map[string]any) bool {
		return m["pass"] == "events" && m["level"] == "warning" && m["left"] == float64(held)
	})
	if rec.exit(code) != 0 || len(warned) == 0 {
		t.Errorf("a drain that could not delete %d referenced rows exited %d, want 0 with a warning naming them:\n%s", held, code, p.output())
	}
	g := f.measure()
	rec.final(g)
	g.exact(t, "after the drain")
	g.noRunInProgress(t, "after the drain")
	g.ledgerMatches(t, "after the drain", g.deleted)

	// Each skipped row is logged at debug only; the sweep logs one summary of them, and
	// the quarantine keeps every one by key.
	skipped := map[string]bool{}
	keys, err := f.db.QueryContext(context.Background(), `SELECT row_key FROM retention_quarantine WHERE pass_name = 'events'`)
	if err != nil {
		t.Fatal(err)
	}
	for keys.Next() {
		var key string
		_ = keys.Scan(&key)
		skipped[strings.Trim(key, "[]")] = true
	}
	keys.Close()
	if len(p.logged(func(m map[string]any) bool {
		return m["pass"] == "events" && m["level"] == "warning" && strings.HasPrefix(fmt.Sprint(m["msg"]), "rows held in place")
	})) == 0 {
		t.Errorf("no summary of the held rows:\n%s", p.output())
	}
	var want []string
	rows, err := f.db.QueryContext(context.Background(), `SELECT id FROM chaos_held ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		_ = rows.Scan(&id)
		want = append(want, strconv.FormatInt(id, 10))
	}
	rows.Close()
	var got []string
	for k := range skipped {
		got = append(got, k)
	}
	sort.Slice(got, func(i, j int) bool { return len(got[i]) < len(got[j]) || len(got[i]) == len(got[j]) && got[i] < got[j] })
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("rows in quarantine: %v; the %d referenced rows: %v", got, held, want)
	}
	if _, skippedTotal, _ := summaryRow(t, p.stdout.String(), "events"); skippedTotal < held {
		t.Errorf("the summary shows %d skipped, fewer than the %d referenced rows:\n%s", skippedTotal, held, p.stdout.String())
	}
}
