//go:build multinode

package multinode

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
)

// TestHarnessRecordsBatchesAndLocks checks the checks: a DELETE made by hand under a
// pass-class advisory lock, while another session of the same application_name holds
// a slot-class one, must land in the batch log with both; one without locks must count
// as unlocked; a deleted keep-set row must count
// as wrongly deleted, and two members alternating on a table must count as
// interleaved. Without
// this, a broken trigger would pass every scenario.
func TestHarnessRecordsBatchesAndLocks(t *testing.T) {
	need(t)
	ctx := context.Background()
	db, err := harness.OpenDB(ctx, env.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Seed(ctx, harness.Table{Name: "probe", Rows: 100}); err != nil {
		t.Fatal(err)
	}
	c := harness.DefaultLockClasses
	a, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	slot, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer slot.Close()
	for _, q := range []string{`SET application_name = 'retention:probe-a'`, `SELECT pg_advisory_lock(x'72746e02'::int, 1)`} {
		if _, err := slot.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{
		`SET application_name = 'retention:probe-a'`,
		`SELECT pg_advisory_lock(x'72746e01'::int, 1)`,
		`DELETE FROM probe WHERE id BETWEEN 1 AND 5 AND state = 'done'`,
	} {
		if _, err := a.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{
		`SET application_name = 'retention:probe-b'`,
		`DELETE FROM probe WHERE id BETWEEN 6 AND 9 AND state = 'done'`,
		`DELETE FROM probe WHERE id = 10`, // fresh: in the keep-set
	} {
		if _, err := b.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, step := range []struct {
		conn interface {
			ExecContext(context.Context, string, ...any) (sql.Result, error)
		}
		q string
	}{
		{a, `DELETE FROM probe WHERE id BETWEEN 11 AND 13 AND state = 'done'`},
		{b, `DELETE FROM probe WHERE id BETWEEN 14 AND 16 AND state = 'done'`},
		{a, `DELETE FROM probe WHERE id BETWEEN 17 AND 19 AND state = 'done'`},
	} {
		if _, err := step.conn.ExecContext(ctx, step.q); err != nil {
			t.Fatalf("%s: %v", step.q, err)
		}
	}
	f, err := db.Locks(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if f.Batches != 6 || f.WithoutPassLock != 3 || f.WithoutSlot != 3 || f.MaxSlots != 1 || f.PassKeys["probe"] != 1 || len(f.Apps["probe"]) != 2 {
		t.Errorf("lock figures %+v, want 6 batches, 3 without either lock, 1 slot at most, 1 pass key, 2 sessions", f)
	}
	k, err := db.Keep(ctx, "probe")
	if err != nil {
		t.Fatal(err)
	}
	if k.Wrongly != 1 || k.Left == 0 {
		t.Errorf("keep figures %s, want 1 wrongly deleted and some left", k)
	}
	o, err := db.Interleavings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(o) != 1 || o[0].Switches != 4 {
		t.Errorf("interleavings %v, want the two members switching 4 times", o)
	}
	s := harness.StartSampler(db, c)
	if err := harness.Poll(ctx, 10*time.Second, "samples", func() (bool, error) { return s.Figures().Samples >= 3, nil }); err != nil {
		t.Fatal(err)
	}
	if sf := s.Stop(); sf.MaxSlots != 1 || sf.MaxPassLocks != 1 || sf.MaxHolders != 1 {
		t.Errorf("samples %+v, want the one slot and one pass lock session a holds", sf)
	}
}

// TestHarnessEtcdRestart checks the etcd the scenarios run: it answers, it stops,
// it starts again on the same port, and its JSON gateway lists keys.
func TestHarnessEtcdRestart(t *testing.T) {
	need(t)
	ctx := context.Background()
	e, err := harness.StartEtcd(ctx, env.etcd, t.TempDir(), t.TempDir()+"/etcd.log")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	if _, err := e.Keys(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if err := e.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Keys(ctx, "/"); err == nil {
		t.Error("a stopped etcd answered")
	}
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Keys(ctx, "/"); err != nil {
		t.Fatal(err)
	}
}
