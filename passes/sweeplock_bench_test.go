package passes

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"database/sql"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"
	"os"

	"github.com/retentionkit/retention/passes/driver/postgres"
)

// BenchmarkSweepPin measures what a sweep's lock costs once per sweep: pinning the
// sweep's connection as a table pass always does (plain: one round trip for the backend
// pid), against pinning it with the connection settings and the lock in that same round
// trip and giving the lock back at the end (locked: one more round trip).
func BenchmarkSweepPin(b *testing.B) {
	dsn := os.Getenv("TEST_DATABASE_URL")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	db := bun.NewDB(sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn))), pgdialect.New())
	defer db.Close()
	if err := db.PingContext(context.Background()); err != nil {
		b.Skipf("PostgreSQL unreachable: %v", err)
	}
	lock := &SweepLockOptions{Identity: fmt.Sprintf("bench%08x", rand.Uint32())}
	for _, c := range []struct {
		name string
		lock *SweepLockOptions
	}{{"plain", nil}, {"locked", lock}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				p, err := pinSweep(ctx, postgres.Driver{}, db, c.lock)
				if err != nil {
					b.Fatal(err)
				}
				if err := p.release(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSlotsWaiting is the advisory slot pool's poll for other members' waiters (a
// read of pg_locks), which a member holding a slot runs every 250 ms.
func BenchmarkSlotsWaiting(b *testing.B) {
	dsn := os.Getenv("TEST_DATABASE_URL")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx := context.Background()
	s, err := OpenAdvisorySlots(ctx, dsn, fmt.Sprintf("bench%08x", rand.Uint32()), SweepConnOptions{})
	if err != nil {
		b.Skipf("PostgreSQL unreachable: %v", err)
	}
	defer s.Close()
	for b.Loop() {
		if _, err := s.SlotsWaiting(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
