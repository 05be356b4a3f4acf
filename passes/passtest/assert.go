package passtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/uptrace/bun"
)

// Left returns the keys of the rows in the table now, in key order. A failing query
// fails the test.
func (t *Table) Left(tb testing.TB) []Key {
	tb.Helper()
	keys, err := t.left(context.Background())
	if err != nil {
		tb.Fatalf("passtest: read the keys of %s: %v", t.Name, err)
	}
	return keys
}

func (t *Table) left(ctx context.Context) ([]Key, error) {
	cols := make([]any, len(t.fixture.Key))
	for i, c := range t.fixture.Key {
		cols[i] = bun.Ident(c)
	}
	list := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
	args := append(append(append([]any{}, cols...), bun.Ident(t.Name)), cols...)
	rows, err := t.db.QueryContext(ctx, "SELECT "+list+" FROM ? ORDER BY "+list, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []Key
	for rows.Next() {
		k := make(Key, len(cols))
		dest := make([]any, len(k))
		for i := range k {
			dest[i] = &k[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// RequireKept fails the test unless every row of keys is still in the table, naming
// the ones that are gone.
func (t *Table) RequireKept(tb testing.TB, keys ...Key) {
	tb.Helper()
	left, ok := t.read(tb)
	if !ok {
		return
	}
	if gone := missing(keys, left); len(gone) > 0 {
		tb.Fatalf("%s: %d of %d rows that should be kept are gone: %s", t.Name, len(gone), len(keys), list(gone))
	}
}

// RequireDeleted fails the test unless every row of keys is gone, naming the ones that
// are still there.
func (t *Table) RequireDeleted(tb testing.TB, keys ...Key) {
	tb.Helper()
	left, ok := t.read(tb)
	if !ok {
		return
	}
	if still := present(keys, left); len(still) > 0 {
		tb.Fatalf("%s: %d of %d rows that should be deleted are still there: %s", t.Name, len(still), len(keys), list(still))
	}
}

// RequireCount fails the test unless the table holds n rows, listing the keys it holds.
func (t *Table) RequireCount(tb testing.TB, n int) {
	tb.Helper()
	left, ok := t.read(tb)
	if !ok {
		return
	}
	if len(left) != n {
		tb.Fatalf("%s: %d rows left, want %d; left: %s", t.Name, len(left), n, list(left))
	}
}

// RequireLeft fails the test unless the table holds exactly the rows of keys, naming
// the rows that are gone and the rows that should not be there.
func (t *Table) RequireLeft(tb testing.TB, keys ...Key) {
	tb.Helper()
	left, ok := t.read(tb)
	if !ok {
		return
	}
	gone, extra := missing(keys, left), missing(left, keys)
	switch {
	case len(gone) > 0 && len(extra) > 0:
		tb.Fatalf("%s: %d rows that should be kept are gone: %s; %d rows that should be deleted are still there: %s", t.Name, len(gone), list(gone), len(extra), list(extra))
	case len(gone) > 0:
		tb.Fatalf("%s: %d rows that should be kept are gone: %s", t.Name, len(gone), list(gone))
	case len(extra) > 0:
		tb.Fatalf("%s: %d rows that should be deleted are still there: %s", t.Name, len(extra), list(extra))
	}
}

// RequireSwept fails the test unless exactly the fresh rows are left: every expired
// row deleted, every fresh one kept. It is RequireLeft(tb, t.Fresh...).
func (t *Table) RequireSwept(tb testing.TB) {
	tb.Helper()
	t.RequireLeft(tb, t.Fresh...)
}

func (t *Table) read(tb testing.TB) ([]Key, bool) {
	tb.Helper()
	left, err := t.left(context.Background())
	if err != nil {
		tb.Fatalf("passtest: read the keys of %s: %v", t.Name, err)
		return nil, false
	}
	return left, true
}

// missing returns the keys of want that are not in have, in want's order.
func missing(want, have []Key) []Key { return filter(want, have, false) }

// present returns the keys of want that are in have, in want's order.
func present(want, have []Key) []Key { return filter(want, have, true) }

func filter(want, have []Key, in bool) []Key {
	set := make(map[string]bool, len(have))
	for _, k := range have {
		set[k.String()] = true
	}
	var out []Key
	for _, k := range want {
		if set[k.String()] == in {
			out = append(out, k)
		}
	}
	return out
}

// listed is how many keys a failure message names before it summarises the rest.
const listed = 20

func list(keys []Key) string {
	if len(keys) == 0 {
		return "none"
	}
	parts := make([]string, 0, min(len(keys), listed))
	for _, k := range keys[:min(len(keys), listed)] {
		parts = append(parts, k.String())
	}
	s := "keys " + strings.Join(parts, ", ")
	if len(keys) > listed {
		s += fmt.Sprintf(" and %d more", len(keys)-listed)
	}
	return s
}
