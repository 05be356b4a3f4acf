//go:build chaos

package chaos

import (
	"strings"
	"testing"
)

// TestBackendsKilledMidBatch terminates every backend of the node (its sweep's
// connection, the ledger's, the candidates') every 200 ms while `run` drains, until
// three sweeps have failed; the node must recover and drain without a wrong or half
// delete, and exit 0 on SIGTERM.
func TestBackendsKilledMidBatch(t *testing.T) {
	rec := the.results.begin(t, "pg_terminate_backend of every node backend every 200 ms until 3 sweeps failed, under `run`", "0 (SIGTERM)")
	sessionsKilledMidBatch(t, rec, newFixture(t))
}

// TestServerRestartUnderRun crashes the server (immediate stop: no checkpoint, every
// backend gone) while `run` is mid-drain and starts it again; the node must finish the
// drain once the server is back and exit 0 on SIGTERM.
func TestServerRestartUnderRun(t *testing.T) {
	rec := the.results.begin(t, "server stopped -m immediate and started again mid-drain, under `run`", "0 (SIGTERM)")
	serverRestartUnderRun(t, rec, newFixture(t))
}

// TestTinyStatementTimeout gives the pass a 1 ms statement timeout over a table whose
// deletes take longer (a trigger sleeps 5 ms a row), so no batch can commit: `sweep
// --drain` must delete nothing and exit 1 saying the statement timed out. Then the
// same with a 100 ms batch_timeout: nothing deleted, exit 1 naming the rows left once
// its retries (--drain-retry 2s) are spent. With both raised, a third drain deletes
// them all and exits 0.
func TestTinyStatementTimeout(t *testing.T) {
	rec := the.results.begin(t, "statement_timeout 1ms under deletes slower than that (trigger), `sweep --drain`; then batch_timeout 100ms; then both raised", "1, 1, then 0")
	f := newFixture(t)
	f.seed(1, 1500)
	f.exec(`CREATE FUNCTION chaos_slow() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM pg_sleep(0.005); RETURN OLD; END $$`)
	f.exec(`CREATE TRIGGER events_slow BEFORE DELETE ON events FOR EACH ROW EXECUTE FUNCTION chaos_slow()`)
	held := f.hold(`SELECT id FROM chaos_expect WHERE goes`)

	code, p := runToEnd(t, "sweep", "--drain", "--drain-retry", "2s", "--config", f.config(passOpts{batchSize: 100, statementTimeout: "1ms"}, "", ""))
	rec.exit(code)
	g := f.measure()
	g.exact(t, "after the drain with a 1ms statement timeout")
	g.noRunInProgress(t, "after the drain with a 1ms statement timeout")
	if code != 1 || !strings.Contains(p.verdict(), "statement timeout") {
		t.Errorf("a drain whose every statement timed out exited %d, want 1 saying so:\n%s", code, p.output())
	}

	code, p = runToEnd(t, "sweep", "--drain", "--drain-retry", "2s", "--config", f.config(passOpts{batchSize: 100, batchTimeout: "100ms"}, "", ""))
	rec.exit(code)
	g = f.measure()
	g.exact(t, "after the drain with a 100ms batch timeout")
	g.noRunInProgress(t, "after the drain with a 100ms batch timeout")
	if code != 1 || !p.names(held) {
		t.Errorf("a drain whose every batch timed out exited %d, want 1 naming the %d rows left:\n%s", code, held, p.output())
	}

	f.release()
	code, p = runToEnd(t, "sweep", "--drain", "--config", f.config(passOpts{batchSize: 100}, "", ""))
	if rec.exit(code) != 0 {
		t.Errorf("the drain with the timeouts raised exited %d, want 0:\n%s", code, p.output())
	}
	g = f.measure()
	rec.final(g)
	g.exact(t, "after the third drain")
	g.noRunInProgress(t, "after the third drain")
	g.ledgerMatches(t, "after the third drain", g.deleted)
}
