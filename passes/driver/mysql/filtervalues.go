package mysql

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// numericTypes are the column types MySQL compares with a string by converting the
// string to a number. The conversion never fails: 'done' becomes 0 and '3abc' 3, with
// only a warning, so a filter value such a column cannot hold would match the rows
// holding that number instead of failing (PostgreSQL refuses it at startup). BOOLEAN is
// tinyint(1) here, so 'maybe' on a boolean column would select the false rows.
var numericTypes = map[string]bool{
	"tinyint": true, "smallint": true, "mediumint": true, "int": true, "integer": true, "bigint": true,
	"decimal": true, "numeric": true, "float": true, "double": true, "real": true, "bit": true, "year": true,
}

// filterValuesUnheld returns the filter column's type and the filter's string values
// that are not numbers when that type is numeric, none otherwise. Other types convert a bad string to NULL
// or compare it as text, which matches no row the user did not name, so only numbers
// need the check. It is done in Go, not by the server: the server's conversion is the
// lenient one being guarded against.
func filterValuesUnheld(ctx context.Context, db bun.IDB, p driver.SweepPlan) (typ string, unheld []string, err error) {
	if p.FilterColumn == "" || len(p.FilterValues) == 0 {
		return "", nil, nil
	}
	types, err := Driver{}.ColumnTypes(ctx, db, p.Table)
	if err != nil {
		return "", nil, err
	}
	typ = types[p.FilterColumn]
	if !numericTypes[typ] {
		return typ, nil, nil
	}
	for _, v := range p.FilterValues {
		if s, ok := v.(string); ok && !isNumber(s) {
			unheld = append(unheld, s)
		}
	}
	return typ, unheld, nil
}

// isNumber reports whether s is a finite decimal number as a config would write one.
func isNumber(s string) bool {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && !strings.ContainsAny(s, "xXpP_")
}
