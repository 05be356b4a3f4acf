package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
)

// The partition journal keeps every field of a retirement on each ledger database: the
// entry is there, retiring, as soon as Retiring returns, and Settle gives it its
// outcome, reason and time without touching the rest.
func TestPartitionJournalRoundTrip(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		l := migrated(t, db)
		clk := clock.NewManual(time.Date(2026, 8, 3, 4, 5, 6, 0, time.UTC))
		j := l.ForNode("node-a").PartitionJournal().WithClock(clk)
		cutoff := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
		r := passes.PartitionReport{Partition: "public.events_may", Lower: "'2026-05-01 00:00:00+00'", Upper: "'2026-06-01 00:00:00+00'",
			EstimatedRows: 1234.4, Mode: passes.PartitionArchive, Cutoff: cutoff}
		id, err := j.Retiring(ctx, "events", r)
		if err != nil {
			t.Fatal(err)
		}
		other, err := j.Retiring(ctx, "other", passes.PartitionReport{Partition: "public.x", Lower: "1", Upper: "2", EstimatedRows: -1, Mode: passes.PartitionDrop, Cutoff: cutoff})
		if err != nil || other == id {
			t.Fatalf("second entry: id %d (first %d), %v", other, id, err)
		}
		// A node names itself once it joined the ledger, after its passes were built.
		j.SetNode("node-b")
		if _, err := j.Retiring(ctx, "third", passes.PartitionReport{Partition: "public.y", Mode: passes.PartitionDrop, Cutoff: cutoff}); err != nil {
			t.Fatal(err)
		}
		if third, err := l.PartitionRetirements(ctx, "third", 1); err != nil || len(third) != 1 || third[0].NodeID == nil || *third[0].NodeID != "node-b" {
			t.Fatalf("entry after SetNode = %+v, %v; want node-b", third, err)
		}
		got, err := l.PartitionRetirements(ctx, "events", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("entries of events = %+v, want 1", got)
		}
		e := got[0]
		if e.ID != id || e.PassName != "events" || e.Partition != r.Partition || e.Lower != r.Lower || e.Upper != r.Upper ||
			e.EstimatedRows != 1234 || e.Mode != "archive" || !e.Cutoff.Equal(cutoff) || !e.StartedAt.Equal(clk.Now()) ||
			e.Outcome != string(passes.RetirementStarted) || e.Reason != nil || e.SettledAt != nil || e.NodeID == nil || *e.NodeID != "node-a" {
			t.Fatalf("entry before its outcome = %+v", e)
		}
		clk.Advance(time.Minute)
		if err := j.Settle(ctx, id, passes.RetirementDisposeFailed, errors.New("archive schema missing")); err != nil {
			t.Fatal(err)
		}
		all, err := l.PartitionRetirements(ctx, "", 0)
		if err != nil || len(all) != 3 {
			t.Fatalf("every entry = %+v, %v; want 3", all, err)
		}
		for _, e := range all {
			switch e.PassName {
			case "events":
				if e.Outcome != string(passes.RetirementDisposeFailed) || e.Reason == nil || *e.Reason != "archive schema missing" ||
					e.SettledAt == nil || !e.SettledAt.Equal(clk.Now()) || e.Partition != r.Partition || e.EstimatedRows != 1234 {
					t.Fatalf("settled entry = %+v", e)
				}
			case "other":
				if e.Outcome != string(passes.RetirementStarted) || e.EstimatedRows != -1 || e.SettledAt != nil {
					t.Fatalf("the other entry changed: %+v", e)
				}
			}
		}
	})
}

// Without its table (a ledger not migrated, or the table dropped), Retiring fails
// rather than returning an entry that was never written.
func TestPartitionJournalFailsWithoutItsTable(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		l := migrated(t, db)
		if _, err := db.ExecContext(ctx, "DROP TABLE "+l.Prefix()+"partition_retirements"); err != nil {
			t.Fatal(err)
		}
		_, err := l.PartitionJournal().Retiring(ctx, "events", passes.PartitionReport{Partition: "public.p", Mode: passes.PartitionDrop})
		if err == nil {
			t.Fatal("Retiring without the journal's table succeeded")
		}
	})
}
