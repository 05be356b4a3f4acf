package ledger

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"
)

// Migrated is what one MigrateTables call did to the database: the migrations it
// applied and the tables under the prefix that did not exist before it ran, so that a
// node creating its ledger in a user's database can say so, naming what it created.
type Migrated struct {
	Applied []string
	Created []string
}

// MigrateTables runs Migrate and reports the tables it created, listed from the
// database's catalog before and after (bun's bookkeeping tables included, since they are
// tables in the user's database too). A call that applied nothing reports no tables, so
// of two nodes starting together only the one that did the work claims it.
func MigrateTables(ctx context.Context, db *bun.DB, prefix string) (Migrated, error) {
	if err := CheckPrefix(prefix); err != nil {
		return Migrated{}, err
	}
	before, err := tablesUnder(ctx, db, prefix)
	if err != nil {
		return Migrated{}, err
	}
	applied, err := Migrate(ctx, db, prefix)
	if err != nil || len(applied) == 0 {
		return Migrated{Applied: applied}, err
	}
	after, err := tablesUnder(ctx, db, prefix)
	if err != nil {
		return Migrated{Applied: applied}, err
	}
	m := Migrated{Applied: applied}
	for _, t := range after {
		if !slices.Contains(before, t) {
			m.Created = append(m.Created, t)
		}
	}
	return m, nil
}

// tablesUnder lists the tables whose names start with prefix, compared without case
// since PostgreSQL folds unquoted names to lower case: in the current schema on
// PostgreSQL, in the main database on SQLite. The list is sorted.
func tablesUnder(ctx context.Context, db *bun.DB, prefix string) ([]string, error) {
	d, err := driverOf(db)
	if err != nil {
		return nil, err
	}
	q := d.LedgerTablesQuery()
	var names []string
	if err := db.NewRaw(q).Scan(ctx, &names); err != nil {
		return nil, fmt.Errorf("ledger: list tables: %w", err)
	}
	var under []string
	for _, n := range names {
		if len(n) >= len(prefix) && strings.EqualFold(n[:len(prefix)], prefix) {
			under = append(under, n)
		}
	}
	slices.Sort(under)
	return under, nil
}

// HasTable reports whether the ledger's table name (without the prefix, "quarantine")
// exists, so a read-only command on a ledger not migrated yet (a dry run before the
// first `run` or `migrate`) can read it as empty instead of failing.
func (l *Ledger) HasTable(ctx context.Context, name string) (bool, error) {
	full := l.table(name)
	under, err := tablesUnder(ctx, l.db, full)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(under, func(t string) bool { return strings.EqualFold(t, full) }), nil
}
