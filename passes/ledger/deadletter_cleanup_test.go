package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/ledger"
)

func TestDeadLetterCleanupPrunesOnlyOldResolvedLetters(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		b := newBook(t, db)
		ctx := context.Background()
		failed := b.run("orders", ledger.Failed, 30*24*time.Hour)
		oldResolved, _ := b.l.AddDeadLetter(ctx, "orders", "boom", failed, now.Add(-20*24*time.Hour))
		recentResolved, _ := b.l.AddDeadLetter(ctx, "orders", "boom", 0, now.Add(-20*24*time.Hour))
		open, _ := b.l.AddDeadLetter(ctx, "orders", "boom", 0, now.Add(-60*24*time.Hour))
		b.exec("UPDATE {p}dead_letter SET resolved_time = ? WHERE id = ?", now.Add(-10*24*time.Hour), oldResolved)
		b.exec("UPDATE {p}dead_letter SET resolved_time = ? WHERE id = ?", now.Add(-time.Hour), recentResolved)

		reg := ledger.NewDeadLetterCleanup(b.l, 0, 0).Registration()
		if reg.Name != ledger.NameDeadLetterCleanup {
			t.Fatalf("name = %q", reg.Name)
		}
		p, _ := reg.New(ctx)
		n, err := p.PurgeBatch(ctx, 100, now.Add(-ledger.DefaultDeadLetterRetention))
		if err != nil || n != 1 {
			t.Fatalf("PurgeBatch = %d, %v; want the one resolved 10 days ago", n, err)
		}
		letters, _ := b.l.DeadLetters(ctx)
		if len(letters) != 2 || letters[0].ID != open || letters[1].ID != recentResolved {
			t.Fatalf("letters left = %+v", letters)
		}
		// Its failed run is no longer evidence: the metadata cleanup may take it now.
		b.sweep(plan(t, ledger.CleanupConfig{Names: []ledger.NameRetention{{Name: "orders"}}}))
		for _, id := range b.left() {
			if id == failed {
				t.Fatal("the failed run of a pruned dead letter was kept")
			}
		}
	})
}
