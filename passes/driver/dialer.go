package driver

import (
	"net"
	"time"
)

// NetDialer returns a dialer that puts o on our end of every connection it opens: TCP
// keepalives and a TCP user timeout, so a member whose database went silent (a dead
// server host, a cut network) sees its statements fail within that bound instead of
// waiting on the socket. Every network driver's cluster pool dials with it, so the
// client side of a lock-holding connection is the same whatever the database.
func (o DialerOptions) NetDialer() *net.Dialer {
	return &net.Dialer{
		Timeout:         5 * time.Second,
		KeepAliveConfig: net.KeepAliveConfig{Enable: o.KeepaliveIdle > 0, Idle: o.KeepaliveIdle, Interval: o.KeepaliveInterval, Count: o.KeepaliveCount},
		Control:         userTimeoutControl(o.UserTimeout),
	}
}
