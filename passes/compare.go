package passes

import (
	"bytes"
	"cmp"
	"fmt"
	"time"
)

// compareCandidates orders two rows by (timestamp, key), as the database sorted them.
func compareCandidates(a, b candidate) int {
	if c := compareValues(a.ts, b.ts); c != 0 {
		return c
	}
	for i := range min(len(a.key), len(b.key)) {
		if c := compareValues(a.key[i], b.key[i]); c != 0 {
			return c
		}
	}
	return 0
}

// compareValues compares two values scanned from one column, so they share a type.
func compareValues(a, b any) int {
	switch x := a.(type) {
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y)
		}
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y)
		case float64:
			return cmp.Compare(float64(x), y)
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return cmp.Compare(x, y)
		case int64:
			return cmp.Compare(x, float64(y))
		}
	case string:
		if y, ok := b.(string); ok {
			return cmp.Compare(x, y)
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y)
		}
	}
	return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b))
}
