package passes

import (
	"time"

	"github.com/retentionkit/retention/passes/driver"
)

// clientKeepalive resolves o into the dialer options of the client side of a connection,
// defaults filled in; a setting left to the server (negative) is off on our side too.
func (o SweepConnOptions) clientKeepalive() driver.DialerOptions {
	var idle, interval, user time.Duration
	var count int
	pick := func(d, def time.Duration) time.Duration {
		switch {
		case d == 0:
			return def
		case d < 0:
			return 0
		}
		return d
	}
	idle, interval, user = pick(o.KeepalivesIdle, DefaultKeepalivesIdle), pick(o.KeepalivesInterval, DefaultKeepalivesInterval), pick(o.UserTimeout, DefaultUserTimeout)
	switch count = o.KeepalivesCount; {
	case count == 0:
		count = DefaultKeepalivesCount
	case count < 0:
		count = 0
	}
	return driver.DialerOptions{KeepaliveIdle: idle, KeepaliveInterval: interval, KeepaliveCount: count, UserTimeout: user}
}
