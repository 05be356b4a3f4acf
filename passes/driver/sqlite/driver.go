// Package sqlite is the SQLite driver of retention, the embedded default: the SQL, time
// formats, catalog reads and error classes of SQLite behind passes/driver.Driver.
package sqlite

import (
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/retentionkit/retention/passes/driver"
)

// Name is the database.driver value that selects SQLite.
const Name = "sqlite"

// Driver is the SQLite driver. Its zero value is ready to use.
type Driver struct {
	driver.NoSessionLocks // SQLite's locks are the file's, not a session's
}

var _ driver.Driver = Driver{}

// Name returns "sqlite".
func (Driver) Name() string { return Name }

// Owns reports whether db speaks SQLite.
func (Driver) Owns(db bun.IDB) bool { return db.Dialect().Name() == dialect.SQLite }
