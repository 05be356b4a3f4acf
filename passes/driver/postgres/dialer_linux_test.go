package postgres

import (
	"context"
	"net"
	"testing"

	"github.com/uptrace/bun/driver/pgdriver"
	"golang.org/x/sys/unix"

	"github.com/retentionkit/retention/passes/driver"
)

// The cluster dialer's sockets carry the keepalive and user-timeout settings, read back
// from the kernel.
func TestClusterDialerSetsTheSocketOptions(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			_, _ = c.Read(make([]byte, 1))
		}
	}()
	for _, c := range []struct {
		name                              string
		o                                 driver.DialerOptions
		user, keepalive, idle, intvl, cnt int
	}{
		{"short", driver.DialerOptions{UserTimeout: 7e9, KeepaliveIdle: 4e9, KeepaliveInterval: 1e9, KeepaliveCount: 3}, 7000, 1, 4, 1, 3},
		{"custom", driver.DialerOptions{UserTimeout: 2500e6, KeepaliveIdle: 9e9, KeepaliveInterval: 2e9, KeepaliveCount: 5}, 2500, 1, 9, 2, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			var conf pgdriver.Config
			clusterDialer(c.o)(&conf)
			conn, err := conf.Dialer(context.Background(), "tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			raw, err := conn.(*net.TCPConn).SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			_ = raw.Control(func(fd uintptr) {
				for name, opt := range map[string][2]int{
					"user": {unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT}, "keepalive": {unix.SOL_SOCKET, unix.SO_KEEPALIVE},
					"idle": {unix.IPPROTO_TCP, unix.TCP_KEEPIDLE}, "intvl": {unix.IPPROTO_TCP, unix.TCP_KEEPINTVL}, "cnt": {unix.IPPROTO_TCP, unix.TCP_KEEPCNT},
				} {
					v, err := unix.GetsockoptInt(int(fd), opt[0], opt[1])
					if err != nil {
						t.Error(err)
					}
					got[name] = v
				}
			})
			want := map[string]int{"user": c.user, "keepalive": c.keepalive, "idle": c.idle, "intvl": c.intvl, "cnt": c.cnt}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %d, want %d", k, got[k], v)
				}
			}
		})
	}
}
