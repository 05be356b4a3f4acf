package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/dbtest"
)

func TestRequestSweepUnlessQueued(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		l := migrated(t, db)
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		for i, want := range []bool{true, false, false} {
			made, err := l.RequestSweepUnlessQueued(ctx, "events#1", now)
			if err != nil || made != want {
				t.Fatalf("request %d = %v, %v; want %v", i, made, err, want)
			}
		}
		claims, err := l.ForNode("n1").ClaimWork(ctx, []string{"events#1"}, 10, now)
		if err != nil || len(claims) != 1 {
			t.Fatalf("claims = %+v, %v; want the one request", claims, err)
		}
		if made, err := l.RequestSweepUnlessQueued(ctx, "events#1", now); err != nil || !made {
			t.Fatalf("request after the claim = %v, %v; want a new one queued", made, err)
		}
		if made, err := l.RequestSweepUnlessQueued(ctx, "events#2", now); err != nil || !made {
			t.Fatalf("another pass's request = %v, %v; want it queued", made, err)
		}
	})
}
