package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/dbtest"
)

// TestClaimWorkSkipsRowsAnotherClaimHolds: on a database that runs claims side by side
// (PostgreSQL), a claim passes over a queued request another transaction has locked and
// takes the next one, instead of waiting for the other claim to finish. SQLite runs one
// write transaction at a time, so it has nothing to skip and is not asked.
func TestClaimWorkSkipsRowsAnotherClaimHolds(t *testing.T) {
	db := dbtest.Postgres(t)
	ctx := context.Background()
	l := migrated(t, db)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, pass := range []string{"held", "free"} {
		if _, err := l.RequestSweepUnlessQueued(ctx, pass, now); err != nil {
			t.Fatal(err)
		}
	}
	other, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Rollback() }()
	var id int64
	if err := other.NewRaw("SELECT id FROM ? WHERE pass_name = 'held' FOR UPDATE", bun.Ident(l.Prefix()+"work_queue")).Scan(ctx, &id); err != nil {
		t.Fatal(err)
	}
	// The deadline only bounds a claim that waits for the lock (the failure); a claim
	// that skips returns at once.
	bounded, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	claims, err := l.ForNode("n1").ClaimWork(bounded, []string{"held", "free"}, 2, now)
	if err != nil {
		t.Fatalf("ClaimWork while another transaction holds a request: %v (it waited instead of skipping)", err)
	}
	if len(claims) != 1 || claims[0].Pass != "free" {
		t.Fatalf("claims = %+v; want only the request of free", claims)
	}
}
