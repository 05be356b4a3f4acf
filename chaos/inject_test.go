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
	return injectEvery(every, func(ctx context.Context) int64 {
		var n int64
		if err := admin.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
			FROM pg_stat_activity WHERE datname = '`+database+`' AND backend_type = 'client backend'
			AND application_name <> '`+testApp+`' AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
			return 0
		}
		return n
	}, func() { admin.Close() })
}

// injectEvery runs inject at once and then every interval until the returned stop is
// called; stop waits for the round under way, runs done, and says how many sessions
// the rounds ended in all (inject returns its round's count).
func injectEvery(every time.Duration, inject func(ctx context.Context) int64, done func()) (stop func() int) {
	ctx, cancel := context.WithCancel(context.Background())
	var ended atomic.Int64
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			ended.Add(inject(ctx))
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() int {
		cancel()
		<-finished
		done()
		return int(ended.Load())
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
