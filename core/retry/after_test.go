package retry_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/retentionkit/retention/core/retry"
)

// throttled is a caller's own error type that implements retry.After.
type throttled struct{}

func (throttled) Error() string                     { return "throttled" }
func (throttled) RetryAfter() (time.Duration, bool) { return 7 * time.Second, true }

func TestAfterOf(t *testing.T) {
	t.Parallel()
	cause := errors.New("429")
	tests := []struct {
		name      string
		err       error
		found     bool
		delay     time.Duration
		hasDelay  bool
		unwrapsTo error
	}{
		{"delay", retry.Later(cause, 3*time.Second), true, 3 * time.Second, true, cause},
		{"zero delay is a hint", retry.Later(cause, 0), true, 0, true, cause},
		{"negative delay is zero", retry.Later(cause, -time.Second), true, 0, true, cause},
		{"no hint is not zero", retry.NotNow(cause), true, 0, false, cause},
		{"found through %w", fmt.Errorf("batch: %w", retry.Later(cause, time.Minute)), true, time.Minute, true, cause},
		{"found through errors.Join", errors.Join(errors.New("x"), retry.NotNow(cause)), true, 0, false, cause},
		{"a caller's own type", fmt.Errorf("send: %w", throttled{}), true, 7 * time.Second, true, nil},
		{"absent", errors.New("plain"), false, 0, false, nil},
		{"nil", nil, false, 0, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := retry.AfterOf(tc.err)
			if ok != tc.found {
				t.Fatalf("AfterOf found = %v, want %v", ok, tc.found)
			}
			if !ok {
				return
			}
			d, has := a.RetryAfter()
			if d != tc.delay || has != tc.hasDelay {
				t.Fatalf("RetryAfter = %v, %v; want %v, %v", d, has, tc.delay, tc.hasDelay)
			}
			if tc.unwrapsTo != nil && !errors.Is(tc.err, tc.unwrapsTo) {
				t.Fatalf("%v does not wrap its cause", tc.err)
			}
		})
	}
}

func TestAfterErrorMessage(t *testing.T) {
	t.Parallel()
	if got := retry.Later(errors.New("429"), 2*time.Second).Error(); got != "retry after 2s: 429" {
		t.Errorf("Later message = %q", got)
	}
	if got := retry.NotNow(nil).Error(); got != "retry later" {
		t.Errorf("NotNow message = %q", got)
	}
}
