package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Opener opens a database from the DSN a config file gives, the one place a driver's
// connection settings are chosen.
type Opener interface {
	// Open returns a handle on dsn that has answered a ping. Its errors never hold the
	// DSN's secrets; a DSN that cannot be used as written wraps ErrBadDSN, options the
	// database cannot honour wrap ErrUnsupported.
	Open(ctx context.Context, dsn string, o OpenOptions) (*bun.DB, error)
	// CheckDSN reports whether dsn is usable without connecting (it parses, its values
	// are ones the driver takes, a file's directory exists), for a configuration check.
	// Its errors wrap ErrBadDSN and never hold a secret.
	CheckDSN(dsn string) error
}

// OpenOptions tune Open. The zero value opens a database for a node's ordinary use.
type OpenOptions struct {
	// Existing opens for a caller that must leave no trace (a configuration check): a
	// database that would be created is refused, and an embedded one is read-only.
	Existing bool
	// Dialer, when set, gives every network connection of the pool keepalives and a
	// user timeout, so a silent server fails statements within that bound.
	Dialer *DialerOptions
	// NoReadTimeout lifts the client's read timeout, for a pool whose statements wait on
	// purpose (a blocking queue lock). Use it with Dialer so a dead server is noticed.
	NoReadTimeout bool
}

// DialerOptions are the client side of a connection's liveness checks, every value
// resolved (zero turns one off).
type DialerOptions struct {
	KeepaliveIdle     time.Duration
	KeepaliveInterval time.Duration
	KeepaliveCount    int
	UserTimeout       time.Duration
}

// ErrBadDSN is a connection string that cannot be used as written: it does not parse,
// sets a parameter to a value it cannot take, or names a file or directory that does
// not exist. Its messages never quote the connection string, which may hold a password;
// they name the part or the parameter at fault.
var ErrBadDSN = errors.New("bad database DSN")

// ErrUnsupported is an open option the database cannot honour (network liveness
// settings for an embedded database).
var ErrUnsupported = errors.New("not supported by this database driver")

// BadDSN returns an error wrapping ErrBadDSN with a message naming what is wrong.
func BadDSN(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadDSN, fmt.Sprintf(format, args...))
}
