package passtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/driver"
)

// hygieneBehaviours: a sweep that deleted a big enough share of its table has the
// driver tidy it (statistics, and free space when vacuum_after asks) once it ends, and
// the driver's tidy succeeds on the database; a small sweep, or hygiene turned off,
// leaves the table alone. What tidying does is the driver's (ANALYZE and VACUUM,
// PRAGMA optimize and incremental_vacuum) and tested in its package.
func hygieneBehaviours() []behaviour {
	cases := []struct {
		name           string
		expired        int
		share          float64
		vacuum         bool
		tidied, vacced bool
	}{
		{"half the table: tidied", 500, 0, false, true, false},
		{"one percent: left alone", 10, 0, false, false, false},
		{"one percent over a lower share: tidied", 10, 0.005, false, true, false},
		{"hygiene off: left alone", 500, -1, false, false, false},
		{"vacuum_after: tidied and vacuumed", 500, 0, true, true, true},
	}
	var bs []behaviour
	for _, c := range cases {
		bs = append(bs, behaviour{name: c.name, run: func(t *testing.T, db *DB) {
			tidy := bigSweepTidy(t, db, c.expired, c.share, c.vacuum)
			switch {
			case len(tidy) > 1:
				t.Fatalf("tidied %d times, want at most once", len(tidy))
			case (len(tidy) == 1) != c.tidied:
				t.Fatalf("tidied = %v after deleting %d of 1000 rows at analyze_after_share %v, want %v", len(tidy) == 1, c.expired, c.share, c.tidied)
			case c.tidied && tidy[0] != c.vacced:
				t.Fatalf("tidied with vacuum = %v, want %v", tidy[0], c.vacced)
			}
		}})
	}
	return bs
}

// tidyRecorder is the target's driver, recording each Tidy (whether it vacuumed) before
// it runs.
type tidyRecorder struct {
	driver.Driver
	mu    sync.Mutex
	tidys []bool
}

func (r *tidyRecorder) Tidy(ctx context.Context, db bun.IDB, table schema.QueryAppender, vacuum bool, timeout time.Duration) error {
	r.mu.Lock()
	r.tidys = append(r.tidys, vacuum)
	r.mu.Unlock()
	return r.Driver.Tidy(ctx, db, table, vacuum, timeout)
}

// bigSweepTidy sweeps a table of 1,000 rows, expired of them, its statistics fresh (the
// driver's own tidy), at analyze_after_share share, and returns the tidies the sweep
// asked for. The sweep's Close fails the test if the tidy failed.
func bigSweepTidy(t *testing.T, db *DB, expired int, share float64, vacuum bool) []bool {
	tbl := Seed(t, db, Fixture{Table: "tidy", Cutoff: auditCutoff, Expired: expired, Fresh: 1000 - expired})
	d, err := passes.DriverFor(db.DB)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Tidy(context.Background(), db.DB, bun.Ident("tidy"), false, time.Minute); err != nil {
		t.Fatalf("tidy before the sweep: %v", err)
	}
	rec := &tidyRecorder{Driver: d}
	spec := tbl.Spec()
	spec.AnalyzeAfterShare, spec.VacuumAfter = share, vacuum
	pass, err := passes.NewTableWith(rec, db.DB, "tidy", spec)
	if err != nil {
		t.Fatal(err)
	}
	if res := Sweep(t, pass, 100, auditCutoff); res.Deleted != expired {
		t.Fatalf("the sweep deleted %d rows, want %d", res.Deleted, expired)
	}
	tbl.RequireSwept(t)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.tidys
}
