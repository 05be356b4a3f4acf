// End-to-end test of `sweep --no-ledger`: a one-off drain that leaves the application's
// database holding only its own tables.
package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// A drain with --no-ledger deletes the expired rows and creates no table: on SQLite the
// database's tables are the same before and after; on PostgreSQL no table carries the
// ledger's prefix but the application's two.
func TestSweepNoLedgerCreatesNoLedgerTable(t *testing.T) {
	t.Parallel()
	eachDriver(t, func(t *testing.T, e *env) {
		e.seed(300)
		before := e.tables()
		cutoff := time.Now().Add(-30 * 24 * time.Hour).Unix()
		expired := fmt.Sprintf("occurred_at < %d AND state = 'done' AND id NOT IN (SELECT audit_log_id FROM %slegal_hold)", cutoff, e.prefix)
		if n := e.count(expired); n == 0 {
			t.Fatal("the seed wrote no expired row")
		}
		r := retention(t, "sweep", "--config", e.config("", ""), "--drain", "--no-ledger", "--progress", "never")
		if r.code != 0 {
			t.Fatalf("sweep --drain --no-ledger: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
		if n := e.count(expired); n != 0 {
			t.Fatalf("%d expired rows left:\n%s", n, r.stdout)
		}
		if after := e.tables(); !slices.Equal(before, after) {
			t.Fatalf("tables before the sweep %v, after %v", before, after)
		}
		if strings.Contains(r.stderr, "ledger") {
			t.Fatalf("the log speaks of the ledger:\n%s", r.stderr)
		}
	})
}

// tables lists the tables of the env's database that a sweep could have created: on
// SQLite (a file of the test's own) every one but SQLite's own, on PostgreSQL (shared by the tests) those
// with the env's prefix, in every schema.
func (e *env) tables() []string {
	e.t.Helper()
	// sqlite_stat1 and the like are SQLite's own statistics, which a sweep's ANALYZE writes
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY name`
	var args []any
	if e.driver == passes.DriverPostgres {
		q = `SELECT table_schema || '.' || table_name FROM information_schema.tables WHERE starts_with(table_name, ?) ORDER BY 1`
		args = append(args, e.prefix)
	}
	rows, err := e.db.QueryContext(context.Background(), q, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			e.t.Fatal(err)
		}
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	if len(names) == 0 {
		e.t.Fatal("no table found: the listing is wrong")
	}
	return names
}
