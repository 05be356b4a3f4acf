package mysql

import (
	"context"
	"net"

	"github.com/retentionkit/retention/passes/driver"
)

// clusterDial dials as go-sql-driver would, with o on our end of the socket
// (driver.DialerOptions.NetDialer): a member whose server went silent sees its
// statements, and a slot's wait in line, fail within that bound instead of hanging on
// the socket. go-sql-driver turns keepalives on for every TCP connection but leaves
// their timing to the kernel (two hours on Linux); this sets it.
func clusterDial(o driver.DialerOptions) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := o.NetDialer()
	return d.DialContext
}
