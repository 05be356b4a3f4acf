package passes

import (
	"testing"

	"github.com/retentionkit/retention/passes/driver"
)

// The client side of SweepConnOptions: zero takes the defaults, negative turns a setting
// off, anything else is kept.
func TestClientKeepaliveResolvesTheDefaults(t *testing.T) {
	for _, c := range []struct {
		name string
		o    SweepConnOptions
		want driver.DialerOptions
	}{
		{"defaults", SweepConnOptions{}, driver.DialerOptions{KeepaliveIdle: DefaultKeepalivesIdle, KeepaliveInterval: DefaultKeepalivesInterval, KeepaliveCount: DefaultKeepalivesCount, UserTimeout: DefaultUserTimeout}},
		{"off", SweepConnOptions{KeepalivesIdle: -1, KeepalivesInterval: -1, KeepalivesCount: -1, UserTimeout: -1}, driver.DialerOptions{}},
		{"custom", SweepConnOptions{UserTimeout: 2500e6, KeepalivesIdle: 9e9, KeepalivesInterval: 2e9, KeepalivesCount: 5}, driver.DialerOptions{KeepaliveIdle: 9e9, KeepaliveInterval: 2e9, KeepaliveCount: 5, UserTimeout: 2500e6}},
	} {
		if got := c.o.clientKeepalive(); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
