package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/passtest"
)

// twinTables builds two identical range-partitioned tables, events (swept with
// partitions:) and events_rows (swept by rows only), with the same partitions and rows,
// so a test can compare the keys each keeps at one cutoff.
type twinTables struct {
	t  *testing.T
	db *passtest.DB
}

// part is one partition: its name suffix and its bound clause (FROM (...) TO (...), or
// DEFAULT).
type part struct{ suffix, bound string }

// row is one row: its id and its timestamp as SQL text of the column's type.
type row struct {
	id int64
	at string
}

func newTwins(t *testing.T, db *passtest.DB, colType string, parts []part, rows []row) *twinTables {
	t.Helper()
	for _, table := range []string{"events", "events_rows"} {
		execAll(t, db, fmt.Sprintf(`CREATE TABLE %s (id BIGINT NOT NULL, at %s NOT NULL, PRIMARY KEY (at, id)) PARTITION BY RANGE (at)`, table, colType))
		for _, p := range parts {
			bound := p.bound
			if bound != "DEFAULT" {
				bound = "FOR VALUES " + bound
			}
			execAll(t, db, fmt.Sprintf(`CREATE TABLE %s_%s PARTITION OF %s %s`, table, p.suffix, table, bound))
		}
		for _, r := range rows {
			execAll(t, db, fmt.Sprintf(`INSERT INTO %s (id, at) VALUES (%d, '%s')`, table, r.id, r.at))
		}
		execAll(t, db, "ANALYZE "+table)
	}
	return &twinTables{t: t, db: db}
}

// table opens the pass over name; spec adjusts the declaration.
func (w *twinTables) table(name string, partitions *passes.PartitionSpec, adjust func(*passes.TableSpec)) *passes.Table {
	w.t.Helper()
	spec := passes.TableSpec{Table: name, KeyColumns: []string{"at", "id"}, Timestamp: "at", Partitions: partitions}
	if adjust != nil {
		adjust(&spec)
	}
	tbl, err := passes.NewTable(w.db.DB, name, spec)
	if err != nil {
		w.t.Fatal(err)
	}
	if res := tbl.ValidateStartup(context.Background()); res.Failed() {
		w.t.Fatalf("startup: %s", res.Message())
	}
	return tbl
}

// ids lists the ids table keeps, in order.
func (w *twinTables) ids(table string) []int64 {
	w.t.Helper()
	var ids []int64
	if err := w.db.NewRaw("SELECT id FROM ? ORDER BY id", bun.Ident(table)).Scan(context.Background(), &ids); err != nil {
		w.t.Fatal(err)
	}
	return ids
}

// compare sweeps both tables at cutoff (events with partitions) and fails unless they
// keep the same keys; it returns the partitioned sweep's result.
func (w *twinTables) compare(cutoff time.Time, partitions *passes.PartitionSpec, adjust func(*passes.TableSpec)) partSwept {
	w.t.Helper()
	got := sweepReported(w.t, w.table("events", partitions, adjust), 3, cutoff)
	rows := sweepReported(w.t, w.table("events_rows", nil, adjust), 3, cutoff)
	if a, b := w.ids("events"), w.ids("events_rows"); !slices.Equal(a, b) {
		w.t.Fatalf("with partitions the table keeps %v, by rows only %v", a, b)
	}
	if len(rows.reports) > 0 {
		w.t.Fatalf("the row-path sweep reported partitions: %v", rows.reports)
	}
	return got
}

// partSwept is what one sweep did.
type partSwept struct {
	deleted int
	batches int
	reports []passes.PartitionReport
}

// outcomes lists "partition outcome" for each report.
func (s partSwept) outcomes() []string {
	var out []string
	for _, r := range s.reports {
		name := r.Partition[strings.Index(r.Partition, ".")+1:]
		out = append(out, name+" "+string(r.Outcome))
	}
	return out
}

// partReporter hears a batch's skipped rows, more-waiting and partition reports.
type partReporter struct {
	mu      sync.Mutex
	skipped int
	more    bool
	reports []passes.PartitionReport
}

func (r *partReporter) RowSkipped(any, error) { r.mu.Lock(); r.skipped++; r.mu.Unlock() }
func (r *partReporter) MoreWaiting()          { r.mu.Lock(); r.more = true; r.mu.Unlock() }
func (r *partReporter) Partition(p passes.PartitionReport) {
	r.mu.Lock()
	r.reports = append(r.reports, p)
	r.mu.Unlock()
}

// sweepReported runs one sweep of tbl the way the runtime does (batches until one is
// short and says nothing more waits), collecting partition reports.
func sweepReported(t *testing.T, tbl *passes.Table, batchSize int, cutoff time.Time) partSwept {
	t.Helper()
	var res partSwept
	p, err := tbl.Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if c, ok := p.(passes.Closer); ok {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}()
	for res.batches < 1000 {
		r := &partReporter{}
		n, err := p.PurgeBatch(passes.WithBatchReporter(context.Background(), r), batchSize, cutoff)
		if err != nil {
			t.Fatalf("batch %d: %v", res.batches+1, err)
		}
		res.batches++
		res.deleted += n
		res.reports = append(res.reports, r.reports...)
		if n+r.skipped < batchSize && !r.more {
			return res
		}
	}
	t.Fatal("the sweep does not end")
	return res
}

func dropped(t *testing.T, db *passtest.DB, name string) bool {
	t.Helper()
	var n int
	if err := db.NewRaw("SELECT count(*) FROM pg_class WHERE oid = to_regclass(?)", name).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n == 0
}

var monthly = []part{
	{"may", "FROM ('2026-05-01') TO ('2026-06-01')"},
	{"june", "FROM ('2026-06-01') TO ('2026-07-01')"},
	{"july", "FROM ('2026-07-01') TO ('2026-08-01')"},
}

var monthlyRows = []row{
	{1, "2026-05-01 00:00:00"}, {2, "2026-05-20 10:00:00"}, {3, "2026-05-31 23:59:59.999999"},
	{4, "2026-06-01 00:00:00"}, {5, "2026-06-15 11:59:59.999999"}, {6, "2026-06-15 12:00:00"}, {7, "2026-06-30 23:00:00"},
	{8, "2026-07-01 00:00:00"}, {9, "2026-07-20 00:00:00"},
}

// A cutoff on a partition boundary retires every partition below it, whole, and
// deletes no row; the next partition is untouched.
func TestPartitionsCutoffOnBoundary(t *testing.T) {
	db := passtest.Postgres(t)
	w := newTwins(t, db, "TIMESTAMPTZ", monthly, monthlyRows)
	got := w.compare(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), &passes.PartitionSpec{}, nil)
	if got.deleted != 0 || !slices.Equal(got.outcomes(), []string{"events_may retiring", "events_may retired"}) {
		t.Fatalf("deleted %d rows, reports %v; want 0 rows and events_may retired", got.deleted, got.outcomes())
	}
	if !dropped(t, db, "events_may") || dropped(t, db, "events_june") {
		t.Fatal("events_may is not dropped, or events_june is")
	}
	if r := got.reports[0]; r.Lower == "" || r.Upper == "" || r.EstimatedRows != 3 || r.Mode != passes.PartitionDrop {
		t.Fatalf("report %+v: want both bounds, an estimate of 3 rows, mode drop", r)
	}
}

// A cutoff inside a partition retires the partitions before it and leaves that one to
// the row path: a row 1µs before the cutoff goes, the row at the cutoff stays.
func TestPartitionsCutoffMidPartition(t *testing.T) {
	db := passtest.Postgres(t)
	w := newTwins(t, db, "TIMESTAMPTZ", monthly, monthlyRows)
	got := w.compare(time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC), &passes.PartitionSpec{}, nil)
	if got.deleted != 2 || !slices.Equal(got.outcomes(), []string{"events_may retiring", "events_may retired"}) {
		t.Fatalf("deleted %d rows, reports %v; want rows 4 and 5 deleted and events_may retired", got.deleted, got.outcomes())
	}
	if ids := w.ids("events"); !slices.Equal(ids, []int64{6, 7, 8, 9}) {
		t.Fatalf("keeps %v, want [6 7 8 9]", ids)
	}
}

// A hand-made partition wider than the others is judged by its real upper bound, not
// by its lower bound plus an interval.
func TestPartitionsWiderPartition(t *testing.T) {
	db := passtest.Postgres(t)
	parts := []part{
		{"april", "FROM ('2026-04-01') TO ('2026-05-01')"},
		{"wide", "FROM ('2026-05-01') TO ('2026-06-20')"},
		{"rest", "FROM ('2026-06-20') TO ('2026-08-01')"},
	}
	rows := append([]row{{10, "2026-04-10 00:00:00"}}, monthlyRows...)
	w := newTwins(t, db, "TIMESTAMPTZ", parts, rows)
	got := w.compare(time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC), &passes.PartitionSpec{}, nil)
	if !slices.Equal(got.outcomes(), []string{"events_april retiring", "events_april retired"}) || dropped(t, db, "events_wide") {
		t.Fatalf("reports %v; want only events_april retired, events_wide kept", got.outcomes())
	}
}

// A timestamp without time zone holds wall time in timestamp_zone: bounds and cutoff
// are compared as that wall time, as the row path compares them.
func TestPartitionsNaiveTimestamp(t *testing.T) {
	zone := func(s *passes.TableSpec) { s.TimestampZone = "America/New_York" }
	// Midnight of June 1st in New York is 04:00 UTC.
	for _, tc := range []struct {
		cutoff time.Time
		want   []string
	}{
		{time.Date(2026, 6, 1, 4, 0, 0, 0, time.UTC), []string{"events_may retiring", "events_may retired"}},
		{time.Date(2026, 6, 1, 3, 59, 59, 999999000, time.UTC), nil},
	} {
		t.Run(tc.cutoff.Format(time.RFC3339Nano), func(t *testing.T) {
			db := passtest.Postgres(t)
			w := newTwins(t, db, "TIMESTAMP", monthly, monthlyRows)
			got := w.compare(tc.cutoff, &passes.PartitionSpec{}, zone)
			if !slices.Equal(got.outcomes(), tc.want) {
				t.Fatalf("reports %v, want %v", got.outcomes(), tc.want)
			}
		})
	}
}

// A MINVALUE lower bound is retired like any other; a MAXVALUE upper bound never is.
func TestPartitionsMinMaxValue(t *testing.T) {
	db := passtest.Postgres(t)
	parts := []part{
		{"old", "FROM (MINVALUE) TO ('2026-05-01')"},
		{"may", "FROM ('2026-05-01') TO ('2026-06-01')"},
		{"rest", "FROM ('2026-06-01') TO (MAXVALUE)"},
	}
	rows := append([]row{{10, "1999-01-01 00:00:00"}}, monthlyRows...)
	w := newTwins(t, db, "TIMESTAMPTZ", parts, rows)
	got := w.compare(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), &passes.PartitionSpec{}, nil)
	want := []string{"events_old retiring", "events_old retired", "events_may retiring", "events_may retired"}
	if !slices.Equal(got.outcomes(), want) || dropped(t, db, "events_rest") {
		t.Fatalf("reports %v, want %v and events_rest kept", got.outcomes(), want)
	}
}

// A default partition holding old rows: with concurrently false, whole partitions go
// by a plain detach and the default's expired rows by the row path; its newer rows stay.
func TestPartitionsDefaultPartition(t *testing.T) {
	db := passtest.Postgres(t)
	parts := append(slices.Clone(monthly[:2]), part{"other", "DEFAULT"})
	rows := append([]row{{20, "2026-04-01 00:00:00"}, {21, "2026-09-01 00:00:00"}}, monthlyRows...)
	w := newTwins(t, db, "TIMESTAMPTZ", parts, rows)
	no := false
	got := w.compare(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), &passes.PartitionSpec{Concurrently: &no}, nil)
	if got.deleted != 1 || !slices.Equal(got.outcomes(), []string{"events_may retiring", "events_may retired"}) {
		t.Fatalf("deleted %d, reports %v; want the default's April row deleted and events_may retired", got.deleted, got.outcomes())
	}
}

// partQuarantine is a quarantine holding fixed keys, none due.
type partQuarantine struct{ keys []string }

func (q partQuarantine) Quarantined(context.Context, string) ([]passes.QuarantinedKey, error) {
	out := make([]passes.QuarantinedKey, len(q.keys))
	for i, k := range q.keys {
		out[i] = passes.QuarantinedKey{Key: k}
	}
	return out, nil
}
func (partQuarantine) Hold(context.Context, string, *passes.RowError) (bool, error) {
	return false, nil
}
func (partQuarantine) Release(context.Context, string, []string) error { return nil }

// A quarantined key not yet due inside an expired partition keeps that partition for
// the row path, which keeps the row; the other partitions go.
func TestPartitionsQuarantinedKey(t *testing.T) {
	db := passtest.Postgres(t)
	parts := append([]part{{"april", "FROM ('2026-04-01') TO ('2026-05-01')"}}, monthly...)
	rows := append([]row{{10, "2026-04-10 00:00:00"}}, monthlyRows...)
	w := newTwins(t, db, "TIMESTAMPTZ", parts, rows)
	key := passes.KeyText([]any{time.Date(2026, 5, 20, 10, 0, 0, 0, time.UTC), int64(2)})
	q := partQuarantine{keys: []string{key}}
	cutoff := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	got := sweepReported(t, w.table("events", &passes.PartitionSpec{}, nil).WithQuarantine(q), 3, cutoff)
	sweepReported(t, w.table("events_rows", nil, nil).WithQuarantine(q), 3, cutoff)
	if a, b := w.ids("events"), w.ids("events_rows"); !slices.Equal(a, b) || !slices.Contains(a, 2) {
		t.Fatalf("with partitions the table keeps %v, by rows only %v; both must keep the quarantined row 2", a, b)
	}
	want := []string{"events_april retiring", "events_april retired", "events_may kept"}
	if !slices.Equal(got.outcomes(), want) {
		t.Fatalf("reports %v, want %v", got.outcomes(), want)
	}
}

// A transaction holding a lock in an expired partition (a row lock, ACCESS SHARE on the
// partition, or an open REPEATABLE READ snapshot that read the table): the concurrent
// detach gives up at its lock timeout (contended, not a failure), leaving the partition
// pending, so the row path sees none of its rows; once the holder is gone the next
// sweep finalizes the detach and retires the partition, and the keys kept are the row
// path's.
func TestPartitionsLocked(t *testing.T) {
	for name, hold := range map[string][]string{
		"row lock":        {"SELECT id FROM events WHERE id = 2 FOR UPDATE"},
		"access share":    {"LOCK TABLE events_may IN ACCESS SHARE MODE"},
		"repeatable read": {"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", "SELECT count(*) FROM events"},
	} {
		t.Run(name, func(t *testing.T) {
			db := passtest.Postgres(t)
			w := newTwins(t, db, "TIMESTAMPTZ", monthly, monthlyRows)
			ctx := context.Background()
			holder, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = holder.Rollback() }()
			for _, q := range hold {
				if _, err := holder.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			cutoff := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
			spec := &passes.PartitionSpec{LockTimeout: 100 * time.Millisecond}
			first := sweepReported(t, w.table("events", spec, nil), 3, cutoff)
			if out := first.outcomes(); len(out) != 1 || out[0] != "events_may contended" || !errors.Is(first.reports[0].Reason, driver.ErrPartitionContended) {
				t.Fatalf("first sweep reports %v, want events_may contended", out)
			}
			var pending bool
			if err := db.NewRaw("SELECT inhdetachpending FROM pg_inherits WHERE inhrelid = to_regclass('events_may')").Scan(ctx, &pending); err != nil {
				t.Fatal(err)
			}
			if !pending || first.deleted != 0 {
				t.Fatalf("after the first sweep events_may pending %v, %d rows deleted; want it pending and no row deleted", pending, first.deleted)
			}
			if err := holder.Rollback(); err != nil {
				t.Fatal(err)
			}
			// The holder is gone, but another session may still lock the partition for a
			// moment (autovacuum on the freshly loaded table yields only after
			// deadlock_timeout, 1 s; in CI other packages share the server), so the second
			// sweep waits longer than the first: it shows the finalization, not a race.
			patient := &passes.PartitionSpec{LockTimeout: 15 * time.Second}
			second := sweepReported(t, w.table("events", patient, nil), 3, cutoff)
			if out := second.outcomes(); !slices.Equal(out, []string{"events_may retiring", "events_may retired"}) {
				t.Fatalf("second sweep reports %v, want events_may finalized and retired", out)
			}
			sweepReported(t, w.table("events_rows", nil, nil), 3, cutoff)
			if a, b := w.ids("events"), w.ids("events_rows"); !slices.Equal(a, b) {
				t.Fatalf("with partitions the table keeps %v, by rows only %v", a, b)
			}
			if !dropped(t, db, "events_may") {
				t.Fatal("events_may is still there")
			}
		})
	}
}

// A dry run of a pass with partitions: counts what a pure row-path dry run counts, and
// says how many of those rows whole partitions hold; the sweep then removes exactly
// that many rows.
func TestPartitionsDryRun(t *testing.T) {
	db := passtest.Postgres(t)
	w := newTwins(t, db, "TIMESTAMPTZ", monthly, monthlyRows)
	cutoff := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	part, err := w.table("events", &passes.PartitionSpec{}, nil).DryRun(ctx, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := w.table("events_rows", nil, nil).DryRun(ctx, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if part.Eligible != rows.Eligible || part.Partitions != 1 || part.InPartitions != 3 || rows.Partitions != 0 {
		t.Fatalf("dry runs: partitions %+v, rows only %+v; want the same Eligible, 1 partition holding 3 of them", part, rows)
	}
	before := len(w.ids("events"))
	got := w.compare(cutoff, &passes.PartitionSpec{}, nil)
	if removed := before - len(w.ids("events")); int64(removed) != part.Eligible || int64(got.deleted) != part.Eligible-part.InPartitions {
		t.Fatalf("the sweep removed %d rows (%d by rows), the dry run said %d (%d in partitions)", removed, got.deleted, part.Eligible, part.InPartitions)
	}
}

// Declared children: the children of an expired partition's rows go first (delete) or
// lose their reference (set_null), through the child path of a batch, then the
// partition; no orphan is left, and both tables keep what a row-only sweep keeps.
func TestPartitionsDeclaredChild(t *testing.T) {
	for onDelete, notes := range map[passes.OnDelete]int{passes.OnDeleteDelete: 12, passes.OnDeleteSetNull: 18} {
		t.Run(string(onDelete), func(t *testing.T) {
			db := passtest.Postgres(t)
			w := newTwins(t, db, "TIMESTAMPTZ", monthly, monthlyRows)
			for _, table := range []string{"events", "events_rows"} {
				execAll(t, db, fmt.Sprintf(`CREATE TABLE %[1]s_notes (id BIGINT PRIMARY KEY, event_at TIMESTAMPTZ, event_id BIGINT,
					FOREIGN KEY (event_at, event_id) REFERENCES %[1]s (at, id))`, table),
					fmt.Sprintf(`INSERT INTO %[1]s_notes SELECT id * 10 + n, at, id FROM %[1]s, generate_series(1, 2) n`, table))
			}
			child := func(s *passes.TableSpec) {
				s.Children = []passes.ChildSpec{{Table: s.Table + "_notes", ForeignKeyColumns: []string{"event_at", "event_id"}, OnDelete: onDelete}}
			}
			// Batches of 3 keys: May's three rows take two units (3, then none left).
			got := w.compare(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), &passes.PartitionSpec{}, child)
			if !slices.Equal(got.outcomes(), []string{"events_may retiring", "events_may retired"}) {
				t.Fatalf("reports %v, want events_may retired", got.outcomes())
			}
			var a, b []string
			for table, dst := range map[string]*[]string{"events_notes": &a, "events_rows_notes": &b} {
				if err := db.NewRaw("SELECT id::text || ':' || coalesce(event_id::text, 'null') FROM ? ORDER BY id", bun.Ident(table)).Scan(context.Background(), dst); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(a, b) || len(a) != notes {
				t.Fatalf("notes with partitions %v, by rows only %v; want the same %d", a, b, notes)
			}
		})
	}
}

// A foreign key another session adds after startup, referencing a row of an expired
// partition: the detach refuses (its own reference check), the partition is left to the
// row path, which deletes its other rows and skips the referenced one, and the sweep
// does not fail; both tables keep the same keys.
func TestPartitionsReferenceAddedAfterStartup(t *testing.T) {
	db := passtest.Postgres(t)
	w := newTwins(t, db, "TIMESTAMPTZ", monthly, monthlyRows)
	part := w.table("events", &passes.PartitionSpec{}, nil)
	rows := w.table("events_rows", nil, nil)
	for _, table := range []string{"events", "events_rows"} {
		execAll(t, db, fmt.Sprintf(`CREATE TABLE %[1]s_refs (id BIGINT PRIMARY KEY, event_at TIMESTAMPTZ, event_id BIGINT,
			FOREIGN KEY (event_at, event_id) REFERENCES %[1]s (at, id))`, table),
			fmt.Sprintf(`INSERT INTO %[1]s_refs SELECT 1, at, id FROM %[1]s WHERE id = 2`, table))
	}
	cutoff := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	got := sweepReported(t, part, 3, cutoff)
	sweepReported(t, rows, 3, cutoff)
	if a, b := w.ids("events"), w.ids("events_rows"); !slices.Equal(a, b) || !slices.Contains(a, 2) {
		t.Fatalf("with partitions the table keeps %v, by rows only %v; both must keep the referenced row 2", a, b)
	}
	if out := got.outcomes(); !slices.Equal(out, []string{"events_may kept"}) {
		t.Fatalf("reports %v, want events_may kept", out)
	}
}

// A date key and bigint unix (seconds, milliseconds) keys: bounds and cutoff are
// compared by the server in the column's type, the cutoff converted as the row path
// converts it, and the keys kept are the row path's.
func TestPartitionsKeyTypes(t *testing.T) {
	may, june, july := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	unixParts := func(unit func(time.Time) int64) []part {
		return []part{
			{"may", fmt.Sprintf("FROM (%d) TO (%d)", unit(may), unit(june))},
			{"june", fmt.Sprintf("FROM (%d) TO (%d)", unit(june), unit(july))},
		}
	}
	unixRows := func(unit func(time.Time) int64) []row {
		return []row{{1, fmt.Sprint(unit(may))}, {2, fmt.Sprint(unit(june) - 1)}, {3, fmt.Sprint(unit(june))}, {4, fmt.Sprint(unit(june.Add(36 * time.Hour)))}}
	}
	seconds := func(t time.Time) int64 { return t.Unix() }
	millis := func(t time.Time) int64 { return t.UnixMilli() }
	tests := []struct {
		name, colType string
		format        passes.TimestampFormat
		parts         []part
		rows          []row
		cutoff        time.Time
		want          []string
	}{
		{"date on the boundary", "DATE", "", monthly[:2], []row{{1, "2026-05-01"}, {2, "2026-05-31"}, {3, "2026-06-01"}, {4, "2026-06-02"}},
			june, []string{"events_may retiring", "events_may retired"}},
		{"date mid-day", "DATE", "", monthly[:2], []row{{1, "2026-05-01"}, {2, "2026-05-31"}, {3, "2026-06-01"}, {4, "2026-06-02"}},
			june.Add(12 * time.Hour), []string{"events_may retiring", "events_may retired"}},
		{"unix seconds", "BIGINT", passes.TimestampUnixSeconds, unixParts(seconds), unixRows(seconds),
			june, []string{"events_may retiring", "events_may retired"}},
		{"unix seconds, 1s early", "BIGINT", passes.TimestampUnixSeconds, unixParts(seconds), unixRows(seconds),
			june.Add(-time.Second), nil},
		{"unix ms, 1ms late", "BIGINT", passes.TimestampUnixMillis, unixParts(millis), unixRows(millis),
			june.Add(time.Millisecond), []string{"events_may retiring", "events_may retired"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := passtest.Postgres(t)
			w := newTwins(t, db, tc.colType, tc.parts, tc.rows)
			got := w.compare(tc.cutoff, &passes.PartitionSpec{}, func(s *passes.TableSpec) { s.TimestampFormat = tc.format })
			if !slices.Equal(got.outcomes(), tc.want) {
				t.Fatalf("reports %v, want %v", got.outcomes(), tc.want)
			}
		})
	}
}

// A quarantine holding a key the sweep cannot look for keeps every partition for the
// row path: none can be shown free of it.
func TestPartitionsUncheckedQuarantine(t *testing.T) {
	db := passtest.Postgres(t)
	w := newTwins(t, db, "TIMESTAMPTZ", monthly, monthlyRows)
	q := partQuarantine{keys: []string{"not a key of this table"}}
	got := sweepReported(t, w.table("events", &passes.PartitionSpec{}, nil).WithQuarantine(q), 3, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	if out := got.outcomes(); !slices.Equal(out, []string{"events_may kept"}) || dropped(t, db, "events_may") {
		t.Fatalf("reports %v, want events_may kept", out)
	}
}

// Modes detach and archive keep the retired partition as a table of its own, out of
// the table (in its schema, or moved to archive_schema), with its rows.
func TestPartitionsDetachAndArchive(t *testing.T) {
	for _, mode := range []passes.PartitionMode{passes.PartitionDetach, passes.PartitionArchive} {
		t.Run(string(mode), func(t *testing.T) {
			db := passtest.Postgres(t)
			ctx := context.Background()
			var schema string
			if err := db.NewRaw("SELECT current_schema()").Scan(ctx, &schema); err != nil {
				t.Fatal(err)
			}
			w := newTwins(t, db, "TIMESTAMPTZ", monthly, monthlyRows)
			spec := &passes.PartitionSpec{Mode: mode}
			where := "events_may"
			if mode == passes.PartitionArchive {
				spec.ArchiveSchema = schema + "_archive"
				where = spec.ArchiveSchema + ".events_may"
				execAll(t, db, "CREATE SCHEMA "+spec.ArchiveSchema)
				t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP SCHEMA "+spec.ArchiveSchema+" CASCADE") })
			}
			got := w.compare(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), spec, nil)
			if !slices.Equal(got.outcomes(), []string{"events_may retiring", "events_may retired"}) {
				t.Fatalf("reports %v, want events_may retired", got.outcomes())
			}
			var rows, attached int
			if err := db.NewRaw("SELECT count(*) FROM "+where).Scan(ctx, &rows); err != nil {
				t.Fatal(err)
			}
			if err := db.NewRaw("SELECT count(*) FROM pg_inherits WHERE inhrelid = to_regclass(?)", where).Scan(ctx, &attached); err != nil {
				t.Fatal(err)
			}
			if rows != 3 || attached != 0 {
				t.Fatalf("%s holds %d rows and is attached %d times; want its 3 rows, detached", where, rows, attached)
			}
		})
	}
}
