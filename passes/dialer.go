package passes

import (
	"context"
	"net"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"
)

// clusterDialer is the client side of SweepConnOptions: TCP keepalives and a TCP user
// timeout on our end of every connection, so a member whose database went silent (a
// dead server host, a cut network) sees its statements fail within the same bound
// instead of waiting on the socket, and stops rather than hanging with its sweep.
func clusterDialer(o SweepConnOptions) pgdriver.Option {
	idle, interval, count, user := o.clientKeepalive()
	d := &net.Dialer{
		Timeout:         5 * time.Second,
		KeepAliveConfig: net.KeepAliveConfig{Enable: idle > 0, Idle: idle, Interval: interval, Count: count},
		Control:         userTimeoutControl(user),
	}
	return func(c *pgdriver.Config) {
		c.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}
	}
}

// clientKeepalive reads o's keepalive and user-timeout settings as the dialer takes them,
// defaults filled in; a setting left to the server (negative) is off on our side too.
func (o SweepConnOptions) clientKeepalive() (idle, interval time.Duration, count int, user time.Duration) {
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
	return idle, interval, count, user
}
