package passes_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/driver/sqlite"
)

// countingDriver is the SQLite driver counting the batch shapes it is asked for, so a
// test sees which driver a Table asks.
type countingDriver struct {
	sqlite.Driver
	locks, deletes int
}

func (d *countingDriver) LockCandidates(q *bun.SelectQuery) *bun.SelectQuery {
	d.locks++
	return d.Driver.LockCandidates(q)
}

func (d *countingDriver) DeleteNext(db bun.IDB, n driver.DeleteNext) (string, bool) {
	d.deletes++
	return d.Driver.DeleteNext(db, n)
}

// TestNewTableWithAsksTheGivenDriver: a Table built with NewTableWith takes its batch
// shapes from the driver it was given, not from one found by the handle's dialect: with
// children a batch locks its candidates through it, without children it deletes
// through it.
func TestNewTableWithAsksTheGivenDriver(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, dbtest.SQLite(t), passes.TimestampNative)
	f.log(1, cutoffT.Add(-time.Hour), "done")
	f.log(2, cutoffT.Add(-time.Hour), "done")
	d := &countingDriver{}
	withChildren := f.spec()
	withoutChildren := f.spec()
	withoutChildren.Children = nil
	for _, spec := range []passes.TableSpec{withChildren, withoutChildren} {
		tbl, err := passes.NewTableWith(d, f.db, "audit-log", spec)
		if err != nil {
			t.Fatal(err)
		}
		p, err := tbl.Factory()(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := p.PurgeBatch(ctx, 1, cutoffT); err != nil || n != 1 {
			t.Fatalf("batch = %d, %v; want 1 row deleted", n, err)
		}
	}
	if d.locks == 0 || d.deletes == 0 {
		t.Fatalf("the given driver was asked for %d locked reads and %d one-statement deletes; want both", d.locks, d.deletes)
	}
}

// TestDriverLookup: a config's driver name finds its driver and an unknown one is
// refused with the names it could have been; an open handle finds the driver that owns
// its dialect.
func TestDriverLookup(t *testing.T) {
	if _, err := passes.DriverNamed("oracle"); err == nil || !strings.Contains(err.Error(), `"postgres", "sqlite"`) {
		t.Fatalf("DriverNamed(oracle) = %v; want a refusal listing the drivers", err)
	}
	d, err := passes.DriverFor(dbtest.SQLite(t))
	if err != nil || d.Name() != sqlite.Name {
		t.Fatalf("DriverFor(a SQLite handle) = %v, %v; want the sqlite driver", d, err)
	}
}
