// Command embedded is a service that already runs its own protoactor ActorSystem and
// embeds retention in it: a hand-written Go pass (expired cache entries in memory) and a
// declarative table pass (an outbox table in SQLite) share the service's actor system,
// and the service's own actor hears every event.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
)

func main() {
	dir, err := os.MkdirTemp("", "embedded")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	if err := run(context.Background(), os.Stdout, filepath.Join(dir, "service.db")); err != nil {
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(1)
	}
}

// cache is the service's own in-memory state with expiring entries.
type cache struct {
	mu      sync.Mutex
	entries map[string]time.Time // key -> written at
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

func run(ctx context.Context, out io.Writer, dbPath string) error {
	// The service's own actor system, and an actor of its own that watches retention.
	system := actor.NewActorSystem()
	done := make(chan actors.SweepDone, 4)
	watcher := system.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if d, ok := c.Message().(actors.SweepDone); ok {
			done <- d
		}
	}))
	defer system.Root.Stop(watcher)

	now := time.Now()
	c := &cache{entries: map[string]time.Time{}}
	for i := range 300 {
		c.entries[fmt.Sprintf("k%d", i)] = now.Add(-time.Duration(i) * time.Minute) // 0..299 minutes old
	}
	db, err := passes.Open(ctx, passes.DriverSQLite, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
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
	outbox, err := passes.NewTable(db, "outbox", passes.TableSpec{Table: "outbox", Key: "id", Timestamp: "sent_at", TimestampFormat: passes.TimestampUnixSeconds})
	if err != nil {
		return err
	}

	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	rt := actors.New(actors.Config{System: system, Logger: quiet, Observers: []actors.Observer{actors.ActorObserver(system, watcher)}})
	cacheOpts := passes.DefaultOptions()
	cacheOpts.RetentionPeriod, cacheOpts.BatchSize, cacheOpts.MaxStartupStagger = passes.Retain(2*time.Hour), 50, 0
	outboxOpts := passes.DefaultOptions()
	outboxOpts.RetentionPeriod, outboxOpts.MaxStartupStagger = passes.Retain(24*time.Hour), 0
	if err := rt.Register(
		passes.Registration{Name: passes.NameFor[cache](), New: passes.Reuse(passes.PassFunc(c.purge)), Options: cacheOpts},
		outbox.Registration(outboxOpts),
	); err != nil {
		return err
	}
	if err := rt.Start(ctx); err != nil {
		return err
	}
	for range 2 {
		select {
		case d := <-done:
			fmt.Fprintf(out, "%s: deleted %d in %d batches (%s)\n", d.Name, d.Rows, d.Batches, d.Reason)
		case <-time.After(time.Minute):
			return fmt.Errorf("the sweeps did not finish")
		}
	}
	if err := rt.Stop(ctx); err != nil {
		return err
	}
	left, _ := db.NewSelect().TableExpr("outbox").Count(ctx)
	c.mu.Lock()
	fmt.Fprintf(out, "left: %d cache entries, %d outbox rows; the service's actor system is still running: %v\n", len(c.entries), left, !system.IsStopped())
	c.mu.Unlock()
	return nil
}
