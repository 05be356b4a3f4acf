// Package driver is the seam between retention and a database: everything that differs
// from one database to another is a method of Driver, implemented once per database in a
// package of its own (passes/driver/postgres, passes/driver/sqlite). The table passes and
// the run ledger hold a Driver and ask it; nothing outside the driver packages tests which
// database it is talking to. A new database is a new package that passes the conformance
// suite in passes/passtest.
package driver

import "github.com/uptrace/bun"

// Driver is what retention needs to know about one database. Its methods are grouped by
// concern in the files of this package; this declaration lists the groups.
type Driver interface {
	Batch
	Sessions
	Locks
	LockViews
	Catalog
	Times
	Hygiene
	Pace
	Startup

	// Name is the database.driver value of the config file that selects this driver
	// ("postgres", "sqlite"), also used in messages.
	Name() string
	// Owns reports whether db speaks this driver's dialect, so a handle opened elsewhere
	// (by an embedding service) finds its driver without being told.
	Owns(db bun.IDB) bool

	Opener
	Redactor
	Errors
	Ledger
}
