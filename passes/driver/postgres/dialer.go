package postgres

import (
	"context"
	"net"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/retentionkit/retention/passes/driver"
)

// clusterDialer puts o on our end of every connection (driver.DialerOptions.NetDialer),
// so a member whose database went silent sees its statements fail within that bound
// instead of waiting on the socket, and stops rather than hanging with its sweep.
func clusterDialer(o driver.DialerOptions) pgdriver.Option {
	d := o.NetDialer()
	return func(c *pgdriver.Config) {
		c.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}
	}
}
