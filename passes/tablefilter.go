package passes

import (
	"reflect"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// filterValueOK reports whether v can stand in a filter's value list: a single value
// of a type the SQL formatter writes as a literal, or nil for NULL. A list or a map (a
// YAML `in: [[a]]`, say) would otherwise reach the formatter and fail at every sweep.
func filterValueOK(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, time.Time:
		return true
	}
	return false
}

// valueKind says what a value that is not a single one is, in the configuration's
// terms rather than Go's: a list or a mapping (what YAML can give), or some other value.
func valueKind(v any) string {
	switch reflect.ValueOf(v).Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map:
		return "a mapping"
	}
	return "a value of another kind"
}

// condition is the filter as SQL over the column col. SQL's IN never matches NULL, so a
// nil value becomes its own `col IS NULL`: `(col IN (...) OR col IS NULL)`.
func (f *Filter) condition(col schema.QueryAppender) schema.QueryAppender {
	var values []any
	null := false
	for _, v := range f.In {
		if v == nil {
			null = true
			continue
		}
		values = append(values, v)
	}
	switch {
	case !null:
		return bun.SafeQuery("? IN (?)", col, bun.List(values))
	case len(values) == 0:
		return bun.SafeQuery("? IS NULL", col)
	}
	return bun.SafeQuery("(? IN (?) OR ? IS NULL)", col, bun.List(values), col)
}
