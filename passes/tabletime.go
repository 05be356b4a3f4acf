package passes

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/retentionkit/retention/passes/driver"
)

// tableLayout is what a sweep reads about the table's columns before its first batch.
type tableLayout struct {
	// keyTypes is the database's type of each key column ("" where the driver reports
	// no column types).
	keyTypes []string
	// tsType is the timestamp column's type ("" likewise).
	tsType string
	// naive is whether the timestamp column holds wall time without a zone (the
	// driver's NaiveType).
	naive bool
	// zone is where a naive timestamp's wall time is read.
	zone *time.Location
}

// fixKey turns what pgdriver scanned for each key column into what goes back to the
// server as the same value. pgdriver returns the text of types it does not decode (uuid,
// numeric, char) as bytes, which bun would send back as a bytea literal; as a string it
// is an untyped literal the server reads as the column's type.
func (l *tableLayout) fixKey(key []any) {
	for i, v := range key {
		if b, ok := v.([]byte); ok && i < len(l.keyTypes) && l.keyTypes[i] != "" && l.keyTypes[i] != "bytea" {
			key[i] = string(b)
		}
	}
}

// readLayout reads the key and timestamp columns' types (where the driver has column
// types to speak of) and resolves the timestamp zone.
func (t *Table) readLayout(ctx context.Context, db bun.IDB) (*tableLayout, error) {
	lay := &tableLayout{keyTypes: make([]string, len(t.key)), zone: time.UTC}
	if t.spec.TimestampZone != "" {
		zone, err := time.LoadLocation(t.spec.TimestampZone)
		if err != nil {
			return nil, fmt.Errorf("timestamp_zone: %w", err)
		}
		lay.zone = zone
	}
	types, err := t.drv.ColumnTypes(ctx, db, t.spec.Table)
	if err != nil {
		return nil, fmt.Errorf("column types of %s: %w", t.spec.Table, err)
	}
	if types == nil {
		return lay, nil
	}
	for i, k := range t.key {
		lay.keyTypes[i] = types[k]
	}
	lay.tsType = types[t.spec.Timestamp]
	lay.naive = driver.BaseType(lay.tsType) == t.drv.NaiveType()
	if err := t.naiveZoneRefusal(ctx, db, lay.tsType); err != nil {
		return nil, err
	}
	return lay, nil
}

// cutoff is the sweep's cutoff in the timestamp column's own form.
type cutoff struct {
	// value is compared with the column (on SQLite, with its normalised text).
	value any
	// bound, when the driver gives one (SQLite's text timestamps), is a value every
	// expired row's raw column is below: it lets the index narrow the rows before the
	// exact comparison.
	bound any
	// native: the column holds times, compared the driver's way (Times.Expired).
	native bool
}

// cutoff converts the cutoff to the column's representation so "stored < converted"
// holds only for stored times before the cutoff: rounded up to the column's precision
// where the comparison is exact, down where the stored value is rounded first.
func (t *Table) cutoff(at time.Time, lay *tableLayout) cutoff {
	at = at.UTC()
	switch t.spec.TimestampFormat {
	case TimestampUnixSeconds:
		return cutoff{value: ceilDiv(at.UnixNano(), int64(time.Second))}
	case TimestampUnixMillis:
		return cutoff{value: ceilDiv(at.UnixNano(), int64(time.Millisecond))}
	}
	var zone *time.Location
	if lay.naive {
		zone = lay.zone
	}
	value, bound := t.drv.Cutoff(at, lay.tsType, zone)
	return cutoff{value: value, bound: bound, native: true}
}

// expired is the condition that a row's timestamp is before the cutoff: a plain
// comparison for a unix column, the driver's for a native one (SQLite's text timestamps,
// say, may carry any offset and do not sort as time does).
func (t *Table) expired(cut cutoff) schema.QueryAppender {
	col := t.col(t.spec.Timestamp)
	if !cut.native {
		return bun.SafeQuery("? < ?", col, cut.value)
	}
	return t.drv.Expired(col, cut.value, cut.bound)
}

// native reports whether the timestamp column holds times, not unix numbers.
func (t *Table) native() bool {
	return t.spec.TimestampFormat == "" || t.spec.TimestampFormat == TimestampNative
}

func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a > 0 {
		q++
	}
	return q
}

// oldestExpr is the expression whose minimum over the expired rows is the oldest one.
func (t *Table) oldestExpr() schema.QueryAppender {
	col := t.col(t.spec.Timestamp)
	if t.native() {
		return t.drv.Oldest(col)
	}
	return bun.SafeQuery("min(?)", col)
}

// timeOf converts a stored timestamp (as oldestExpr reads it) back to a time.
func (t *Table) timeOf(raw any, lay *tableLayout) (time.Time, bool, error) {
	switch v := raw.(type) {
	case nil:
		return time.Time{}, false, nil
	case time.Time:
		if lay.naive {
			// pgdriver reads wall time as UTC; it is the zone's wall time.
			v = time.Date(v.Year(), v.Month(), v.Day(), v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), lay.zone)
		}
		return v, true, nil
	case int64:
		if t.spec.TimestampFormat == TimestampUnixMillis {
			return time.UnixMilli(v).UTC(), true, nil
		}
		return time.Unix(v, 0).UTC(), true, nil
	case string:
		at, err := t.drv.ParseInstant(v)
		return at, err == nil, err
	case []byte:
		at, err := t.drv.ParseInstant(string(v))
		return at, err == nil, err
	}
	return time.Time{}, false, fmt.Errorf("pass %q: timestamp of type %T", t.name, raw)
}
