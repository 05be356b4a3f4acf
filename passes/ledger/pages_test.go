package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/ledger"
)

// The quarantine and the dead letters page by offset in their listing's order, each
// page with the total, on both drivers: 7 rows in pages of 3 are 3, 3 and 1.
func TestQuarantineAndDeadLetterPages(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		p := testPrefix(t, db)
		if _, err := ledger.Migrate(ctx, db, p); err != nil {
			t.Fatal(err)
		}
		l, err := ledger.New(db, p)
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		for i := range 7 {
			if _, err := db.NewRaw("INSERT INTO ? (pass_name, row_key, error, first_seen, last_seen, attempts, next_attempt) VALUES (?, ?, 'held', ?, ?, 1, ?)",
				bun.Ident(p+"quarantine"), "docs", fmt.Sprintf("[%d]", i), at.Add(time.Duration(i)*time.Minute), at, at).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := l.AddDeadLetter(ctx, "docs", fmt.Sprintf("gave up %d", i), 0, at); err != nil {
				t.Fatal(err)
			}
		}
		var keys, letters []string
		for offset := 0; offset < 9; offset += 3 {
			rows, total, err := l.QuarantinePage(ctx, offset, 3)
			if err != nil || total != 7 {
				t.Fatalf("quarantine page at %d: total %d, %v", offset, total, err)
			}
			page := ""
			for _, r := range rows {
				page += r.Key
			}
			keys = append(keys, page)
			dl, total, err := l.DeadLetterPage(ctx, offset, 3)
			if err != nil || total != 7 {
				t.Fatalf("dead-letter page at %d: total %d, %v", offset, total, err)
			}
			page = ""
			for _, d := range dl {
				page += d.Error[len(d.Error)-1:]
			}
			letters = append(letters, page)
		}
		if fmt.Sprint(keys) != "[[0][1][2] [3][4][5] [6]]" || fmt.Sprint(letters) != "[654 321 0]" {
			t.Errorf("quarantine pages %v, dead-letter pages %v; want oldest first and newest first", keys, letters)
		}
	})
}
