package metrics

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// The collector keeps block-held and quarantined rows out of the backlog and apart from
// each other; the oldest-deletable age is the oldest row a sweep could delete.
func TestBacklogCollectorHeldRows(t *testing.T) {
	ctx := context.Background()
	db, err := passes.Open(ctx, passes.DriverSQLite, filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now().Unix()
	for _, q := range []string{
		"CREATE TABLE doc (id BIGINT PRIMARY KEY, at BIGINT NOT NULL)",
		"CREATE TABLE hold (id BIGINT PRIMARY KEY, doc_id BIGINT NOT NULL REFERENCES doc (id))",
		fmt.Sprintf("INSERT INTO doc (id, at) VALUES (1, %d), (2, %d), (3, %d), (4, %d)", now-50*86400, now-45*86400, now-40*86400, now-86400),
		"INSERT INTO hold (id, doc_id) VALUES (1, 1), (2, 4)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tbl, err := passes.NewTable(db, "docs", passes.TableSpec{Table: "doc", Key: "id", Timestamp: "at", TimestampFormat: passes.TimestampUnixSeconds,
		Children: []passes.ChildSpec{{Table: "hold", ForeignKey: "doc_id", OnDelete: passes.OnDeleteBlock}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Migrate(ctx, db, "r_"); err != nil {
		t.Fatal(err)
	}
	l, _ := ledger.New(db, "r_")
	q := l.Quarantine(nil)
	tbl = tbl.WithQuarantine(q)
	// Row 2's delete failed on its own: it is in quarantine.
	if _, err := q.Hold(ctx, "docs", &passes.RowError{Key: []any{int64(2)}, Err: fmt.Errorf("FOREIGN KEY constraint failed")}); err != nil {
		t.Fatal(err)
	}
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(30 * 24 * time.Hour)
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewBacklogCollector([]Table{{Table: tbl, Options: opts}}))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			got[mf.GetName()] = m.GetGauge().GetValue()
		}
	}
	// Rows 1, 2 and 3 are expired: 1 is on hold, 2 in quarantine, 3 deletable.
	if got["retention_backlog_rows"] != 1 || got["retention_held_rows"] != 1 || got["retention_quarantined_rows"] != 1 {
		t.Errorf("backlog %v, held %v, quarantined %v; want 1 (row 3), 1 (row 1 on hold) and 1 (row 2)",
			got["retention_backlog_rows"], got["retention_held_rows"], got["retention_quarantined_rows"])
	}
	days := func(s float64) float64 { return s / 86400 }
	if d := days(got["retention_oldest_deletable_age_seconds"]); d < 40 || d > 40.01 {
		t.Errorf("oldest deletable %.3f days, want row 3's 40", d)
	}
	if d := days(got["retention_oldest_held_age_seconds"]); d < 50 || d > 50.01 {
		t.Errorf("oldest held %.3f days, want row 1's 50", d)
	}
	if t.Failed() {
		var names []string
		for n := range got {
			names = append(names, n)
		}
		t.Logf("gathered %s", strings.Join(names, ", "))
	}
}

// The structured measurement the dashboard reads is the one the metrics show, it is
// recorded in the ledger's backlog history at most every RecordEvery, and a table whose
// queries fail has no numbers and says why.
func TestBacklogMeasurementIsRecorded(t *testing.T) {
	ctx := context.Background()
	db, err := passes.Open(ctx, passes.DriverSQLite, filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := ledger.Migrate(ctx, db, "r_"); err != nil {
		t.Fatal(err)
	}
	l, _ := ledger.New(db, "r_")
	now := time.Now().Unix()
	for _, q := range []string{
		"CREATE TABLE doc (id BIGINT PRIMARY KEY, at BIGINT NOT NULL)",
		"CREATE TABLE gone (id BIGINT PRIMARY KEY, at BIGINT NOT NULL)",
		fmt.Sprintf("INSERT INTO doc (id, at) VALUES (1, %d), (2, %d), (3, %d)", now-50*86400, now-45*86400, now),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(30 * 24 * time.Hour)
	var tables []Table
	for _, name := range []string{"doc", "gone"} {
		tbl, err := passes.NewTable(db, name, passes.TableSpec{Table: name, Key: "id", Timestamp: "at", TimestampFormat: passes.TimestampUnixSeconds})
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, Table{Table: tbl, Options: opts})
	}
	if _, err := db.ExecContext(ctx, "DROP TABLE gone"); err != nil {
		t.Fatal(err)
	}
	c := NewBacklogCollector(tables)
	c.Recorder, c.MaxAge, c.RecordEvery = l, -1, time.Hour // measure every call, record once an hour
	for range 3 {
		measured, _ := c.Backlog()
		if len(measured) != 2 || measured[0].Rows == nil || *measured[0].Rows != 2 || *measured[0].Held != 0 || measured[0].Err != nil {
			t.Fatalf("doc = %+v", measured[0])
		}
		if g := measured[1]; g.Rows != nil || g.OldestAge != nil || g.Err == nil || !strings.Contains(g.Err.Error(), "gone") {
			t.Fatalf("gone = %+v; want no numbers and the error", g)
		}
	}
	hist, err := l.BacklogHistory(ctx, "doc", time.Time{})
	if err != nil || len(hist) != 1 || hist[0].Rows != 2 {
		t.Errorf("history = %+v, %v; want one sample of 2 rows", hist, err)
	}
	if hist, _ := l.BacklogHistory(ctx, "gone", time.Time{}); len(hist) != 0 {
		t.Errorf("gone has samples %+v", hist)
	}
}
