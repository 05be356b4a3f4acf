package passes_test

import (
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// The sweep lock on PostgreSQL (a terminated or killed holder, the lock connection's
// settings) is tested in passes/driver/postgres (sweeplock_test.go,
// sweeplock_kill_test.go); the lock's behaviour on every database in the conformance
// suite's sweeplock area.

// waitFor polls cond until it holds, failing the test past within.
func waitFor(t *testing.T, within time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("condition not met within %v", within)
		}
		<-tick.C
	}
	return time.Since(start)
}

func TestLockKeyIsFNV32a(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint32
	}{{"", 0x811c9dc5}, {"a", 0xe40c292c}, {"foobar", 0xbf9cf968}} {
		if got := uint32(passes.LockKey(c.in)); got != c.want {
			t.Errorf("LockKey(%q) = %#x, want %#x", c.in, got, c.want)
		}
	}
}
