package mysql_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// TestCutoffExactAtEachPrecision: for DATETIME and TIMESTAMP at fractional precisions
// 0, 3 and 6, a sweep deletes the row one tick of the column's precision before the
// cutoff and keeps the row at the cutoff rounded up to that precision (the first value
// the column can hold that is not before it), for a cutoff between two ticks and one
// exactly on a tick. The cutoff is rounded up to the column's precision (Cutoff): a
// cutoff rounded down would keep the row a tick before, one rounded a tick further up
// would delete the row at the cutoff.
func TestCutoffExactAtEachPrecision(t *testing.T) {
	db := openMySQL(t, "")
	ctx := context.Background()
	between := time.Date(2026, 6, 1, 12, 0, 0, 123456789, time.UTC)
	n := 0
	for _, typ := range []string{"DATETIME", "TIMESTAMP"} {
		for _, p := range []int{0, 3, 6} {
			tick := time.Second
			for range p {
				tick /= 10
			}
			onTick := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC).Add(500 * tick)
			for _, cut := range []struct {
				name string
				at   time.Time
			}{{"between ticks", between}, {"on a tick", onTick}} {
				at := cut.at.Add(tick - time.Nanosecond).Truncate(tick) // the first tick not before the cutoff
				t.Run(fmt.Sprintf("%s(%d) cutoff %s", typ, p, cut.name), func(t *testing.T) {
					n++
					table := fmt.Sprintf("prec_%d", n)
					stamp := func(tm time.Time) string {
						return tm.UTC().Format("2006-01-02 15:04:05.000000")
					}
					for _, stmt := range []string{
						fmt.Sprintf("CREATE TABLE %s (id BIGINT PRIMARY KEY, at %s(%d) NOT NULL, KEY (at, id))", table, typ, p),
						fmt.Sprintf("INSERT INTO %s VALUES (1, '%s'), (2, '%s'), (3, '%s'), (4, '%s')", table,
							stamp(at.Add(-tick)), stamp(at), stamp(at.Add(tick)), stamp(at.Add(-time.Hour))),
					} {
						if _, err := db.ExecContext(ctx, stmt); err != nil {
							t.Fatal(err)
						}
					}
					tbl, err := passes.NewTable(db.DB, table, passes.TableSpec{Table: table, Key: "id", Timestamp: "at"})
					if err != nil {
						t.Fatal(err)
					}
					if res := tbl.ValidateStartup(ctx); res.Failed() {
						t.Fatal(res.Message())
					}
					pass, err := tbl.Factory()(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := pass.PurgeBatch(ctx, 100, cut.at); err != nil {
						t.Fatal(err)
					}
					var left []int64
					if err := db.NewSelect().Table(table).Column("id").Order("id").Scan(ctx, &left); err != nil {
						t.Fatal(err)
					}
					if want := []int64{2, 3}; !slices.Equal(left, want) {
						t.Fatalf("cutoff %s: ids %v left, want %v (1: a tick before %s, deleted; 2: at it, kept)",
							cut.at.Format(time.RFC3339Nano), left, want, stamp(at))
					}
				})
			}
		}
	}
}
