package passes

import (
	"github.com/retentionkit/retention/passes/driver"
)

// clientKeepalive resolves o into the dialer options of the client side of a connection,
// defaults filled in as for the server side (lockSession); a setting left to the server
// (negative) is off on our side too.
func (o SweepConnOptions) clientKeepalive() driver.DialerOptions {
	s := o.lockSession()
	return driver.DialerOptions{KeepaliveIdle: s.KeepaliveIdle, KeepaliveInterval: s.KeepaliveInterval, KeepaliveCount: s.KeepaliveCount, UserTimeout: s.UserTimeout}
}
