package passtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// keysetBehaviours: batches take the expired rows oldest first, whatever their keys,
// and a composite key sweeps like a single one, the timestamp among its columns too.
func keysetBehaviours() []behaviour {
	bs := []behaviour{
		{name: "oldest first whatever the key order", run: func(t *testing.T, db *DB) { oldestFirst(t, db, nil) }},
		{name: "oldest first with a composite key", run: func(t *testing.T, db *DB) { oldestFirst(t, db, []string{"tenant", "id"}) }},
	}
	// A key that holds the timestamp is the natural key of a PostgreSQL partitioned
	// table, whose primary key must include the partition column (issue 25, item 0).
	for _, key := range [][]string{{"at", "id"}, {"id", "at"}} {
		for _, children := range []bool{false, true} {
			name := fmt.Sprintf("oldest first with the timestamp in the key (%s)", strings.Join(key, ", "))
			if children {
				name += " and a child"
			}
			bs = append(bs, behaviour{name: name, run: func(t *testing.T, db *DB) { timestampInKey(t, db, key, children) }})
		}
	}
	return bs
}

// oldestFirst sweeps batch by batch a table whose later expired keys are older rows (see
// Fixture), and checks after each batch that exactly the oldest rows are gone.
func oldestFirst(t *testing.T, db *DB, key []string) {
	tbl := Seed(t, db, Fixture{Table: "events", Key: key, Cutoff: auditCutoff, Expired: 11, Fresh: 4})
	pass, err := passes.NewTable(db.DB, "events", tbl.Spec())
	if err != nil {
		t.Fatal(err)
	}
	p := openPass(t, pass)
	const size = 3
	// Seed numbers expired rows so that the last expired key is the oldest row.
	byAge := make([]Key, len(tbl.Expired))
	for i, k := range tbl.Expired {
		byAge[len(tbl.Expired)-1-i] = k
	}
	for gone := 0; gone < len(byAge); gone += size {
		n, _ := batchOf(t, p, size) // the fixture's cutoff is auditCutoff
		want := min(size, len(byAge)-gone)
		if n != want {
			t.Fatalf("batch after %d rows: %d deleted, want %d", gone, n, want)
		}
		tbl.RequireDeleted(t, byAge[:gone+n]...)
		tbl.RequireKept(t, byAge[gone+n:]...)
	}
	tbl.RequireKept(t, tbl.Fresh...)
}

// stampedRows are the rows of timestampInKey: an id and its time in minutes from the
// cutoff. Ids do not follow time, and several rows share a time, so only the key's other
// column orders them.
var stampedRows = []struct{ id, minutes int64 }{
	{1, -3}, {2, -5}, {3, -5}, {4, -1}, {5, -9}, {6, -3}, {7, -7}, {8, -9}, {9, -2}, {10, -5},
	{11, 0}, {12, 2}, {13, 0}, {14, 1},
}

// stampedByAge are the expired ids of stampedRows in (timestamp, id) order.
var stampedByAge = []int64{5, 8, 7, 2, 3, 10, 1, 6, 9, 4}

// timestampInKey sweeps batch by batch a table whose key holds its timestamp column
// (in key's order) and checks after each batch that exactly the oldest rows are gone;
// with children, the batches take the transaction's path and a child that references
// the composite key goes with its parent.
func timestampInKey(t *testing.T, db *DB, key []string, children bool) {
	ctx := context.Background()
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	ts := db.Type("TIMESTAMPTZ")
	keys := strings.Join(key, ", ")
	exec(fmt.Sprintf("CREATE TABLE stamped (id BIGINT NOT NULL, at %s NOT NULL, PRIMARY KEY (%s))", ts, keys))
	exec("CREATE INDEX stamped_at ON stamped (at, id)")
	spec := passes.TableSpec{Table: "stamped", KeyColumns: key, Timestamp: "at"}
	if children {
		fks := strings.NewReplacer("at", "stamped_at", "id", "stamped_id").Replace(keys)
		exec(fmt.Sprintf("CREATE TABLE stamped_note (id BIGINT PRIMARY KEY, stamped_id BIGINT NOT NULL, stamped_at %s NOT NULL, FOREIGN KEY (%s) REFERENCES stamped (%s))", ts, fks, keys))
		spec.Children = []passes.ChildSpec{{Table: "stamped_note", ForeignKeyColumns: strings.Split(fks, ", ")}}
	}
	for _, r := range stampedRows {
		at := auditCutoff.Add(time.Duration(r.minutes) * time.Minute)
		exec("INSERT INTO stamped (id, at) VALUES (?, ?)", r.id, at)
		if children {
			exec("INSERT INTO stamped_note (id, stamped_id, stamped_at) VALUES (?, ?, ?)", 100+r.id, r.id, at)
		}
	}
	tbl, err := passes.NewTable(db.DB, "stamped", spec)
	if err != nil {
		t.Fatal(err)
	}
	p := openPass(t, tbl)
	const size = 3
	for gone := 0; gone < len(stampedByAge); gone += size {
		n, _ := batchOf(t, p, size)
		want := min(size, len(stampedByAge)-gone)
		if n != want {
			t.Fatalf("batch after %d rows: %d deleted, want %d", gone, n, want)
		}
		left := slices.Sorted(slices.Values(append(append([]int64{}, stampedByAge[gone+n:]...), 11, 12, 13, 14)))
		requireTableIDs(t, db, "stamped", left, fmt.Sprintf("the %d oldest rows go first, in (timestamp, id) order", gone+n))
		if children {
			requireTableIDs(t, db, "stamped_note", plus(100, left), "a child goes with its parent")
		}
	}
	if n, _ := batchOf(t, p, size); n != 0 {
		t.Fatalf("batch after every expired row: %d deleted, want 0", n)
	}
}

// requireTableIDs fails the test unless table's id column holds exactly want.
func requireTableIDs(t *testing.T, db *DB, table string, want []int64, why string) {
	t.Helper()
	var ids []int64
	if err := db.NewSelect().TableExpr(table).Column("id").Scan(context.Background(), &ids); err != nil {
		t.Fatalf("ids of %s: %v", table, err)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, want) {
		t.Fatalf("%s keeps %v, want %v: %s", table, ids, want, why)
	}
}
