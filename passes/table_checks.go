package passes

import (
	"context"
	"slices"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// checkConditions has the database read the where and the filter, each on its own in a
// statement that reads no row, so a where that is not an expression over the table (on
// PostgreSQL: not a boolean one), or a filter value the column's type cannot hold,
// fails at startup with the database's own message instead of at every sweep.
func (t *Table) checkConditions(ctx context.Context, fail func(string, ...any)) {
	probe := func(cond any) error {
		rows, err := t.db.NewSelect().TableExpr("?", ident(t.spec.Table)).ColumnExpr("1").Where("?", cond).Where("1 = 0").Rows(ctx)
		if err != nil {
			return err
		}
		return rows.Close()
	}
	if t.spec.Where != "" {
		if err := probe(bun.SafeQuery("(?)", bun.Safe(t.spec.Where))); err != nil {
			fail("where %s is not a condition on %s: %v", quoteForMessage(t.spec.Where), t.spec.Table, err)
		}
	}
	if f := t.spec.Filter; f != nil {
		if err := probe(f.condition(t.col(f.Column))); err != nil {
			fail("filter on %s: %v", f.Column, err)
		}
	}
}

// checkTimestamp checks the timestamp column's type against the format (on a driver
// whose columns have types), and refuses a column without a zone on a server whose
// TimeZone is not UTC when no timestamp_zone says whose wall time it holds (see
// naiveZoneRefusal).
func (t *Table) checkTimestamp(ctx context.Context, fail, warn func(string, ...any)) {
	naive := t.drv.NaiveType()
	if naive == "" && t.spec.TimestampZone != "" {
		fail("timestamp_zone applies to columns of wall time without a zone, which %s has none of; its text timestamps carry their own offset or are read as UTC", t.drv.Name())
		return
	}
	timeTypes, unixTypes := t.drv.TimestampTypes()
	if timeTypes == nil {
		return
	}
	types, err := t.drv.ColumnTypes(ctx, t.db, t.spec.Table)
	if err != nil {
		fail("column types of %s: %v", t.spec.Table, err)
		return
	}
	typ := driver.BaseType(types[t.spec.Timestamp])
	switch {
	case t.native() && !slices.Contains(timeTypes, typ):
		fail("timestamp %s.%s is of type %s; timestamp_format time needs timestamp, timestamptz or date (unix and unix_ms are for integers)", t.spec.Table, t.spec.Timestamp, typ)
	case !t.native() && !slices.Contains(unixTypes, typ):
		fail("timestamp %s.%s is of type %s; timestamp_format %s needs an integer column", t.spec.Table, t.spec.Timestamp, typ, t.spec.TimestampFormat)
	case typ != naive && t.spec.TimestampZone != "":
		warn("timestamp_zone %s is ignored: %s.%s is of type %s, which holds instants", t.spec.TimestampZone, t.spec.Table, t.spec.Timestamp, typ)
	default:
		if err := t.naiveZoneRefusal(ctx, t.db, typ); err != nil {
			fail("%v", err)
		}
	}
}

// checkDriver adds the refusals of the table's database (driver.Startup): what it will
// not sweep that another database would, each named by the field that fixes it.
func (t *Table) checkDriver(ctx context.Context, fail func(string, ...any)) {
	plan := driver.SweepPlan{Table: t.spec.Table, Timestamp: t.spec.Timestamp}
	if t.spec.Filter != nil {
		plan.FilterColumn = t.spec.Filter.Column
	}
	refusals, err := t.drv.CheckSweep(ctx, t.db, plan)
	if err != nil {
		fail("%s: %v", t.drv.Name(), err)
	}
	for _, r := range refusals {
		fail("%s: %s", r.Field, r.Reason)
	}
}
