//go:build chaos

package chaos

import (
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// TestSIGKILLAndRestart kills `run` with SIGKILL mid-drain, once the ledger shows the
// run's progress, and starts it again. Right after the kill nothing is wrongly or half
// deleted and the ledger shows the killed run InProgress with at most the rows gone;
// the restarted node must finish the drain, close the killed run as Failed
// (abandoned) keeping its counts, and exit 0 on SIGTERM.
func TestSIGKILLAndRestart(t *testing.T) {
	rec := the.results.begin(t, "SIGKILL of `run` mid-drain, then `run` again", "-1 (killed), then 0 (SIGTERM)")
	sigkillAndRestart(t, rec, newFixture(t))
}

// TestThreeNodesOneTable runs three `run` nodes on one configuration: SKIP LOCKED must
// hand them disjoint rows, the three drains together delete exactly the expired rows,
// the ledger counts each deleted row once, and each node exits 0 on SIGTERM.
func TestThreeNodesOneTable(t *testing.T) {
	rec := the.results.begin(t, "three `run` nodes on one table at once", "0, 0, 0 (SIGTERM)")
	f := newFixture(t)
	f.seed(1, 30000)
	path := f.config(passOpts{batchDelay: "5ms"}, "", "")
	var nodes []*proc
	for range 3 {
		nodes = append(nodes, start(t, "run", "--config", path))
	}
	// A node whose batches meet only rows the others hold ends its sweep contended and
	// leaves them to the others until its next interval; the node that deletes last
	// drains. Which node ends how is timing, so each must end its sweep one of the two
	// ways, and one of them drained.
	drained := 0
	for _, n := range nodes {
		m := n.waitFor("a drained or contended sweep", func(m map[string]any) bool {
			return sweepDone("events", "drained")(m) || sweepDone("events", "contended")(m)
		})
		if m["reason"] == "drained" {
			drained++
		}
	}
	if drained == 0 {
		t.Errorf("every node's sweep ended contended: none drained the table")
	}
	for _, n := range nodes {
		n.signal(syscall.SIGTERM)
	}
	for i, n := range nodes {
		if code := rec.exit(n.wait()); code != 0 {
			t.Errorf("node %d exited %d after SIGTERM, want 0:\n%s", i, code, n.output())
		}
	}
	g := f.measure()
	rec.final(g)
	g.exact(t, "after the three drains")
	g.noRunInProgress(t, "after the three nodes exited")
	g.ledgerMatches(t, "after the three drains", g.deleted)
}

// TestTableDroppedAndRestored drops the events table (with CASCADE, as a restore
// script would) under a running node with a second pass, and restores it from a copy
// with new expired rows. While it is gone the other pass must keep sweeping and
// /readyz must answer 503 (configuration drift); once it is back the node must drain
// it and /readyz answer 200 again; SIGTERM exits 0.
func TestTableDroppedAndRestored(t *testing.T) {
	rec := the.results.begin(t, "events dropped (CASCADE) under `run` with a second pass, then restored with new expired rows", "0 (SIGTERM)")
	f := newFixture(t)
	f.seed(1, 3000)
	f.exec(`CREATE TABLE sessions (id bigint PRIMARY KEY, last_seen timestamptz NOT NULL)`)
	f.exec(`CREATE INDEX sessions_seen ON sessions (last_seen, id)`)
	seedSessions := func(from, to int) {
		f.exec(`INSERT INTO sessions SELECT g, now() - CASE WHEN g % 2 = 0 THEN interval '2 days' ELSE interval '1 hour' END
			FROM generate_series($1::bigint, $2::bigint) g`, from, to)
	}
	seedSessions(1, 1000)
	sessions := `  - { name: sessions, table: sessions, key: id, timestamp: last_seen, retention_period: 1d, batch_size: 200, sweep_interval: 1s, max_startup_stagger: 0s }
`
	path := f.config(passOpts{sweepInterval: "1s"}, sessions, "  admin: 127.0.0.1:0\n")
	n := start(t, "run", "--config", path)
	readyz := "http://" + fmt.Sprint(n.waitFor("the admin endpoint", func(m map[string]any) bool { return m["msg"] == "admin endpoint listening" })["addr"]) + "/readyz"
	n.waitFor("a drained events sweep", sweepDone("events", "drained"))

	f.exec(`CREATE TABLE chaos_events_saved AS TABLE events`)
	f.exec(`DROP TABLE events CASCADE`)
	n.waitFor("a warning about the dropped table", trouble("events"))
	expectWithin(t, 30*time.Second, "/readyz 503 while events is gone", func() bool { return status(readyz) == http.StatusServiceUnavailable })
	seedSessions(1001, 1500)
	waitUntil(t, "the sessions pass deleting while events is gone", func() bool {
		return f.count(`SELECT count(*) FROM sessions WHERE id > 1000 AND last_seen < now() - interval '1 day'`) == 0
	})

	for _, q := range []string{
		`CREATE TABLE events (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, state text NOT NULL)`,
		`INSERT INTO events SELECT * FROM chaos_events_saved`,
		`CREATE INDEX events_created ON events (created_at, id)`,
		`ALTER TABLE event_items ADD FOREIGN KEY (event_id) REFERENCES events (id)`,
		`ALTER TABLE holds ADD FOREIGN KEY (event_id) REFERENCES events (id)`,
		`DROP TABLE chaos_events_saved`,
	} {
		f.exec(q)
	}
	f.seed(3001, 4000)
	waitUntil(t, "the restored table drained", func() bool {
		return f.count(`SELECT count(*) FROM events e JOIN chaos_expect x ON x.id = e.id WHERE x.goes`) == 0
	})
	expectWithin(t, 30*time.Second, "/readyz 200 once events is back", func() bool { return status(readyz) == http.StatusOK })
	n.signal(syscall.SIGTERM)
	if code := rec.exit(n.wait()); code != 0 {
		t.Errorf("run exited %d after SIGTERM, want 0:\n%s", code, n.output())
	}
	g := f.afterRecovery(path)
	rec.final(g)
	t.Logf("ledger runs (id state/reason rows): %s", f.runs())
	g.exact(t, "after the restore")
	g.noRunInProgress(t, "after the node exited")
	if left := f.count(`SELECT count(*) FROM sessions WHERE last_seen < now() - interval '1 day'`); left != 0 {
		t.Errorf("%d expired sessions left", left)
	}
	if kept := f.count(`SELECT count(*) FROM sessions`); kept != 750 {
		t.Errorf("%d sessions kept, want the 750 recent ones", kept)
	}
}

// status is the HTTP status of a GET of url (0 when it does not answer).
func status(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestSIGTERMRightAfterStart stops `run` with SIGTERM as soon as it says it is running,
// ten times over, while its passes (the events pass, the run recovery, the metadata
// cleanup) and the work-queue poller are starting their first rounds: each stop must
// exit 0 and leave no run InProgress, with no recovery to help.
func TestSIGTERMRightAfterStart(t *testing.T) {
	rec := the.results.begin(t, "SIGTERM as soon as `run` logs `node running`, ten times", "0 (×10)")
	f := newFixture(t)
	f.seed(1, 3000)
	path := f.config(passOpts{}, "", "")
	left := 0
	for i := range 10 {
		n := start(t, "run", "--config", path)
		n.waitFor("node running", func(m map[string]any) bool { return m["msg"] == "node running" })
		n.signal(syscall.SIGTERM)
		if code := rec.exit(n.wait()); code != 0 {
			t.Errorf("stop %d: run exited %d after SIGTERM, want 0:\n%s", i, code, n.output())
		}
		if g := f.measure(); g.inProgress > left {
			t.Errorf("stop %d left %d more runs InProgress (now %s)", i, g.inProgress-left, f.openRuns())
			left = g.inProgress
		}
	}
	g := f.measure()
	rec.final(g)
	g.partial(t, "after ten stops")
	g.ledgerMatches(t, "after ten stops", g.deleted)
}
