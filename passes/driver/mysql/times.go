package mysql

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// naiveType is MySQL's column type of wall times without a zone.
const naiveType = "datetime"

// Cutoff rounds at up to the column's fractional precision (DATETIME(p), TIMESTAMP(p):
// whole seconds for p 0, microseconds for 6 or a column of unknown type), so the
// cutoff is a value the column could hold and a stored time compares below it exactly
// when it is before at, however the server converts a more precise literal for the
// comparison or the index range (MySQL rounds a fraction it stores, MariaDB truncates
// it). A TIMESTAMP column holds instants, compared in the session's time zone, which
// Open sets to '+00:00': the cutoff goes in UTC. A DATETIME column holds wall time: the
// cutoff goes as the wall time in the column's zone, as text the server reads as a
// DATETIME.
func (Driver) Cutoff(at time.Time, column string, naive *time.Location) (any, any) {
	tick := precisionTick(column)
	at = at.Add(tick - time.Nanosecond).Truncate(tick)
	if naive != nil {
		return at.In(naive).Format("2006-01-02 15:04:05.999999"), nil
	}
	return at.UTC(), nil
}

// precisionTick is the smallest step of a time column of type column ("datetime(3)":
// a millisecond; "timestamp": a second): 10^-p seconds for a precision p, a microsecond
// for a type without one that is not DATETIME or TIMESTAMP, or not known.
func precisionTick(column string) time.Duration {
	base, rest, ok := strings.Cut(column, "(")
	if base != naiveType && base != "timestamp" {
		return time.Microsecond
	}
	p := 0
	if ok {
		n, err := strconv.Atoi(strings.TrimSuffix(rest, ")"))
		if err != nil || n < 0 || n > 6 {
			return time.Microsecond
		}
		p = n
	}
	tick := time.Second
	for range p {
		tick /= 10
	}
	return tick
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
