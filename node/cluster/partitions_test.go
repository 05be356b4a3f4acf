//go:build cluster

package cluster_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/cluster/clusterproviders/test"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/cluster"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// Two members on one partitioned table: the pass and its drain helper (each under its
// own sweep lock, as node.Open wraps them in cluster mode) are asked to sweep at once,
// through the ledger's work queue, and run wherever placement put them. Every expired
// partition is retired exactly once across the two members, neither fails (one that
// finds a partition the other retired reports it gone), and the table keeps exactly
// what a row-only sweep of an identical table keeps.
func TestTwoMembersRetirePartitionsOnce(t *testing.T) {
	db := dbtest.Postgres(t)
	ctx := context.Background()
	base := fmt.Sprintf("c25_%08x", rand.Uint32())
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, table := range []string{base, base + "_rows"} {
		exec(fmt.Sprintf(`CREATE TABLE %s (id BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL, PRIMARY KEY (at, id)) PARTITION BY RANGE (at)`, table))
		t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+table+" CASCADE") })
		for m := 1; m <= 8; m++ {
			name := fmt.Sprintf("%s_m%d", table, m)
			exec(fmt.Sprintf(`CREATE TABLE %s PARTITION OF %s FOR VALUES FROM ('2000-%02d-01') TO ('2000-%02d-01')`, name, table, m, m+1))
			t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+name) })
		}
		exec(fmt.Sprintf(`CREATE TABLE %[1]s_rest PARTITION OF %[1]s FOR VALUES FROM ('2000-09-01') TO (MAXVALUE)`, table))
		exec(fmt.Sprintf(`INSERT INTO %s (id, at) SELECT g, timestamptz '2000-01-01' + (g * interval '1 day') FROM generate_series(1, 250) g`, table))
		exec(fmt.Sprintf(`INSERT INTO %s (id, at) VALUES (1000, now()), (1001, now() - interval '1 hour')`, table))
	}
	prefix := base + "_"
	if _, err := ledger.Migrate(ctx, db, prefix); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, tbl := range []string{"settings", "dead_letter", "work_queue", "log", "metadata", "node", "quarantine", "backlog_sample", "partition_retirements", "migrations", "migration_locks"} {
			_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+prefix+tbl+" CASCADE")
		}
	})
	l, err := ledger.New(db, prefix)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := passes.NewTable(db, "events", passes.TableSpec{Table: base, KeyColumns: []string{"at", "id"}, Timestamp: "at", Partitions: &passes.PartitionSpec{}})
	if err != nil {
		t.Fatal(err)
	}
	tbl = tbl.WithPartitionJournal(l.PartitionJournal())
	if res := tbl.ValidateStartup(ctx); res.Failed() {
		t.Fatal(res.Message())
	}
	opts := passes.DefaultOptions()
	// A long stagger: the pass sweeps only when the test asks, once both members are up.
	opts.RetentionPeriod, opts.MaxStartupStagger, opts.SweepInterval, opts.BatchSize = passes.Retain(24*time.Hour), 24*time.Hour, 24*time.Hour, 20
	regs := func([]string) []passes.Registration {
		locked, err := tbl.WithSweepLock(passes.SweepLockOptions{})
		if err != nil {
			t.Fatal(err)
		}
		main := locked.Registration(opts)
		return append([]passes.Registration{main}, cluster.Helpers(main, 1, func(identity string, f passes.Factory) passes.Factory {
			h, err := tbl.WithSweepLock(passes.SweepLockOptions{Identity: identity})
			if err != nil {
				t.Fatal(err)
			}
			return h.Registration(opts).New
		})...)
	}
	var mu sync.Mutex
	retired := map[string][]string{} // partition: the members that retired it
	var failures []string
	done := map[string]bool{}
	f := &fixture{t: t, agent: test.NewInMemAgent(), regs: regs,
		opts: cluster.Options{Logger: quiet(), FenceAfter: 5 * time.Second, ReconcileEvery: 100 * time.Millisecond, LeaveGrace: 5 * time.Second},
		observers: func(m *cluster.Member) []actors.Observer {
			return []actors.Observer{&actors.LedgerObserver{Ledger: l}, actors.ObserverFunc(func(e actors.Event) error {
				mu.Lock()
				defer mu.Unlock()
				switch e := e.(type) {
				case actors.PartitionEvent:
					if e.Report.Outcome == passes.PartitionRetired {
						retired[e.Report.Partition] = append(retired[e.Report.Partition], m.ID()+"/"+e.Name)
					}
				case actors.PassFailed:
					failures = append(failures, fmt.Sprintf("%s: %v", e.Name, e.Err))
				case actors.SweepDone:
					done[e.Name] = true
				}
				return nil
			})}
		},
		started: func(nd *node) {
			poller := &actors.WorkQueuePoller{Runtime: nd.rt, Ledger: l, Interval: 50 * time.Millisecond, Claimable: nd.m.Owned, Trigger: nd.m.TriggerClaimed}
			pctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan struct{})
			go func() { defer close(stopped); poller.Run(pctx) }()
			t.Cleanup(func() { cancel(); <-stopped })
		},
	}
	for range 2 {
		f.add()
	}
	names := []string{"events", cluster.HelperName("events", 1)}
	// A helper is activated where its request is claimed; the pass is placed at once.
	eventually(t, 20*time.Second, "the pass placed once", func() (bool, string) { return exactlyOnce(names[:1], f.nodes) })
	for _, name := range names { // both at once, as a drain asks its helpers
		if _, err := l.RequestSweep(ctx, name, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 60*time.Second, "both sweeps done", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return done[names[0]] && done[names[1]], fmt.Sprint(done)
	})
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		t.Fatalf("sweeps failed: %v", failures)
	}
	if len(retired) != 8 {
		t.Fatalf("retired %d partitions (%v), want the 8 expired ones", len(retired), retired)
	}
	for p, by := range retired {
		if len(by) != 1 {
			t.Fatalf("%s retired %d times: %v", p, len(by), by)
		}
	}
	t.Logf("retired by: %v", retired)
	// The journal agrees: each partition has exactly one retired entry, whichever
	// member journaled it, and every entry is settled (one whose partition the other
	// member took meanwhile says gone or contended, never retiring).
	entries, err := l.PartitionRetirements(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	journaled := map[string]int{}
	for _, e := range entries {
		if e.Outcome == string(passes.RetirementStarted) || e.SettledAt == nil {
			t.Errorf("journal entry %+v is not settled", e)
		}
		if e.Outcome == string(passes.RetirementDone) {
			journaled[e.Partition]++
		}
	}
	if len(journaled) != 8 {
		t.Fatalf("the journal has %d retired partitions (%v), want 8", len(journaled), journaled)
	}
	for p, n := range journaled {
		if n != 1 || len(retired[p]) != 1 {
			t.Fatalf("%s: %d retired journal entries, %d retired reports", p, n, len(retired[p]))
		}
	}
	rowsOnly, err := passes.NewTable(db, "rows", passes.TableSpec{Table: base + "_rows", KeyColumns: []string{"at", "id"}, Timestamp: "at"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := rowsOnly.Factory()(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cutoff := time.Now().Add(-24 * time.Hour) // every member's cutoff was before this one's: the same rows are expired
	for {
		n, err := p.PurgeBatch(ctx, 100, cutoff)
		if err != nil {
			t.Fatal(err)
		}
		if n < 100 {
			break
		}
	}
	ids := func(table string) []int64 {
		var out []int64
		if err := db.NewRaw("SELECT id FROM "+table+" ORDER BY id").Scan(ctx, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if a, b := ids(base), ids(base+"_rows"); !slices.Equal(a, b) {
		t.Fatalf("the table keeps %v, a row-only sweep %v", a, b)
	}
}
