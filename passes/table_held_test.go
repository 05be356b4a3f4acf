package passes_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// OldestHeld is the oldest expired row a block child keeps, apart from the rows a sweep
// could delete: none without block children, none when no expired row is held, and the
// held row's time (not an older deletable row's) when one is.
func TestOldestHeld(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		p := fmt.Sprintf("h%d_", time.Now().UnixNano()%1_000_000_000)
		exec := func(q string) {
			t.Helper()
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		exec("CREATE TABLE " + p + "doc (id BIGINT PRIMARY KEY, at BIGINT NOT NULL)")
		exec("CREATE TABLE " + p + "hold (id BIGINT PRIMARY KEY, doc_id BIGINT NOT NULL REFERENCES " + p + "doc (id))")
		t.Cleanup(func() {
			_, _ = db.ExecContext(ctx, "DROP TABLE IF EXISTS "+p+"hold")
			_, _ = db.ExecContext(ctx, "DROP TABLE IF EXISTS "+p+"doc")
		})
		now := time.Unix(1_900_000_000, 0)
		day := int64(24 * 3600)
		// 1: 50 days old, deletable; 2: 40 days old, held; 3: 1 day old, held but not expired.
		exec(fmt.Sprintf("INSERT INTO %sdoc (id, at) VALUES (1, %d), (2, %d), (3, %d)", p, now.Unix()-50*day, now.Unix()-40*day, now.Unix()-day))
		spec := passes.TableSpec{Table: p + "doc", Key: "id", Timestamp: "at", TimestampFormat: passes.TimestampUnixSeconds,
			Children: []passes.ChildSpec{{Table: p + "hold", ForeignKey: "doc_id", OnDelete: passes.OnDeleteBlock}}}
		tbl, err := passes.NewTable(db, "docs", spec)
		if err != nil {
			t.Fatal(err)
		}
		cutoff := now.Add(-30 * 24 * time.Hour)
		if _, ok, err := tbl.OldestHeld(ctx, cutoff); err != nil || ok {
			t.Fatalf("with no hold: ok %v, err %v; want none", ok, err)
		}
		exec("INSERT INTO " + p + "hold (id, doc_id) VALUES (1, 2), (2, 3)")
		at, ok, err := tbl.OldestHeld(ctx, cutoff)
		if err != nil || !ok || at.Unix() != now.Unix()-40*day {
			t.Fatalf("OldestHeld = %v %v %v; want row 2's time %v", at, ok, err, time.Unix(now.Unix()-40*day, 0))
		}
		if at, ok, err := tbl.OldestExpired(ctx, cutoff); err != nil || !ok || at.Unix() != now.Unix()-50*day {
			t.Fatalf("OldestExpired = %v %v %v; want row 1's time", at, ok, err)
		}
		noBlock := spec
		noBlock.Children = nil
		plain, err := passes.NewTable(db, "plain", noBlock)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := plain.OldestHeld(ctx, cutoff); err != nil || ok {
			t.Fatalf("a table with no block child holds nothing: ok %v, err %v", ok, err)
		}
	})
}
