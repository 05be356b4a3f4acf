package actors_test

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// infoLines returns the log lines (JSON) at info or above that name pass.
func infoLines(log string, pass string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil || m["pass"] != pass || m["level"] == "debug" {
			continue
		}
		out = append(out, m)
	}
	return out
}

// TestRoutineLoopsLogAndRecordOnlyWork runs the run recovery on a real runtime and
// ledger, and polls the work queue: while they find nothing they write no info line
// and no run; once there is an abandoned run to close and a requested sweep to claim,
// each writes an info line and a run with its count.
func TestRoutineLoopsLogAndRecordOnlyWork(t *testing.T) {
	ctx := context.Background()
	db := dbtest.SQLite(t)
	l := migratedLedger(t, db)
	var logs actortest.SyncBuffer
	logger := logrus.New()
	logger.SetOutput(&logs)
	logger.SetFormatter(&logrus.JSONFormatter{})
	logger.SetLevel(logrus.InfoLevel)
	done := make(chan actors.SweepDone, 16)
	rt := actors.New(actors.Config{Logger: logger, Observers: []actors.Observer{
		&actors.LedgerObserver{Ledger: l},
		actors.ObserverFunc(func(e actors.Event) error {
			if d, ok := e.(actors.SweepDone); ok && d.Name == ledger.NameRunRecovery {
				done <- d
			}
			return nil
		}),
	}})
	var calls atomic.Int32
	// A day between sweeps: the recovery sweeps once at startup and then only when
	// triggered, so the test decides when it looks.
	if err := rt.Register(ledger.NewRunRecovery(l, time.Minute, 24*time.Hour).Registration(), neverByItself(&calls)); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop(context.Background()) })
	recovered := func() actors.SweepDone {
		t.Helper()
		select {
		case d := <-done:
			return d
		case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
			t.Fatal("the run recovery did not sweep")
			return actors.SweepDone{}
		}
	}
	poller := &actors.WorkQueuePoller{Runtime: rt, Ledger: l, Logger: logger}
	runsOf := func(name string) []ledger.Run {
		t.Helper()
		runs, err := l.Runs(ctx, name, 10)
		if err != nil {
			t.Fatal(err)
		}
		return runs
	}

	// Nothing to do.
	if d := recovered(); d.Rows != 0 {
		t.Fatalf("the first recovery closed %d runs of an empty ledger", d.Rows)
	}
	if n, err := poller.PollOnce(ctx); err != nil || n != 0 {
		t.Fatalf("an empty queue: claimed %d, %v", n, err)
	}
	for _, name := range []string{ledger.NameRunRecovery, ledger.NameWorkQueuePoller} {
		if runs := runsOf(name); len(runs) != 0 {
			t.Errorf("%s found nothing and recorded %d runs: %+v", name, len(runs), runs)
		}
		if lines := infoLines(logs.String(), name); len(lines) != 0 {
			t.Errorf("%s found nothing and logged at info: %v", name, lines)
		}
	}

	// Work: a run whose node stopped heartbeating two hours ago, and a requested sweep.
	dead := ledger.NewNode(time.Now().Add(-2 * time.Hour))
	if err := l.Heartbeat(ctx, dead, dead.Started); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ForNode(dead.ID).StartRun(ctx, "audit-log", dead.Started, dead.Started, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := l.RequestSweep(ctx, "audit-log", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := rt.Trigger(ledger.NameRunRecovery); err != nil {
		t.Fatal(err)
	}
	if d := recovered(); d.Rows != 1 {
		t.Fatalf("the recovery closed %d runs, want the dead node's one", d.Rows)
	}
	if n, err := poller.PollOnce(ctx); err != nil || n != 1 {
		t.Fatalf("a queued request: claimed %d, %v", n, err)
	}
	for _, name := range []string{ledger.NameRunRecovery, ledger.NameWorkQueuePoller} {
		if runs := runsOf(name); len(runs) != 1 || runs[0].State != ledger.Completed || runs[0].RowsDeleted != 1 {
			t.Errorf("%s did work: runs = %+v, want one completed run of 1", name, runs)
		}
		if lines := infoLines(logs.String(), name); len(lines) != 1 {
			t.Errorf("%s did work: info lines = %v, want one", name, lines)
		}
	}
}

// TestARoutineLoopLogsOnlyWork runs a pass under the run recovery's name on the manual
// clock: its idle sweeps, its start and its stop are at debug, and the sweep that
// deletes rows is the one info line it writes.
func TestARoutineLoopLogsOnlyWork(t *testing.T) {
	actortest.Run(t, actors.Config{}, func(t *testing.T, h *actortest.Harness) {
		fake := actortest.NewFakePass(actortest.Rows(0), actortest.Rows(0), actortest.Rows(0), actortest.Rows(3)).Otherwise(actortest.Rows(0))
		opts := passes.DefaultOptions()
		opts.RetentionPeriod, opts.SweepInterval, opts.MaxStartupStagger = passes.Retain(time.Minute), 5*time.Second, 0
		h.Register(passes.Registration{Name: ledger.NameRunRecovery, Options: opts, New: fake.Factory()})
		h.Start()
		for range 3 {
			h.ExpectWithin(time.Minute, actortest.Of(ledger.NameRunRecovery, actortest.Is[actors.SweepDone]()))
		}
		if info := infoText(h.Logs.String(), ledger.NameRunRecovery); info != "" {
			t.Fatalf("three idle sweeps logged at info:\n%s", info)
		}
		e := h.ExpectWithin(time.Minute, actortest.Of(ledger.NameRunRecovery, actortest.Is[actors.SweepDone]())).(actors.SweepDone)
		if e.Rows != 3 {
			t.Fatalf("fourth sweep deleted %d rows, want 3", e.Rows)
		}
		h.ExpectWithin(time.Minute, actortest.Of(ledger.NameRunRecovery, actortest.Is[actors.SweepDone]()))
		if err := h.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		info := infoText(h.Logs.String(), ledger.NameRunRecovery)
		if strings.Count(info, "\n") != 1 || !strings.Contains(info, `msg="sweep done"`) || !strings.Contains(info, "rows=3") {
			t.Fatalf("info lines = %q, want the one sweep that deleted rows", info)
		}
	})
}

// infoText keeps the text-format lines above debug that name pass.
func infoText(log, pass string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(log, "\n") {
		if strings.Contains(line, "pass="+pass) && !strings.Contains(line, "level=debug") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
