package passes_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

// TestBacklogSplitsDeletableHeldAndQuarantined measures a table whose expired rows are
// deletable, on legal hold or in quarantine, with quarantine entries that must count
// nowhere (a row already gone, a row not expired, a row both held and quarantined
// counts once, as held): the three figures never overlap and add up to the expired rows.
func TestBacklogSplitsDeletableHeldAndQuarantined(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		p := fmt.Sprintf("b%08x_", rand.Uint32())
		t.Cleanup(func() {
			for _, table := range []string{"hold", "doc", "quarantine", "backlog_sample", "partition_retirements", "settings", "dead_letter", "work_queue", "log", "metadata", "node", "migrations", "migration_locks"} {
				_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+p+table)
			}
		})
		now := time.Now().Unix()
		old, recent := now-40*86400, now-86400
		for _, q := range []string{
			"CREATE TABLE " + p + "doc (id BIGINT PRIMARY KEY, at BIGINT NOT NULL)",
			"CREATE TABLE " + p + "hold (id BIGINT PRIMARY KEY, doc_id BIGINT NOT NULL REFERENCES " + p + "doc (id))",
			// 1-6 expired, 7 recent.
			fmt.Sprintf("INSERT INTO %sdoc (id, at) VALUES (1, %d), (2, %d), (3, %d), (4, %d), (5, %d), (6, %d), (7, %d)", p, old, old, old, old, old, old, recent),
			// 1 and 2 on hold.
			"INSERT INTO " + p + "hold (id, doc_id) VALUES (1, 1), (2, 2)",
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if _, err := ledger.Migrate(ctx, db, p); err != nil {
			t.Fatal(err)
		}
		l, _ := ledger.New(db, p)
		q := l.Quarantine(nil)
		// 2 (held too), 3 and 4 (expired), 7 (not expired), 99 (gone) are in quarantine.
		for _, key := range []int64{2, 3, 4, 7, 99} {
			if _, err := q.Hold(ctx, "docs", &passes.RowError{Key: []any{key}, Err: errors.New("violates foreign key")}); err != nil {
				t.Fatal(err)
			}
		}
		tbl, err := passes.NewTable(db, "docs", passes.TableSpec{Table: p + "doc", Key: "id", Timestamp: "at", TimestampFormat: passes.TimestampUnixSeconds,
			Children: []passes.ChildSpec{{Table: p + "hold", ForeignKey: "doc_id", OnDelete: passes.OnDeleteBlock}}})
		if err != nil {
			t.Fatal(err)
		}
		cutoff := time.Now().Add(-30 * 24 * time.Hour)
		tests := []struct {
			name  string
			table *passes.Table
			want  passes.Backlog
		}{
			{"without a quarantine", tbl, passes.Backlog{Deletable: 4, Held: 2}},                      // 3-6; 1, 2
			{"with it", tbl.WithQuarantine(q), passes.Backlog{Deletable: 2, Held: 2, Quarantined: 2}}, // 5, 6; 1, 2; 3, 4
		}
		for _, tc := range tests {
			got, err := tc.table.Backlog(ctx, cutoff)
			if err != nil || got != tc.want || got.Expired() != 6 {
				t.Errorf("%s: Backlog = %+v (expired %d), %v; want %+v of 6 expired rows", tc.name, got, got.Expired(), err, tc.want)
			}
		}
	})
}
