//go:build multinode

package multinode

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/driver"
	mysqldriver "github.com/retentionkit/retention/passes/driver/mysql"
)

// TestHarnessRecordsBatchesAndLocksMariaDB is TestHarnessRecordsBatchesAndLocks on
// MariaDB's batch log (harness/db_mysql.go): member a (user rt_mn_n1, registered as
// probe-a) deletes under the pass lock of table probe while another session of a holds
// a slot, both taken by the MySQL driver's own TrySessionLock, so a lock name the
// harness spells differently from the driver shows here; member b (rt_mn_n2) deletes
// without locks, and once a keep-set row; then the two alternate. The log must count
// six batches (one per DELETE, however many rows each), three without either lock,
// one wrongly deleted row and four switches, and name the members from their users
// and connection ids; a second process of n1 (probe-c) must be a member of its own.
func TestHarnessRecordsBatchesAndLocksMariaDB(t *testing.T) {
	need(t)
	t.Run("mariadb", func(t *testing.T) {
		ctx := context.Background()
		db, err := harness.OpenDB(ctx, dsnOf(t))
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
		member := func(name, id string) *sql.DB {
			gen, err := db.Starting(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			m, err := sql.Open("mysql", db.NodeDSN(name))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Close() })
			if err := db.Joined(ctx, gen, id); err != nil {
				t.Fatal(err)
			}
			return m
		}
		ma, mb := member("n1", "probe-a"), member("n2", "probe-b")
		conn := func(m *sql.DB) *sql.Conn {
			c, err := m.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c
		}
		a, slot, b := conn(ma), conn(ma), conn(mb)
		lock := func(c *sql.Conn, class int32, key int32) {
			if _, ok, err := (mysqldriver.Driver{}).TrySessionLock(ctx, c, driver.LockSession{}, class, key); err != nil || !ok {
				t.Fatalf("lock %x/%x: granted %v, %v", class, key, ok, err)
			}
		}
		lock(slot, passes.SlotLockClass, passes.LockKey(passes.DefaultDatabase+"#slot0"))
		lock(a, passes.SweepLockClass, passes.LockKey("probe"))
		exec := func(c *sql.Conn, q string) {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		exec(a, `DELETE FROM probe WHERE id BETWEEN 1 AND 5 AND state = 'done'`)
		exec(b, `DELETE FROM probe WHERE id BETWEEN 6 AND 9 AND state = 'done'`)
		exec(b, `DELETE FROM probe WHERE id = 10`) // fresh: in the keep-set
		exec(a, `DELETE FROM probe WHERE id BETWEEN 11 AND 13 AND state = 'done'`)
		exec(b, `DELETE FROM probe WHERE id BETWEEN 14 AND 16 AND state = 'done'`)
		exec(a, `DELETE FROM probe WHERE id BETWEEN 17 AND 19 AND state = 'done'`)
		// A connection of probe-a's process opened last and closed before n1 starts again:
		// its id is above every open one's, and its batch is still probe-a's.
		late, err := sql.Open("mysql", db.NodeDSN("n1"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := late.ExecContext(ctx, `DELETE FROM probe WHERE id BETWEEN 23 AND 26 AND state = 'done'`); err != nil {
			t.Fatal(err)
		}
		late.Close()
		// n1 again, as a new process: a new member on the same user, whose batches must
		// not be taken for probe-a's, nor probe-a's for its.
		c := conn(member("n1", "probe-c"))
		exec(c, `DELETE FROM probe WHERE id BETWEEN 21 AND 22 AND state = 'done'`)
		f, err := db.Locks(ctx, harness.DefaultLockClasses)
		if err != nil {
			t.Fatal(err)
		}
		if f.Batches != 8 || f.WithoutPassLock != 5 || f.WithoutSlot != 4 || f.MaxSlots != 1 || f.PassKeys["probe"] != 1 ||
			!slices.Equal(f.Apps["probe"], []string{harness.AppName("probe-a"), harness.AppName("probe-b"), harness.AppName("probe-c")}) {
			t.Errorf("lock figures %+v, want 8 batches, 5 without the pass lock, 4 without a slot, 1 slot at most, 1 pass key, members probe-a, probe-b and probe-c", f)
		}
		if n, err := db.BatchesBy(ctx, "probe", harness.AppName("probe-a"), time.Time{}); err != nil || n != 4 {
			t.Errorf("probe-a's batches: %d (%v), want 4", n, err)
		}
		k, err := db.Keep(ctx, "probe")
		if err != nil {
			t.Fatal(err)
		}
		if k.Wrongly != 1 || k.Left == 0 || k.Gone != 22 {
			t.Errorf("keep figures %s, want 22 deleted, 1 wrongly and some left", k)
		}
		o, err := db.Interleavings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(o) != 1 || o[0].Switches != 4 {
			t.Errorf("interleavings %v, want the two members switching 4 times", o)
		}
		ids, err := db.IdentityApps(ctx, harness.DefaultLockClasses, "probe", []string{"probe"})
		if err != nil {
			t.Fatal(err)
		}
		if len(ids["probe"]) != 1 || ids["probe"][0] != harness.AppName("probe-a") {
			t.Errorf("identity apps %v, want probe-a alone under probe's lock", ids)
		}
		sessions, locks, err := db.Sessions(ctx, harness.AppName("probe-a"))
		if err != nil || sessions < 2 || locks != 2 {
			t.Errorf("probe-a: %d sessions, %d locks (%v), want 2 or more and 2", sessions, locks, err)
		}
		s := harness.StartSampler(db, harness.DefaultLockClasses)
		if err := harness.Poll(ctx, 10*time.Second, "samples", func() (bool, error) { return s.Figures().Samples >= 3, nil }); err != nil {
			t.Fatal(err)
		}
		if sf := s.Stop(); sf.MaxSlots != 1 || sf.MaxPassLocks != 1 || sf.MaxHolders != 1 || sf.Errors != 0 {
			t.Errorf("samples %+v, want the one slot and one pass lock member a holds", sf)
		}
	})
}
