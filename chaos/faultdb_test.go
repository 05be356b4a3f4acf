//go:build chaos

package chaos

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// faultDB is a scenario's database where a scenario runs alike on more than one
// server: PostgreSQL's fixture or MariaDB's. Each scenario body below is written once
// against it; the database's own fault (how its sessions are ended, how its server is
// crashed) is one of its methods.
type faultDB interface {
	seed(from, to int)
	eventsLeft() int
	measure() figures
	count(q string, args ...any) int
	// eventsConfig writes the node configuration of the events pass alone.
	eventsConfig(o passOpts) string
	afterRecovery(path string) figures
	// hasLedger reports whether the node has created its ledger table yet.
	hasLedger() bool
	// runs lists the events pass's ledger runs, for the log.
	runs() string
	// reconnect replaces the suite's pool after a fault that may have ended its
	// sessions.
	reconnect()
	// killSessions ends every session the node has on the scenario's database, every
	// interval, until the returned stop is called, which says how many it ended.
	killSessions(every time.Duration) (stop func() int)
	// crashServer stops the server with no shutdown; restartServer starts it again and
	// reconnects the suite's pool; ensureServer starts it if it is down.
	crashServer() error
	restartServer() error
	ensureServer()
}

// sessionsKilledMidBatch ends every session of the node every 200 ms while `run`
// drains 20,000 events, until three sweeps have failed; the node must recover and
// drain without a wrong or half delete, and exit 0 on SIGTERM.
func sessionsKilledMidBatch(t *testing.T, rec *record, f faultDB) {
	f.seed(1, 20000)
	path := f.eventsConfig(passOpts{batchDelay: "20ms"})
	n := start(t, "run", "--config", path)
	n.waitFor("the first sweep", msg("sweep started", "events"))
	stop := f.killSessions(200 * time.Millisecond)
	for range 3 {
		n.waitFor("a failed sweep", msg("sweep failed", "events"))
	}
	killed := stop()
	if killed == 0 {
		t.Error("no session was ended: the fault was not injected")
	}
	n.waitFor("a drained sweep after the killing stopped", sweepDone("events", "drained"))
	n.signal(syscall.SIGTERM)
	if code := rec.exit(n.wait()); code != 0 {
		t.Errorf("run exited %d after SIGTERM, want 0:\n%s", code, n.output())
	}
	f.reconnect()
	g := f.afterRecovery(path)
	rec.final(g)
	t.Logf("ledger runs (id state/reason rows): %s; %d ledger writes failed", f.runs(), len(n.logged(observerFailed)))
	t.Logf("%d sessions ended; %+v", killed, g)
	g.exact(t, "after the drain")
	g.noRunInProgress(t, "after the node exited and recovery ran")
	g.ledgerAtMost(t, "after the drain")
}

// serverRestartUnderRun crashes the server while `run` is mid-drain (2,000 rows gone)
// and starts it again; the node must log the failure, finish the drain once the server
// is back, and exit 0 on SIGTERM.
func serverRestartUnderRun(t *testing.T, rec *record, f faultDB) {
	// Every phase's time goes to the log, the seed's too: in full runs of the suite the
	// MariaDB variant took 239-301 s, 29 s alone, and the log showed the seed's keep-set
	// snapshot took the rest (a plan on empty tables' statistics, now pinned: see
	// mariadbSnapshot).
	logPhase := phaseLogger(t)
	f.seed(1, 20000)
	logPhase("seeded")
	before := f.eventsLeft()
	path := f.eventsConfig(passOpts{batchDelay: "20ms"})
	n := start(t, "run", "--config", path)
	logPhase("node started")
	waitUntil(t, "2,000 rows deleted", func() bool { return f.eventsLeft() <= before-2000 })
	logPhase("2,000 rows deleted")
	if err := f.crashServer(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.ensureServer) // the next scenarios need it up, however this one ends
	logPhase("server crashed")
	n.waitFor("the failed sweep", msg("sweep failed", "events"))
	logPhase("sweep failure logged")
	if err := f.restartServer(); err != nil {
		t.Fatal(err)
	}
	logPhase("server up again")
	n.waitFor("a drained sweep after the restart", sweepDone("events", "drained"))
	logPhase("drained")
	n.signal(syscall.SIGTERM)
	if code := rec.exit(n.wait()); code != 0 {
		t.Errorf("run exited %d after SIGTERM, want 0:\n%s", code, n.output())
	}
	logPhase("node exited")
	g := f.afterRecovery(path)
	logPhase("ledger recovered")
	rec.final(g)
	t.Logf("ledger runs (id state/reason rows): %s; %d ledger writes failed", f.runs(), len(n.logged(observerFailed)))
	g.exact(t, "after the drain")
	g.noRunInProgress(t, "after the node exited and recovery ran")
	g.ledgerAtMost(t, "after the drain")
}

// sigkillAndRestart kills `run` with SIGKILL mid-drain, once the ledger shows the run's
// progress, and starts it again. Right after the kill nothing is wrongly or half
// deleted and the ledger shows the killed run InProgress with at most the rows gone;
// the restarted node must finish the drain, close the killed run as Failed (abandoned)
// keeping its counts, and exit 0 on SIGTERM.
func sigkillAndRestart(t *testing.T, rec *record, f faultDB) {
	f.seed(1, 20000)
	before := f.eventsLeft()
	// 50 ms between batches: the drain lasts well past the ledger's first progress
	// write (at most one a second), so the kill lands mid-drain.
	path := f.eventsConfig(passOpts{batchDelay: "50ms"})
	n := start(t, "run", "--config", path)
	waitUntil(t, "2,000 rows deleted and progress in the ledger", func() bool {
		return f.eventsLeft() <= before-2000 && f.hasLedger() &&
			f.count(`SELECT count(*) FROM retention_metadata WHERE name = 'events' AND state = 'InProgress' AND rows_deleted > 0`) == 1
	})
	n.signal(syscall.SIGKILL)
	rec.exit(n.wait())

	g := f.measure()
	g.partial(t, "right after the kill")
	killedRun := f.count(`SELECT coalesce(max(id), 0) FROM retention_metadata WHERE name = 'events' AND state = 'InProgress'`)
	if killedRun == 0 {
		t.Fatal("no events run InProgress after the SIGKILL: the kill came after the drain")
	}
	if g.ledgerRows > g.deleted {
		t.Errorf("right after the kill the ledger recorded %d rows deleted, the table lost %d", g.ledgerRows, g.deleted)
	}
	// The run's id is written into the statements (an integer the suite read), so one
	// text serves both databases' placeholders.
	ofRun := func(q string) string { return fmt.Sprintf(q, killedRun) }

	n = start(t, "run", "--config", path)
	n.waitFor("a drained sweep after the restart", sweepDone("events", "drained"))
	waitUntilWithin(t, recoveryGuard, "the killed run closed", func() bool {
		return f.count(ofRun(`SELECT count(*) FROM retention_metadata WHERE id = %d AND state <> 'InProgress'`)) == 1
	})
	n.signal(syscall.SIGTERM)
	if code := rec.exit(n.wait()); code != 0 {
		t.Errorf("the restarted run exited %d after SIGTERM, want 0:\n%s", code, n.output())
	}
	g = f.measure()
	rec.final(g)
	t.Logf("ledger runs (id state/reason rows): %s", f.runs())
	g.exact(t, "after the restarted drain")
	g.noRunInProgress(t, "after the restarted node exited")
	g.ledgerAtMost(t, "after the restarted drain")
	if f.count(ofRun(`SELECT count(*) FROM retention_metadata WHERE id = %d AND state = 'Failed' AND stop_reason = 'abandoned'`)) != 1 {
		t.Errorf("the killed run %d is not Failed with stop reason abandoned", killedRun)
	}
	if f.count(ofRun(`SELECT rows_deleted FROM retention_metadata WHERE id = %d`)) == 0 {
		t.Errorf("the killed run %d recorded no rows, though it deleted batches before the kill", killedRun)
	}
}

// phaseLogger returns a function that logs what just happened and how long it took
// since the last call (the first: since phaseLogger), so a slow scenario's log says
// which of its phases took the time.
func phaseLogger(t *testing.T) func(what string) {
	phase := time.Now()
	return func(what string) {
		t.Helper()
		t.Logf("%s after %v", what, time.Since(phase).Round(10*time.Millisecond))
		phase = time.Now()
	}
}
