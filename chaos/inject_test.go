//go:build chaos

package chaos

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// killBackends terminates every backend of the scenario's database but the suite's own,
// every period, until the returned stop is called; stop returns how many it killed.
func killBackends(t *testing.T, database string, every time.Duration) (stop func() int) {
	t.Helper()
	admin := open(t, the.pg.testDSN("postgres"))
	ctx, cancel := context.WithCancel(context.Background())
	var killed atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			var n int64
			err := admin.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
				FROM pg_stat_activity WHERE datname = '`+database+`' AND backend_type = 'client backend'
				AND application_name <> '`+testApp+`' AND pid <> pg_backend_pid()`).Scan(&n)
			if err == nil {
				killed.Add(n)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() int {
		cancel()
		<-done
		admin.Close()
		return int(killed.Load())
	}
}

// waitUntil polls cond until it holds, within the guard (a bound on a hang, not a
// timing assertion).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitUntilWithin(t, guard, what, cond)
}

// waitUntilWithin is waitUntil with a bound of its own.
func waitUntilWithin(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, bound)
		}
		<-tick.C
	}
}

// expectWithin is waitUntilWithin for a check the scenario goes on after: it reports
// the condition that did not come within bound and returns.
func expectWithin(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Errorf("%s: not within %v", what, bound)
			return
		}
		<-tick.C
	}
}

// eventsLeft counts the snapshotted events still in the table.
func (f *fixture) eventsLeft() int {
	return f.count(`SELECT count(*) FROM events e JOIN chaos_expect x ON x.id = e.id`)
}
