// Package postgres is the PostgreSQL driver of retention: the SQL, catalog reads, locks,
// cancellation and error classes of PostgreSQL behind passes/driver.Driver.
package postgres

import (
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/retentionkit/retention/passes/driver"
)

// Name is the database.driver value that selects PostgreSQL.
const Name = "postgres"

// Driver is the PostgreSQL driver. Its zero value is ready to use.
type Driver struct{}

var _ driver.Driver = Driver{}

// Name returns "postgres".
func (Driver) Name() string { return Name }

// Owns reports whether db speaks PostgreSQL.
func (Driver) Owns(db bun.IDB) bool { return db.Dialect().Name() == dialect.PG }
