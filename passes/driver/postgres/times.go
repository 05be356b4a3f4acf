package postgres

import (
	"context"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// naiveType is PostgreSQL's column type of wall times without a zone.
const naiveType = "timestamp without time zone"

// Cutoff rounds at up to the microsecond, the column's precision, so a stored time
// compares below it only when it is before at; a naive column gets the wall time in its
// zone as text, which the server reads as the column's type.
func (Driver) Cutoff(at time.Time, _ string, naive *time.Location) (any, any) {
	at = at.Add(time.Microsecond - time.Nanosecond).Truncate(time.Microsecond)
	if naive != nil {
		return at.In(naive).Format("2006-01-02 15:04:05.999999"), nil
	}
	return at, nil
}

// Expired compares the column with the cutoff directly: the types order as time does.
func (Driver) Expired(col schema.QueryAppender, value, _ any) schema.QueryAppender {
	return bun.SafeQuery("? < ?", col, value)
}

// Oldest is the column's minimum.
func (Driver) Oldest(col schema.QueryAppender) schema.QueryAppender {
	return bun.SafeQuery("min(?)", col)
}

// ParseInstant reads the server's text form of a timestamp; pgdriver decodes
// timestamps itself, so this only serves a value that reached Go as text.
func (Driver) ParseInstant(s string) (time.Time, error) {
	return time.Parse("2006-01-02 15:04:05.999999999", s)
}

// NaiveType is "timestamp without time zone".
func (Driver) NaiveType() string { return naiveType }

// TimestampTypes are the time types and the numeric types a unix timestamp may have.
func (Driver) TimestampTypes() (native, unix []string) {
	return []string{"timestamp with time zone", naiveType, "date"},
		[]string{"bigint", "integer", "smallint", "numeric", "double precision", "real"}
}

// ServerZone is the session's TimeZone setting.
func (Driver) ServerZone(ctx context.Context, db bun.IDB) (string, error) {
	var zone string
	err := db.NewRaw("SELECT current_setting('TimeZone')").Scan(ctx, &zone)
	return zone, err
}
