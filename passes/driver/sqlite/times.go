package sqlite

import (
	"context"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// instant is the text strftime writes for an instant: UTC to the millisecond, whatever
// offset the stored text carries.
const instant = "2006-01-02 15:04:05.000"

// maxOffset is the largest offset from UTC a stored text timestamp can carry.
const maxOffset = 14 * time.Hour

// Cutoff rounds at down to the millisecond, as strftime rounds a stored time, so a row
// at or after at never compares below it; the bound on the raw text is past every offset
// a stored text can carry, so every expired row is below it.
func (Driver) Cutoff(at time.Time, _ string, _ *time.Location) (any, any) {
	at = at.UTC()
	return at.Truncate(time.Millisecond).Format(instant), at.Add(maxOffset + time.Second).Format(time.DateTime)
}

// Expired narrows by the raw text first (the index can), then compares instants: the
// texts may carry any offset, so they do not sort as time does. A text SQLite cannot read
// as a time normalises to NULL and is never expired.
func (Driver) Expired(col schema.QueryAppender, value, bound any) schema.QueryAppender {
	return bun.SafeQuery("? < ? AND strftime('%Y-%m-%d %H:%M:%f', ?) < ?", col, bound, col, value)
}

// Oldest is the minimum of the normalised instants.
func (Driver) Oldest(col schema.QueryAppender) schema.QueryAppender {
	return bun.SafeQuery("min(strftime('%Y-%m-%d %H:%M:%f', ?))", col)
}

// ParseInstant reads what Oldest returns.
func (Driver) ParseInstant(s string) (time.Time, error) { return time.Parse(instant, s) }

// NaiveType is "": text timestamps carry their own offset or are read as UTC.
func (Driver) NaiveType() string { return "" }

// TimestampTypes is nil: a declared type does not bind a SQLite column's values.
func (Driver) TimestampTypes() (native, unix []string) { return nil, nil }

// ServerZone is UTC: SQLite's date functions work in UTC.
func (Driver) ServerZone(context.Context, bun.IDB) (string, error) { return "UTC", nil }
