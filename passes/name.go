package passes

import (
	"hash/fnv"
	"reflect"
	"time"
)

// NameFor returns the name a pass of type T registers under by default: its package path
// and type name ("github.com/acme/audit.LogPass"), which is unique in a binary and the
// same on every node. A pointer type is named after the type it points to.
func NameFor[T any]() string {
	t := reflect.TypeFor[T]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

// StaggerOffset returns how long after start the first sweep of the named pass waits:
// the 64-bit FNV-1a hash of the name's UTF-8 bytes modulo max, in nanoseconds. A hash,
// not a random draw, because what matters is that two passes differ, and that every node
// and every restart puts a pass at the same place in the window. A max of zero or less
// gives zero: every pass starts at once.
func StaggerOffset(name string, max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return time.Duration(h.Sum64() % uint64(max))
}
