package passes

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes/driver"
)

// naiveZoneRefusal returns, for a column of the driver's NaiveType (PostgreSQL's
// timestamp without time zone) with no
// timestamp_zone, the refusal to sweep it when the session's TimeZone is not UTC all
// year: the application writing through such a session stores its local wall time,
// which read as UTC would expire up to the zone's offset early. A deletion tool does
// not guess whose wall time the column holds, so the operator says it (one of the two
// lines the message gives). nil when the column has a zone, the zone is given, or the
// session is in UTC.
func (t *Table) naiveZoneRefusal(ctx context.Context, db bun.IDB, tsType string) error {
	if tsType == "" || driver.BaseType(tsType) != t.drv.NaiveType() || t.spec.TimestampZone != "" {
		return nil
	}
	zone, err := t.drv.ServerZone(ctx, db)
	if err != nil {
		return fmt.Errorf("reading the server's TimeZone for %s.%s: %w", t.spec.Table, t.spec.Timestamp, err)
	}
	if isUTC(zone) {
		return nil
	}
	msg := fmt.Sprintf("timestamp %s.%s is a timestamp without time zone and the server's TimeZone is %s, "+
		"so its values may be UTC or %s wall time and reading them wrongly deletes rows early; "+
		"say which with timestamp_zone: UTC or timestamp_zone: %s", t.spec.Table, t.spec.Timestamp, zone, zone, zone)
	return core.NewValidationErrorMessage(msg, map[string][]string{"timestamp_zone": {msg}})
}

// isUTC reports whether a PostgreSQL TimeZone setting is UTC all year round.
func isUTC(zone string) bool {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return false
	}
	year := time.Now().Year()
	for _, m := range []time.Month{time.January, time.July} {
		if _, off := time.Date(year, m, 1, 0, 0, 0, 0, loc).Zone(); off != 0 {
			return false
		}
	}
	return true
}
