package driver

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// userTimeoutControl sets TCP_USER_TIMEOUT on a new socket: how long data we sent may
// stay unacknowledged before the kernel gives up on the connection.
func userTimeoutControl(d time.Duration) func(network, address string, c syscall.RawConn) error {
	if d <= 0 {
		return nil
	}
	return func(network, _ string, c syscall.RawConn) error {
		if network != "tcp" && network != "tcp4" && network != "tcp6" {
			return nil
		}
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d.Milliseconds()))
		})
		if err != nil {
			return err
		}
		return serr
	}
}
