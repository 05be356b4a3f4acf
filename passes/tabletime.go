package passes

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// tableLayout is what a sweep reads about the table's columns before its first batch.
type tableLayout struct {
	// keyTypes is the database's type of each key column (PostgreSQL; "" on SQLite).
	keyTypes []string
	// tsType is the timestamp column's type (PostgreSQL; "" on SQLite).
	tsType string
	// zone is where a naive timestamp's wall time is read.
	zone *time.Location
}

// naive reports whether the timestamp column holds wall time without a zone.
func (l *tableLayout) naive() bool { return l.tsType == "timestamp without time zone" }

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

// readLayout reads the key and timestamp columns' types (on PostgreSQL: SQLite has no
// column types to speak of) and resolves the timestamp zone.
func (t *Table) readLayout(ctx context.Context, db bun.IDB) (*tableLayout, error) {
	lay := &tableLayout{keyTypes: make([]string, len(t.key)), zone: time.UTC}
	if t.spec.TimestampZone != "" {
		zone, err := time.LoadLocation(t.spec.TimestampZone)
		if err != nil {
			return nil, fmt.Errorf("timestamp_zone: %w", err)
		}
		lay.zone = zone
	}
	if !t.postgres {
		return lay, nil
	}
	types, err := columnTypes(ctx, db, t.spec.Table)
	if err != nil {
		return nil, fmt.Errorf("column types of %s: %w", t.spec.Table, err)
	}
	for i, k := range t.key {
		lay.keyTypes[i] = types[k]
	}
	lay.tsType = types[t.spec.Timestamp]
	if err := t.naiveZoneRefusal(ctx, db, lay.tsType); err != nil {
		return nil, err
	}
	return lay, nil
}

// columnTypes maps each column of a PostgreSQL table to its type's name.
func columnTypes(ctx context.Context, db bun.IDB, table string) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, db.NewRaw(`SELECT a.attname, format_type(a.atttypid, NULL) FROM pg_attribute a
		WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped`, regclass(table)).String())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	types := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, err
		}
		types[name] = typ
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(types) == 0 {
		return nil, fmt.Errorf("no such table: %s", table)
	}
	return types, nil
}

// cutoff is the sweep's cutoff in the timestamp column's own form.
type cutoff struct {
	// value is compared with the column (on SQLite, with its normalised text).
	value any
	// bound, on SQLite's text timestamps only, is a text every expired row's raw text is
	// below: it lets the index narrow the rows before the exact comparison.
	bound any
}

// sqliteInstant is the text SQLite's strftime writes for an instant, in UTC to the
// millisecond whatever offset the stored text carries.
const sqliteInstant = "2006-01-02 15:04:05.000"

// maxOffset is the largest offset from UTC a stored SQLite text timestamp can carry.
const maxOffset = 14 * time.Hour

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
	if !t.postgres {
		// strftime rounds a stored time to the millisecond; with the cutoff rounded
		// down, a row at or after the cutoff never compares below it.
		return cutoff{
			value: at.Truncate(time.Millisecond).Format(sqliteInstant),
			bound: at.Add(maxOffset + time.Second).Format(time.DateTime),
		}
	}
	at = at.Add(time.Microsecond - time.Nanosecond).Truncate(time.Microsecond)
	if lay.naive() {
		return cutoff{value: at.In(lay.zone).Format("2006-01-02 15:04:05.999999")}
	}
	return cutoff{value: at}
}

// expired is the condition that a row's timestamp is before the cutoff. SQLite text
// timestamps may carry any offset, so their raw text does not sort as time does; they
// are compared as instants (strftime normalises them to UTC), after an index-friendly
// range on the raw text that every expired row falls in. A text SQLite cannot read as a
// time normalises to NULL and is never expired.
func (t *Table) expired(cut cutoff) schema.QueryAppender {
	col := t.col(t.spec.Timestamp)
	if cut.bound == nil {
		return bun.SafeQuery("? < ?", col, cut.value)
	}
	return bun.SafeQuery("? < ? AND strftime('%Y-%m-%d %H:%M:%f', ?) < ?", col, cut.bound, col, cut.value)
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
	if !t.postgres && (t.spec.TimestampFormat == "" || t.spec.TimestampFormat == TimestampNative) {
		return bun.SafeQuery("min(strftime('%Y-%m-%d %H:%M:%f', ?))", col)
	}
	return bun.SafeQuery("min(?)", col)
}

// timeOf converts a stored timestamp (as oldestExpr reads it) back to a time.
func (t *Table) timeOf(raw any, lay *tableLayout) (time.Time, bool, error) {
	switch v := raw.(type) {
	case nil:
		return time.Time{}, false, nil
	case time.Time:
		if lay.naive() {
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
		at, err := time.Parse(sqliteInstant, v)
		return at, err == nil, err
	case []byte:
		at, err := time.Parse(sqliteInstant, string(v))
		return at, err == nil, err
	}
	return time.Time{}, false, fmt.Errorf("pass %q: timestamp of type %T", t.name, raw)
}
