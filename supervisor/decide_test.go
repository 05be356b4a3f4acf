package supervisor_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/core/retry"
	"github.com/retentionkit/retention/supervisor"
)

func TestBackoffDelay(t *testing.T) {
	t.Parallel()
	b := supervisor.Backoff{Initial: time.Second, Max: 10 * time.Second, Multiplier: 2}
	tests := []struct {
		attempt int
		want    time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {4, 8 * time.Second}, {5, 10 * time.Second}, {50, 10 * time.Second}}
	for _, tc := range tests {
		if got := b.Delay(tc.attempt); got != tc.want {
			t.Errorf("Delay(%d) = %v, want %v", tc.attempt, got, tc.want)
		}
	}
	var zero supervisor.Backoff
	if zero.Delay(1) != supervisor.DefaultInitialBackoff || zero.Delay(100) != supervisor.DefaultMaxBackoff {
		t.Errorf("zero Backoff: Delay(1) = %v, Delay(100) = %v", zero.Delay(1), zero.Delay(100))
	}
	if got := (supervisor.Backoff{Initial: time.Second, Multiplier: 3}).Delay(3); got != 9*time.Second {
		t.Errorf("multiplier 3, attempt 3 = %v", got)
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	b := supervisor.Backoff{Initial: time.Second, Max: time.Minute, Multiplier: 2}
	interval := 30 * time.Minute
	errConn := errors.New("connection reset")
	tests := []struct {
		name    string
		reason  any
		attempt int
		class   supervisor.Class
		delay   time.Duration
	}{
		{"transient uses the backoff", errConn, 3, supervisor.Transient, 4 * time.Second},
		{"deterministic waits the interval", fmt.Errorf("x: %w", core.NewValidationError(nil)), 1, supervisor.Deterministic, interval},
		{"deterministic inside a panic error waits the interval", &core.PanicError{Value: core.NewConflictError("c")}, 1, supervisor.Deterministic, interval},
		{"retry-after above the backoff", retry.Later(errConn, 20*time.Second), 1, supervisor.RetryAfter, 20 * time.Second},
		{"retry-after below the backoff", retry.Later(errConn, time.Millisecond), 2, supervisor.RetryAfter, 2 * time.Second},
		{"retry-after clamped to the maximum", retry.Later(errConn, time.Hour), 1, supervisor.RetryAfter, time.Minute},
		{"retry-after without a hint", retry.NotNow(errConn), 2, supervisor.RetryAfter, 2 * time.Second},
		{"panic error", &core.PanicError{Value: "nil map"}, 1, supervisor.Panic, time.Second},
		{"panic value that is not an error", "nil map", 2, supervisor.Panic, 2 * time.Second},
		{"drift uses the backoff", fmt.Errorf("sweep: %w", &core.SchemaDriftError{Err: errConn}), 3, supervisor.Drift, 4 * time.Second},
		{"drift is capped like the backoff", &core.SchemaDriftError{Err: errConn}, 20, supervisor.Drift, time.Minute},
		{"drift wins over a deterministic cause", &core.SchemaDriftError{Err: core.NewNotFoundError("table", "t")}, 1, supervisor.Drift, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := supervisor.Decide(tc.reason, tc.attempt, interval, b)
			if d.Class != tc.class || d.Delay != tc.delay {
				t.Fatalf("Decide = %v %v, want %v %v", d.Class, d.Delay, tc.class, tc.delay)
			}
		})
	}
}

func TestDriftIsRetriedNoLaterThanAShortInterval(t *testing.T) {
	t.Parallel()
	b := supervisor.Backoff{Initial: time.Second, Max: time.Hour, Multiplier: 2}
	if d := supervisor.Decide(&core.SchemaDriftError{Err: errors.New("gone")}, 10, 10*time.Second, b); d.Class != supervisor.Drift || d.Delay != 10*time.Second {
		t.Fatalf("Decide = %v %v, want drift after the 10s interval", d.Class, d.Delay)
	}
}
