package mysql

import (
	"context"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// naiveType is MySQL's column type of wall times without a zone.
const naiveType = "datetime"

// Cutoff rounds at up to the microsecond, the finest precision a column stores, so a
// stored time compares below it only when it is before at. A TIMESTAMP column holds
// instants, compared in the session's time zone, which Open sets to '+00:00': the
// cutoff goes in UTC. A DATETIME column holds wall time: the cutoff goes as the wall
// time in the column's zone, as text the server reads as a DATETIME.
func (Driver) Cutoff(at time.Time, naive *time.Location) (any, any) {
	at = at.Add(time.Microsecond - time.Nanosecond).Truncate(time.Microsecond)
	if naive != nil {
		return at.In(naive).Format("2006-01-02 15:04:05.999999"), nil
	}
	return at.UTC(), nil
}

// Expired compares the column with the cutoff directly, so the index on it is used.
func (Driver) Expired(col schema.QueryAppender, value, _ any) schema.QueryAppender {
	return bun.SafeQuery("? < ?", col, value)
}

// Oldest is the column's minimum.
func (Driver) Oldest(col schema.QueryAppender) schema.QueryAppender {
	return bun.SafeQuery("MIN(?)", col)
}

// ParseInstant reads the server's text form of a timestamp; with parseTime the driver
// decodes timestamps itself, so this only serves a value that reached Go as text.
func (Driver) ParseInstant(s string) (time.Time, error) {
	return time.Parse("2006-01-02 15:04:05.999999999", s)
}

// NaiveType is "datetime".
func (Driver) NaiveType() string { return naiveType }

// TimestampTypes are the time types and the numeric types a unix timestamp may have.
func (Driver) TimestampTypes() (native, unix []string) {
	return []string{"timestamp", naiveType, "date"},
		[]string{"bigint", "int", "mediumint", "smallint", "decimal", "double", "float"}
}

// ServerZone is the session's time_zone, "UTC" for an offset of zero; SYSTEM is read
// as the server host's zone (system_time_zone).
func (Driver) ServerZone(ctx context.Context, db bun.IDB) (string, error) {
	var zone, system string
	if err := db.QueryRowContext(ctx, "SELECT @@session.time_zone, @@global.system_time_zone").Scan(&zone, &system); err != nil {
		return "", err
	}
	if zone == "SYSTEM" {
		zone = system
	}
	switch zone {
	case "+00:00", "-00:00", "+0:00", "UTC", "GMT", "Etc/UTC":
		return "UTC", nil
	}
	return zone, nil
}
