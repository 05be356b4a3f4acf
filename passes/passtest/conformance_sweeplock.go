package passtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

// sweepLockBehaviours: a sweep lock lets one sweep of a pass run at a time across
// nodes: a second sweep from another pool is denied before it deletes or builds
// anything, names the holder, and runs once the first closes. A database without
// session locks refuses the lock instead of offering one it cannot hold.
func sweepLockBehaviours() []behaviour {
	held := needsSessionLocks
	return []behaviour{
		{name: "a second sweep is denied until the first closes", onTarget: withHolderNames(secondSweepDenied), skip: held},
		{name: "exclusive builds the held sweep's pass once and the denied one's never", onTarget: withHolderNames(exclusiveBuildsOnce), skip: held},
		{name: "refused where the database has no session locks", run: sweepLockRefused, skip: needsNoSessionLocks},
	}
}

// needsSessionLocks skips a behaviour of a held lock on a target without session locks.
func needsSessionLocks(t Target) string {
	if t.NoSessionLocks {
		return "the database has no session locks"
	}
	return ""
}

// needsNoSessionLocks skips a behaviour of the refusal on a target with session locks.
func needsNoSessionLocks(t Target) string {
	if !t.NoSessionLocks {
		return "the database has session locks"
	}
	return ""
}

// withHolderNames runs f on a fresh database of target, telling it whether the
// target's lock holders go unnamed (Target.NoLockHolderNames): there a holder is known
// by its backend id alone, and f checks no member name.
func withHolderNames(f func(t *testing.T, db *DB, unnamed bool)) func(*testing.T, Target) {
	return func(t *testing.T, target Target) { f(t, target.Open(t), target.NoLockHolderNames) }
}

// lockIdentity returns a lock identity of its own: a lock is the database's, not a
// schema's, so behaviours and tests running at once on one server must not share one.
func lockIdentity(name string) string { return fmt.Sprintf("%s-%08x", name, rand.Uint32()) }

// lockedTable is a table pass named name with a sweep lock, on db, its connection named
// for member.
func lockedTable(t *testing.T, db *bun.DB, name string, spec passes.TableSpec, member string) *passes.Table {
	t.Helper()
	tbl, err := passes.NewTable(db, name, spec)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err = tbl.WithSweepLock(passes.SweepLockOptions{Conn: passes.SweepConnOptions{ApplicationName: passes.MemberAppPrefix + member}})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// secondSweepDenied: member m2's sweep, from a pool of its own, is denied while m1's
// sweep holds the lock, deletes nothing and names m1; once m1's closes, m2's runs.
func secondSweepDenied(t *testing.T, db *DB, unnamed bool) {
	ctx := context.Background()
	if err := passes.CheckClusterSupport(ctx, db.DB); err != nil {
		t.Fatalf("CheckClusterSupport: %v", err)
	}
	fixture := Seed(t, db, Fixture{Table: "events", Cutoff: auditCutoff, Expired: 30})
	other := db.Reopen(t)
	name := lockIdentity("events")
	first, err := lockedTable(t, db.DB, name, fixture.Spec(), "m1").Factory()(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := first.PurgeBatch(ctx, 10, auditCutoff); err != nil || n != 10 {
		t.Fatalf("first sweep's batch: %d, %v", n, err)
	}
	second, err := lockedTable(t, other, name, fixture.Spec(), "m2").Factory()(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, err := second.PurgeBatch(ctx, 10, auditCutoff)
	if !errors.Is(err, passes.ErrRunningElsewhere) || n != 0 {
		t.Fatalf("second sweep: %d, %v; want ErrRunningElsewhere", n, err)
	}
	var denied *passes.ElsewhereError
	if !errors.As(err, &denied) || denied.Identity != name || denied.Holder == nil || (denied.Holder.Member != "m1" && !unnamed) {
		t.Fatalf("denial %#v: want identity %s held by member m1", denied, name)
	}
	fixture.RequireCount(t, 20)
	_ = second.(passes.Closer).Close()
	if err := first.(passes.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	third, err := lockedTable(t, other, name, fixture.Spec(), "m2").Factory()(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer third.(passes.Closer).Close()
	if n, err := third.PurgeBatch(ctx, 10, auditCutoff); err != nil || n != 10 {
		t.Fatalf("sweep after the holder closed: %d, %v", n, err)
	}
}

// exclusiveBuildsOnce: Exclusive guards any factory: a denied sweep never builds its
// pass, a held one builds it once and runs its batches, and no one holds the lock once
// the sweep closes.
func exclusiveBuildsOnce(t *testing.T, db *DB, unnamed bool) {
	ctx := context.Background()
	other := db.Reopen(t)
	identity := lockIdentity("loop")
	built, batches := 0, 0
	factory := func(context.Context) (passes.Pass, error) {
		built++
		return passes.PassFunc(func(context.Context, int, time.Time) (int, error) { batches++; return 1, nil }), nil
	}
	ex1, err := passes.ExclusiveWith(db.DB, passes.SweepLockOptions{Identity: identity, Conn: passes.SweepConnOptions{ApplicationName: passes.MemberAppPrefix + "m1"}}, factory)
	if err != nil {
		t.Fatal(err)
	}
	ex2, err := passes.Exclusive(other, identity, factory)
	if err != nil {
		t.Fatal(err)
	}
	p1, err := ex1(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := p1.PurgeBatch(ctx, 1, auditCutoff); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ex2(ctx); !errors.Is(err, passes.ErrRunningElsewhere) {
		t.Fatalf("second sweep: %v; want ErrRunningElsewhere", err)
	}
	if built != 1 || batches != 2 {
		t.Fatalf("built %d, batches %d; want the denied sweep to build nothing", built, batches)
	}
	holders, err := passes.LockHolders(ctx, other, []string{identity, identity + "#1"})
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := holders[identity]; len(holders) != 1 || !ok || (h.Member != "m1" && !unnamed) {
		t.Fatalf("holders %+v: want %s alone, held by m1", holders, identity)
	}
	if err := p1.(passes.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	p2, err := ex2(ctx)
	if err != nil {
		t.Fatalf("sweep once the lock is free: %v", err)
	}
	if err := p2.(passes.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	if hs, err := passes.LockHolders(ctx, other, []string{identity}); err != nil || len(hs) != 0 {
		t.Fatalf("holders after Close: %+v, %v; want none", hs, err)
	}
}

// sweepLockRefused: without session locks, the cluster check, Exclusive and a table's
// sweep lock all refuse with passes.ErrClusterUnsupported when they are built, before
// any sweep.
func sweepLockRefused(t *testing.T, db *DB) {
	ctx := context.Background()
	if err := passes.CheckClusterSupport(ctx, db.DB); !errors.Is(err, passes.ErrClusterUnsupported) {
		t.Fatalf("CheckClusterSupport: %v; want ErrClusterUnsupported", err)
	}
	if _, err := passes.Exclusive(db.DB, "p", passes.Reuse(passes.PassFunc(nil))); !errors.Is(err, passes.ErrClusterUnsupported) {
		t.Fatalf("Exclusive: %v; want ErrClusterUnsupported", err)
	}
	tbl, err := passes.NewTable(db.DB, "events", passes.TableSpec{Table: "events", Key: "id", Timestamp: "at"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.WithSweepLock(passes.SweepLockOptions{}); !errors.Is(err, passes.ErrClusterUnsupported) {
		t.Fatalf("WithSweepLock: %v; want ErrClusterUnsupported", err)
	}
}
