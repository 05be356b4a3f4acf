package postgres_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
	"github.com/retentionkit/retention/passes/passtest"
)

// journalLedger migrates a ledger in db's schema (its own, per test).
func journalLedger(t *testing.T, db *passtest.DB) *ledger.Ledger {
	t.Helper()
	if _, err := ledger.Migrate(context.Background(), db.DB, ledger.DefaultPrefix); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.New(db.DB, ledger.DefaultPrefix)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// attached reports whether name is a partition of parent in the catalog now.
func attached(t *testing.T, db *passtest.DB, parent, name string) bool {
	t.Helper()
	var n int
	err := db.NewRaw("SELECT count(*) FROM pg_inherits WHERE inhrelid = to_regclass(?) AND inhparent = to_regclass(?)", name, parent).
		Scan(context.Background(), &n)
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// onRecord is the ledger's journal with a look at the database right after each entry
// is written: seen runs on another connection than the sweep's, so what it finds was
// committed before the detach began.
type onRecord struct {
	*ledger.PartitionJournal
	seen func(id int64, r passes.PartitionReport)
}

func (o onRecord) Retiring(ctx context.Context, pass string, r passes.PartitionReport) (int64, error) {
	id, err := o.PartitionJournal.Retiring(ctx, pass, r)
	if err == nil {
		o.seen(id, r)
	}
	return id, err
}

// Each retired partition has its journal entry, committed while the partition was
// still attached with its rows, with both bounds, the estimate, the mode and the
// cutoff; after the drop the entry says retired.
func TestPartitionJournalEntryBeforeTheDetach(t *testing.T) {
	db := passtest.Postgres(t)
	w := newTwins(t, db, "TIMESTAMPTZ", monthly, monthlyRows)
	l := journalLedger(t, db)
	cutoff := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	var checked []string
	j := onRecord{PartitionJournal: l.PartitionJournal(), seen: func(id int64, r passes.PartitionReport) {
		name := r.Partition[strings.Index(r.Partition, ".")+1:]
		if !attached(t, db, "events", name) {
			t.Errorf("%s was journaled when it was no longer attached", name)
		}
		entries, err := l.PartitionRetirements(context.Background(), "events", 0)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(entries, func(e ledger.PartitionRetirement) bool { return e.ID == id })
		if i < 0 || entries[i].Outcome != string(passes.RetirementStarted) || entries[i].Partition != r.Partition {
			t.Errorf("right after Retiring, the ledger holds %+v, not entry %d for %s", entries, id, r.Partition)
		}
		checked = append(checked, name)
	}}
	tbl := w.table("events", &passes.PartitionSpec{}, nil).WithPartitionJournal(j)
	got := sweepReported(t, tbl, 3, cutoff)
	if want := []string{"events_may retiring", "events_may retired", "events_june retiring", "events_june retired"}; !slices.Equal(got.outcomes(), want) {
		t.Fatalf("reports %v, want %v", got.outcomes(), want)
	}
	if slices.ContainsFunc(got.reports, passes.PartitionReport.Warns) {
		t.Fatalf("reports %+v: a retirement journaled in full warns", got.reports)
	}
	if !slices.Equal(checked, []string{"events_may", "events_june"}) {
		t.Fatalf("journaled %v before their detach, want events_may and events_june", checked)
	}
	entries, err := l.PartitionRetirements(context.Background(), "events", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("entries %+v, want 2", entries)
	}
	for _, e := range entries {
		want := map[string]int64{"events_may": 3, "events_june": 4}[e.Partition[strings.Index(e.Partition, ".")+1:]]
		if e.Outcome != string(passes.RetirementDone) || e.SettledAt == nil || e.Reason != nil || e.Lower == "" || e.Upper == "" ||
			e.EstimatedRows != want || e.Mode != "drop" || !e.Cutoff.Equal(cutoff) || e.PassName != "events" {
			t.Errorf("entry after the sweep = %+v, want retired, both bounds, %d estimated rows, drop, cutoff %s", e, want, cutoff)
		}
	}
	if !dropped(t, db, "events_may") || !dropped(t, db, "events_june") {
		t.Fatal("the journaled partitions were not dropped")
	}
}

// A journal that cannot write stops the retirement before anything is detached: the
// batch fails with the journal's error and the partition stays attached with every row.
func TestPartitionJournalFailureDetachesNothing(t *testing.T) {
	db := passtest.Postgres(t)
	w := newTwins(t, db, "TIMESTAMPTZ", monthly, monthlyRows)
	l := journalLedger(t, db)
	execAll(t, db, "DROP TABLE "+ledger.DefaultPrefix+"partition_retirements")
	tbl := w.table("events", &passes.PartitionSpec{}, nil).WithPartitionJournal(l.PartitionJournal())
	before := w.ids("events")
	p, err := tbl.Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.(passes.Closer).Close() })
	r := &partReporter{}
	_, err = p.PurgeBatch(passes.WithBatchReporter(context.Background(), r), 3, time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))
	if err == nil || !strings.Contains(err.Error(), "partition journal") || !strings.Contains(err.Error(), "nothing was detached") {
		t.Fatalf("batch error = %v, want the journal's failure", err)
	}
	if len(r.reports) != 0 {
		t.Fatalf("reports %+v: nothing was retiring", r.reports)
	}
	if !attached(t, db, "events", "events_may") || !attached(t, db, "events", "events_june") {
		t.Fatal("a partition was detached though its retirement was not journaled")
	}
	if after := w.ids("events"); !slices.Equal(before, after) {
		t.Fatalf("the table holds %v, had %v", after, before)
	}
}

// An outcome the journal cannot record after the drop leaves the entry retiring, which
// is what is known; the sweep is not failed for it (the partition is gone either way)
// and the retired report says the journal kept retiring.
func TestPartitionJournalLostOutcomeStaysRetiring(t *testing.T) {
	db := passtest.Postgres(t)
	w := newTwins(t, db, "TIMESTAMPTZ", monthly, monthlyRows)
	l := journalLedger(t, db)
	table := ledger.DefaultPrefix + "partition_retirements"
	// Once the entry is written, its table moves aside, so the outcome's update fails.
	j := onRecord{PartitionJournal: l.PartitionJournal(), seen: func(int64, passes.PartitionReport) {
		execAll(t, db, "ALTER TABLE "+table+" RENAME TO journal_aside")
	}}
	tbl := w.table("events", &passes.PartitionSpec{}, nil).WithPartitionJournal(j)
	got := sweepReported(t, tbl, 3, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	if !slices.Equal(got.outcomes(), []string{"events_may retiring", "events_may retired"}) || !dropped(t, db, "events_may") {
		t.Fatalf("reports %v; want events_may retired and dropped", got.outcomes())
	}
	if r := got.reports[1]; r.Reason == nil || !strings.Contains(r.Reason.Error(), `keeps outcome "retiring"`) || !r.Warns() {
		t.Fatalf("retired report's reason %v (warns %v); want the journal's lost outcome, as a warning", r.Reason, r.Warns())
	}
	execAll(t, db, "ALTER TABLE journal_aside RENAME TO "+table)
	entries, err := l.PartitionRetirements(context.Background(), "events", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Outcome != string(passes.RetirementStarted) || entries[0].SettledAt != nil {
		t.Fatalf("entries %+v; want events_may still retiring", entries)
	}
}
