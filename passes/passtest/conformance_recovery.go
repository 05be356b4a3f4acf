package passtest

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes/ledger"
)

// recoveryBehaviours: the ledger's run recovery and ownership, on each node's heartbeat:
// a dead node's open run is closed as abandoned once its heartbeat is stale (never a live
// node's, nor one without an owner) and its node row pruned in time; a cut-off owner's
// late ending is recorded and another node's is not; progress only grows, and only while
// the run is in progress; a claim and an activation record their node.
func recoveryBehaviours() []behaviour {
	return []behaviour{
		{name: "abandoned runs close once their heartbeat is stale", run: abandonedRunsClosed},
		{name: "a cut-off owner finishes its run truthfully", run: cutOffOwnerFinishes},
		{name: "progress only grows and only while in progress", run: progressOnlyGrows},
		{name: "claims and activations record their owner", run: claimsRecordOwner},
	}
}

// recoveryBook is a migrated ledger on the behaviour's database.
type recoveryBook struct {
	t  *testing.T
	db *DB
	l  *ledger.Ledger
}

func newRecoveryBook(t *testing.T, db *DB) *recoveryBook {
	t.Helper()
	return &recoveryBook{t: t, db: db, l: migratedLedger(t, db)}
}

// beating is a node whose heartbeat loop runs on a manual clock.
type beating struct {
	l    *ledger.Ledger
	node ledger.Node
	stop context.CancelFunc
	done chan struct{}
}

func startBeating(t *testing.T, l *ledger.Ledger, clk *clock.Manual) *beating {
	t.Helper()
	n := ledger.NewNode(clk.Now())
	ctx, stop := context.WithCancel(context.Background())
	b := &beating{l: l.ForNode(n.ID), node: n, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		(&ledger.NodeHeartbeat{Ledger: b.l, Node: n, Clock: clk}).Run(ctx)
	}()
	t.Cleanup(b.halt)
	return b
}

// halt stops the heartbeats, as a SIGKILL would, and waits for the loop to end.
func (b *beating) halt() {
	b.stop()
	<-b.done
}

// tick moves the clock one heartbeat interval on and waits until the live loops (want of
// them) have written their heartbeat and wait for the next.
func tick(t *testing.T, clk *clock.Manual, want int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound on a hang
	defer cancel()
	if err := clk.WaitPending(ctx, want); err != nil {
		t.Fatalf("the heartbeat loops did not wait: %v", err)
	}
	clk.Advance(ledger.DefaultHeartbeatInterval)
	if err := clk.WaitPending(ctx, want); err != nil {
		t.Fatalf("the heartbeat loops did not beat: %v", err)
	}
}

func (b *recoveryBook) recover(clk *clock.Manual) int {
	b.t.Helper()
	pass, err := ledger.NewRunRecovery(b.l, 0, 0).Registration().New(context.Background())
	if err != nil {
		b.t.Fatal(err)
	}
	n, err := pass.PurgeBatch(context.Background(), 100, clk.Now().Add(-ledger.DefaultStaleAfter))
	if err != nil {
		b.t.Fatalf("recovery: %v", err)
	}
	return n
}

func (b *recoveryBook) get(id int64) ledger.Run {
	b.t.Helper()
	var r ledger.Run
	if err := b.db.NewSelect().Model(&r).ModelTableExpr(ledgerPrefix+"metadata AS run").Where("id = ?", id).Scan(context.Background()); err != nil {
		b.t.Fatal(err)
	}
	return r
}

// abandonedRunsClosed: node A dies with a run open; B
// lives. A's run stays open while A's last heartbeat is within the bound, and is closed
// as Failed/abandoned (its recorded counts kept) once it is older; B's run and a run with
// no owner are never touched; A's node row is pruned once it is NodeRetention old.
func abandonedRunsClosed(t *testing.T, db *DB) {
	ctx := context.Background()
	b := newRecoveryBook(t, db)
	clk := clock.NewManual(ledgerNow)
	a, live := startBeating(t, b.l, clk), startBeating(t, b.l, clk)
	tick(t, clk, 2)
	runA, err := a.l.StartRun(ctx, "audit-log", clk.Now(), clk.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.l.RecordProgress(ctx, runA, ledger.Progress{RowsDeleted: 500, Batches: 10}); err != nil {
		t.Fatal(err)
	}
	runB, _ := live.l.StartRun(ctx, "audit-log", clk.Now(), clk.Now(), nil)
	orphan, _ := b.l.StartRun(ctx, "library-pass", clk.Now().Add(-100*24*time.Hour), clk.Now(), nil)
	queued, _ := b.l.RequestSweep(ctx, "audit-log", clk.Now().Add(-time.Hour))

	for range 4 { // both alive: nothing is abandoned however long they run
		tick(t, clk, 2)
		if n := b.recover(clk); n != 0 {
			t.Fatalf("recovery closed %d runs of live nodes", n)
		}
	}
	a.halt()
	for range 2 { // A's last heartbeat is 10s old, within the 15s bound
		tick(t, clk, 1)
		if n := b.recover(clk); n != 0 {
			t.Fatalf("recovery closed %d runs %v after A's last heartbeat", n, 2*ledger.DefaultHeartbeatInterval)
		}
	}
	tick(t, clk, 1) // 15s
	tick(t, clk, 1) // 20s: stale
	if n := b.recover(clk); n != 1 {
		t.Fatalf("recovery closed %d runs, want A's one", n)
	}
	got := b.get(runA)
	if got.State != ledger.Failed || got.StopReason == nil || *got.StopReason != ledger.StopAbandoned || got.EndTime == nil || got.RowsDeleted != 500 || got.Batches != 10 {
		t.Fatalf("A's run = %+v", got)
	}
	for _, id := range []int64{runB, orphan} {
		if r := b.get(id); r.State != ledger.InProgress {
			t.Fatalf("run %d = %+v, want still InProgress", id, r)
		}
	}
	if r := b.get(queued.RunID); r.State != ledger.Pending {
		t.Fatalf("queued run = %+v, want still Pending", r)
	}
	if n := b.recover(clk); n != 0 {
		t.Fatalf("a second recovery closed %d more", n)
	}

	clk.Advance(ledger.NodeRetention) // B keeps beating; A has been silent a week
	if err := live.l.Heartbeat(ctx, live.node, clk.Now()); err != nil {
		t.Fatal(err)
	}
	b.recover(clk)
	nodes, err := b.l.Nodes(ctx)
	if err != nil || len(nodes) != 1 || nodes[0].ID != live.node.ID {
		t.Fatalf("nodes = %+v, %v; want only B's", nodes, err)
	}
}

// cutOffOwnerFinishes: recovery closed a run whose node was only
// cut off from the database; when the node comes back and the sweep ends, its ending is
// recorded. Another node's ending is not.
func cutOffOwnerFinishes(t *testing.T, db *DB) {
	ctx := context.Background()
	b := newRecoveryBook(t, db)
	owner, other := b.l.ForNode("owner"), b.l.ForNode("other")
	run, _ := owner.StartRun(ctx, "audit-log", ledgerNow, ledgerNow, nil)
	if n, err := b.l.CloseAbandoned(ctx, ledgerNow.Add(time.Minute), ledgerNow.Add(time.Minute), 10); err != nil || n != 1 {
		t.Fatalf("CloseAbandoned = %d, %v (an owner with no node row counts as gone)", n, err)
	}
	if err := other.FinishRun(ctx, run, ledger.Finish{End: ledgerNow, State: ledger.Completed, RowsDeleted: 1, StopReason: "drained"}); err != nil {
		t.Fatal(err)
	}
	if r := b.get(run); r.State != ledger.Failed {
		t.Fatalf("another node rewrote the abandoned run: %+v", r)
	}
	if err := owner.FinishRun(ctx, run, ledger.Finish{End: ledgerNow, State: ledger.Completed, RowsDeleted: 7, StopReason: "drained"}); err != nil {
		t.Fatal(err)
	}
	if r := b.get(run); r.State != ledger.Completed || r.RowsDeleted != 7 || *r.NodeID != "owner" {
		t.Fatalf("the owner's ending was not recorded: %+v", r)
	}
}

// progressOnlyGrows:
func progressOnlyGrows(t *testing.T, db *DB) {
	ctx := context.Background()
	b := newRecoveryBook(t, db)
	run, _ := b.l.StartRun(ctx, "audit-log", ledgerNow, ledgerNow, nil)
	for _, p := range []ledger.Progress{{RowsDeleted: 100, Batches: 2}, {RowsDeleted: 50, Batches: 1}} {
		if err := b.l.RecordProgress(ctx, run, p); err != nil {
			t.Fatal(err)
		}
	}
	if r := b.get(run); r.RowsDeleted != 100 || r.Batches != 2 {
		t.Fatalf("a late progress write lowered the counts: %+v", r)
	}
	if err := b.l.FinishRun(ctx, run, ledger.Finish{End: ledgerNow, State: ledger.Completed, RowsDeleted: 150, Batches: 3}); err != nil {
		t.Fatal(err)
	}
	_ = b.l.RecordProgress(ctx, run, ledger.Progress{RowsDeleted: 999, Batches: 99})
	if r := b.get(run); r.RowsDeleted != 150 {
		t.Fatalf("progress rewrote a finished run: %+v", r)
	}
}

// claimsRecordOwner:
func claimsRecordOwner(t *testing.T, db *DB) {
	ctx := context.Background()
	b := newRecoveryBook(t, db)
	c, err := b.l.RequestSweep(ctx, "audit-log", ledgerNow)
	if err != nil {
		t.Fatal(err)
	}
	if r := b.get(c.RunID); r.NodeID != nil {
		t.Fatalf("a queued run has an owner: %+v", r)
	}
	claims, err := b.l.ForNode("n1").ClaimWork(ctx, []string{"audit-log"}, 10, ledgerNow)
	if err != nil || len(claims) != 1 {
		t.Fatalf("claims %v, %v", claims, err)
	}
	if r := b.get(c.RunID); r.NodeID == nil || *r.NodeID != "n1" {
		t.Fatalf("a claimed run's owner = %v", r.NodeID)
	}
	if err := b.l.ForNode("n2").ActivateRun(ctx, c.RunID, ledgerNow, ledgerNow); err != nil {
		t.Fatal(err)
	}
	if r := b.get(c.RunID); *r.NodeID != "n2" {
		t.Fatalf("an activated run's owner = %v", *r.NodeID)
	}
}
