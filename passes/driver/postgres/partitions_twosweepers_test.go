package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/passtest"
)

// Two sweeps of one partitioned table at once, each under its own sweep lock: a pass
// and its drain helper, which cluster mode places on two members (the helper's identity
// is "name#k", so its lock does not exclude the pass's). Their batches alternate, so
// each one's retire phase finds partitions the other already retired after it listed
// them. Every expired partition is retired exactly once, by one of the two, neither
// fails on one found gone (reported gone, not an error), and the table keeps exactly
// what a row-only sweep of an identical table keeps.
func TestPartitionsTwoSweepersRetireOnce(t *testing.T) {
	t.Parallel()
	db := passtest.Postgres(t)
	parts := append([]part{
		{"march", "FROM ('2026-03-01') TO ('2026-04-01')"},
		{"april", "FROM ('2026-04-01') TO ('2026-05-01')"},
	}, monthly...)
	rows := append([]row{{20, "2026-03-10 00:00:00"}, {21, "2026-04-10 00:00:00"}, {22, "2026-04-30 23:59:59.999999"}}, monthlyRows...)
	w := newTwins(t, db, "TIMESTAMPTZ", parts, rows)
	cutoff := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	// A quarantined key in the boundary partition: each retire phase then reads every
	// partition it is about to retire, as a sweep with a quarantine does.
	q := partQuarantine{keys: []string{passes.KeyText([]any{time.Date(2026, 6, 15, 11, 59, 59, 999999000, time.UTC), int64(5)})}}
	var sweepers []passes.Pass
	for _, identity := range []string{"events", "events#1"} {
		locked, err := w.table("events", &passes.PartitionSpec{}, nil).WithQuarantine(q).WithSweepLock(passes.SweepLockOptions{Identity: identity})
		if err != nil {
			t.Fatal(err)
		}
		p, err := locked.Factory()(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := p.(passes.Closer); ok {
			defer func() { _ = c.Close() }()
		}
		sweepers = append(sweepers, p)
	}
	retired := map[string]int{}
	var gone int
	done := []bool{false, false}
	for round := 0; !done[0] || !done[1]; round++ {
		if round > 100 {
			t.Fatal("the sweeps do not end")
		}
		for i, p := range sweepers {
			if done[i] {
				continue
			}
			r := &partReporter{}
			n, err := p.PurgeBatch(passes.WithBatchReporter(ctx, r), 3, cutoff)
			if err != nil {
				t.Fatalf("sweeper %d, round %d: %v", i, round, err)
			}
			for _, rep := range r.reports {
				switch rep.Outcome {
				case passes.PartitionRetired:
					retired[rep.Partition]++
				case passes.PartitionGone:
					gone++
				}
			}
			done[i] = n+r.skipped < 3 && !r.more
		}
	}
	if len(retired) != 3 {
		t.Fatalf("retired %v; want march, april and may, once each", retired)
	}
	for name, n := range retired {
		if n != 1 {
			t.Fatalf("%s retired %d times", name, n)
		}
	}
	if gone == 0 {
		t.Fatal("no sweeper found a partition the other had retired: the test did not interleave them")
	}
	sweepReported(t, w.table("events_rows", nil, nil).WithQuarantine(q), 3, cutoff)
	if a, b := w.ids("events"), w.ids("events_rows"); !slices.Equal(a, b) {
		t.Fatalf("with two sweepers the table keeps %v, by rows only %v", a, b)
	}
}
