package driver

import (
	"testing"
	"time"
)

// Before: the timeout was truncated to whole milliseconds, so 1.5ms became 1ms and
// 500µs became 0, which PostgreSQL reads as no timeout.
func TestTimeoutMillisRoundsUp(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want int64
	}{
		{time.Millisecond, 1},
		{1500 * time.Microsecond, 2},
		{time.Millisecond + time.Nanosecond, 2},
		{999 * time.Microsecond, 1},
		{30 * time.Second, 30000},
	}
	for _, tc := range tests {
		if got := TimeoutMillis(tc.in); got != tc.want {
			t.Errorf("TimeoutMillis(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
