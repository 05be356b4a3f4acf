// Package mysql is the MySQL and MariaDB driver of retention: the SQL, catalog reads,
// session settings, cancellation and error classes of InnoDB behind
// passes/driver.Driver. It needs MySQL 8.0 or MariaDB 10.6 and later, the first
// releases with FOR UPDATE SKIP LOCKED, and refuses older servers when it opens.
package mysql

import (
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/retentionkit/retention/passes/driver"
)

// Name is the database.driver value that selects MySQL or MariaDB.
const Name = "mysql"

// Driver is the MySQL and MariaDB driver. Its zero value is ready to use: what differs
// between the two servers is read from the server when it matters, never kept here.
type Driver struct{}

var _ driver.Driver = Driver{}

// Name returns "mysql".
func (Driver) Name() string { return Name }

// Owns reports whether db speaks MySQL's dialect (MariaDB's included).
func (Driver) Owns(db bun.IDB) bool { return db.Dialect().Name() == dialect.MySQL }
