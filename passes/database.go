package passes

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/driver/mysql"
	"github.com/retentionkit/retention/passes/driver/postgres"
	"github.com/retentionkit/retention/passes/driver/sqlite"
)

// The drivers Open knows, by their database.driver names.
const (
	DriverPostgres = postgres.Name
	DriverSQLite   = sqlite.Name
	DriverMySQL    = mysql.Name
)

// ErrBadDSN is a connection string that cannot be used as written (driver.ErrBadDSN,
// under the name callers already check).
var ErrBadDSN = driver.ErrBadDSN

// Open returns a bun database for the driver named driverName ("postgres" or "sqlite")
// and dsn, and checks that it answers; the driver chooses its connection settings (see
// its Open). No error from Open holds the DSN's password.
func Open(ctx context.Context, driverName, dsn string) (*bun.DB, error) {
	return open(ctx, driverName, dsn, driver.OpenOptions{})
}

// OpenExisting is Open for a caller that must leave no trace, such as a configuration
// check: an embedded database must already exist (Open would create it) and is opened
// read-only. A server database is opened as by Open, which never creates one.
func OpenExisting(ctx context.Context, driverName, dsn string) (*bun.DB, error) {
	return open(ctx, driverName, dsn, driver.OpenOptions{Existing: true})
}

// OpenOptions tune how OpenWith opens a database. The zero value opens as Open does.
type OpenOptions struct {
	// Cluster, when set, gives every connection of the pool TCP keepalives and a TCP
	// user timeout on the client side (Linux; elsewhere keepalives only), from the same
	// settings SweepConnOptions gives the server side, so a member whose database went
	// silent fails its statements within that bound instead of waiting on the socket. A
	// node turns it on in cluster mode; a driver without a server refuses it.
	Cluster *SweepConnOptions
	// NoReadTimeout lifts the driver's read timeout, for a pool whose statements wait on
	// purpose, such as the delete slots' blocking queue lock. Use it with Cluster, so a
	// dead server is still noticed.
	NoReadTimeout bool
}

// OpenWith is Open with options; see OpenOptions. Options the driver cannot honour are
// an ErrClusterUnsupported.
func OpenWith(ctx context.Context, driverName, dsn string, o OpenOptions) (*bun.DB, error) {
	opts := driver.OpenOptions{NoReadTimeout: o.NoReadTimeout}
	if o.Cluster != nil {
		d := o.Cluster.clientKeepalive()
		opts.Dialer = &d
	}
	db, err := open(ctx, driverName, dsn, opts)
	if errors.Is(err, driver.ErrUnsupported) {
		return nil, fmt.Errorf("%w: the database driver is %q (%w)", ErrClusterUnsupported, driverName, err)
	}
	return db, err
}

func open(ctx context.Context, driverName, dsn string, o driver.OpenOptions) (*bun.DB, error) {
	d, err := DriverNamed(driverName)
	if err != nil {
		return nil, err
	}
	return d.Open(ctx, dsn, o)
}

// CheckDSN reports whether dsn is usable for the driver named driverName without
// connecting (see the driver's CheckDSN). Its errors wrap ErrBadDSN and never hold the
// password.
func CheckDSN(driverName, dsn string) error {
	d, err := DriverNamed(driverName)
	if err != nil {
		return err
	}
	return d.CheckDSN(dsn)
}
