package driver

import (
	"context"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// Times is how a native (not unix) timestamp column is compared with the cutoff. The
// promise: a row is expired exactly when its time is before the cutoff, never a row at
// or after it, whatever precision or zone the column stores. PostgreSQL compares the
// column's own type, rounding the cutoff up to the microsecond; a naive column (without
// a zone) holds wall time in a known zone.
type Times interface {
	// Cutoff binds at for a native column: value is compared with the column, and bound,
	// when not nil, is an index-friendly bound on the raw column every expired row is
	// below. column is the column's type as ColumnTypes names it ("" when it names
	// none), its precision included; naive is the zone of a column without one, nil for
	// a column of instants.
	Cutoff(at time.Time, column string, naive *time.Location) (value, bound any)
	// Expired is the condition that native column col is before the cutoff Cutoff bound.
	Expired(col schema.QueryAppender, value, bound any) schema.QueryAppender
	// Oldest is the expression whose minimum over the expired rows is the oldest one.
	Oldest(col schema.QueryAppender) schema.QueryAppender
	// ParseInstant reads a time Oldest returned as text.
	ParseInstant(s string) (time.Time, error)
	// NaiveType is the column type of wall times without a zone, whose zone the config
	// must name when the server's is not UTC; "" when the database has none (its text
	// timestamps carry their own offset or are read as UTC).
	NaiveType() string
	// TimestampTypes are the column types a native timestamp and a unix one may have;
	// nil when the database's columns have no types to check.
	TimestampTypes() (native, unix []string)
	// ServerZone is the session's time zone.
	ServerZone(ctx context.Context, db bun.IDB) (string, error)
}
