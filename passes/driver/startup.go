package driver

import (
	"context"

	"github.com/uptrace/bun"
)

// Startup is what a database refuses of a table pass before its first batch, beyond the
// checks every database shares (passes' ValidateStartup): a promise this database
// cannot keep for this table or this server, said at startup rather than discovered by
// a failing batch. PostgreSQL and SQLite refuse nothing here.
type Startup interface {
	// CheckSweep returns why this database will not sweep p, one Refusal per reason,
	// none when it will. err is a check the database could not answer (the host may
	// retry it), not a refusal.
	CheckSweep(ctx context.Context, db bun.IDB, p SweepPlan) (refusals []Refusal, err error)
}

// SweepPlan is what a table pass will sweep, as its config gives it.
type SweepPlan struct {
	// Table is the swept table, unquoted, optionally qualified.
	Table string
	// Timestamp is the column compared with the cutoff.
	Timestamp string
	// FilterColumn is the column of the pass's filter, "" without one: an index on
	// (FilterColumn, Timestamp) serves its candidate reads as well as one on Timestamp.
	FilterColumn string
}

// Refusal is one reason a database will not sweep a pass: the config field a user
// changes to fix it (a pass's "timestamp", "database.dsn") and why, in words that
// say what would go wrong.
type Refusal struct {
	Field  string
	Reason string
}
