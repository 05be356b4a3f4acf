package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/node/config"
)

// cache is the service's own in-memory state with expiring entries.
type cache struct {
	mu      sync.Mutex
	entries map[string]time.Time // key -> written at
}

// newCache holds 300 entries one minute apart, the newest written at now.
func newCache(now time.Time) *cache {
	c := &cache{entries: map[string]time.Time{}}
	for i := range 300 {
		c.entries[fmt.Sprintf("k%d", i)] = now.Add(-time.Duration(i) * time.Minute) // 0..299 minutes old
	}
	return c
}

// purge is the Go pass: it deletes up to n entries written before olderThan.
func (c *cache) purge(_ context.Context, n int, olderThan time.Time) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	deleted := 0
	for k, at := range c.entries {
		if deleted == n {
			break
		}
		if at.Before(olderThan) {
			delete(c.entries, k)
			deleted++
		}
	}
	return deleted, nil
}

func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// seedOutbox creates the outbox table with 1,000 rows ten minutes apart, the newest sent
// at now; its table pass is declared in the node's configuration (outboxConfig).
func seedOutbox(ctx context.Context, db *bun.DB, now time.Time) error {
	for _, s := range []string{
		`CREATE TABLE outbox (id INTEGER PRIMARY KEY, sent_at INTEGER NOT NULL)`,
		`CREATE INDEX outbox_sent ON outbox (sent_at, id)`,
		fmt.Sprintf(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000)
			INSERT INTO outbox (id, sent_at) SELECT i, %d - i * 600 FROM s`, now.Unix()),
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// outboxConfig is the node's configuration: the service's database, the outbox's table
// pass (kept 24 hours) and the run ledger under the svc_ prefix.
func outboxConfig(dbPath string) (*config.Config, error) {
	return config.ParseConfig(fmt.Appendf(nil, `database:
  driver: sqlite
  dsn: %q
passes:
  - name: outbox
    table: outbox
    key: id
    timestamp: sent_at
    timestamp_format: unix
    retention_period: 24h
    max_startup_stagger: 0s
ledger:
  table_prefix: svc_
`, dbPath))
}
