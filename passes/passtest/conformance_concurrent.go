package passtest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// concurrentBehaviours: two sweepers of one table at once (two nodes without cluster
// mode, or a drain beside the runtime) never delete a row twice and, between them,
// delete exactly the expired rows: each re-checks its candidates under lock, so a row
// the other took is passed over or found gone, never counted twice.
func concurrentBehaviours() []behaviour {
	return []behaviour{{name: "two sweepers delete each expired row once", run: twoSweepers}}
}

func twoSweepers(t *testing.T, db *DB) {
	const expired, kept = 300, 20
	a := newAudit(t, db, passes.TimestampNative)
	for id := 1; id <= expired; id++ {
		a.log(id, auditCutoff.Add(-time.Duration(id)*time.Second), "done")
	}
	for id := expired + 1; id <= expired+kept; id++ {
		a.log(id, auditCutoff.Add(time.Duration(id)*time.Second), "done")
	}
	tbl := a.table(a.bare())
	var wg sync.WaitGroup
	deleted := make([]int, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			deleted[i], errs[i] = sweepUntilDone(tbl, 7)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("sweeper %d: %v", i, err)
		}
	}
	if total := deleted[0] + deleted[1]; total != expired {
		t.Fatalf("the sweepers reported %d and %d rows deleted (%d); want %d in all", deleted[0], deleted[1], total, expired)
	}
	if got := a.ids("audit_log"); len(got) != kept || got[0] != expired+1 {
		t.Fatalf("audit_log keeps %d rows starting at %v; want the %d rows past the cutoff", len(got), got[:min(len(got), 1)], kept)
	}
}

// sweepUntilDone runs sweeps of tbl until one deletes nothing (each ends only when no
// row waits on the other sweeper), and returns the rows it deleted. It returns errors
// rather than failing the test, since it runs off the test's goroutine.
func sweepUntilDone(tbl *passes.Table, batchSize int) (int, error) {
	total := 0
	for range 1000 {
		res, err := sweep(tbl, batchSize, auditCutoff)
		total += res.Deleted
		if err != nil || res.Deleted == 0 {
			return total, err
		}
	}
	return total, fmt.Errorf("no end after 1000 sweeps")
}
