package postgres

import (
	"context"
	"net"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/retentionkit/retention/passes/driver"
)

// clusterDialer puts o on our end of every connection: TCP keepalives and a TCP user
// timeout, so a member whose database went silent (a dead server host, a cut network)
// sees its statements fail within that bound instead of waiting on the socket, and stops
// rather than hanging with its sweep.
func clusterDialer(o driver.DialerOptions) pgdriver.Option {
	idle, interval, count, user := o.KeepaliveIdle, o.KeepaliveInterval, o.KeepaliveCount, o.UserTimeout
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
