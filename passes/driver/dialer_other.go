//go:build !linux

package driver

import (
	"syscall"
	"time"
)

// userTimeoutControl does nothing where TCP_USER_TIMEOUT is not available: there the
// server's own tcp_user_timeout and keepalives still free the locks of a silent member.
func userTimeoutControl(time.Duration) func(network, address string, c syscall.RawConn) error {
	return nil
}
