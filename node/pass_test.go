package node

import (
	"context"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// A change made to a pass's options (as the drain makes) survives replacing
// its table (a sweep lock): the record holds one copy of the options, not two.
func TestReplacingTheTableKeepsTheOptionsSetOnThePass(t *testing.T) {
	db := dbtest.SQLite(t)
	if _, err := db.ExecContext(context.Background(), `CREATE TABLE events (id INTEGER PRIMARY KEY, at TIMESTAMP)`); err != nil {
		t.Fatal(err)
	}
	tbl, err := passes.NewTable(db, "events", passes.TableSpec{Table: "events", Key: "id", Timestamp: "at"})
	if err != nil {
		t.Fatal(err)
	}
	week := 7 * 24 * time.Hour
	p := TablePass(tbl, passes.Options{RetentionPeriod: &week, MaxBatchesPerSweep: 10})
	p.Registration.Options.MaxBatchesPerSweep = 25 // not 0, which is also the zero Options' value

	p = p.WithTable(tbl.WithQuarantine(nil))

	if got := p.Options().MaxBatchesPerSweep; got != 25 {
		t.Errorf("MaxBatchesPerSweep = %d after WithTable, want 25 (the change made on the pass)", got)
	}
	if p.Name() != "events" || !p.IsTable() || p.Registration.New == nil {
		t.Errorf("pass %q (table %v, factory %v): want events, a table pass with a factory", p.Name(), p.IsTable(), p.Registration.New != nil)
	}
}

// A Go pass is a pass of the node without a table: nothing asks it for a backlog.
func TestAGoPassHasNoTable(t *testing.T) {
	p := GoPass(passes.Registration{Name: "exports", Options: passes.Options{MaxBatchesPerSweep: 3}})
	if p.IsTable() || p.Name() != "exports" || p.Options().MaxBatchesPerSweep != 3 {
		t.Errorf("Go pass %q: table %v, options %+v", p.Name(), p.IsTable(), p.Options())
	}
}
