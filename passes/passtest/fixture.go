package passtest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

// Fixture declares a table and its rows: Expired rows older than Cutoff and Fresh rows
// at or after it. Keys are generated integers that do not follow time order (expired
// and fresh rows are interleaved, and the later an expired key the older its row), so a
// pass that deletes by key instead of by time fails its assertions.
type Fixture struct {
	// Table is the table to create. It must not exist yet.
	Table string
	// Key is the key column, or the key columns in order for a composite key; empty
	// means "id". Every key column is a BIGINT; the last one numbers the rows 1, 2, ...,
	// and any before it take 1 + row%3 (a tenant, say).
	Key []string
	// Timestamp is the column compared with the cutoff; empty means "created_at".
	Timestamp string
	// Format is how Timestamp stores time; empty means passes.TimestampNative
	// (timestamptz on PostgreSQL, text on SQLite). The unix formats use a BIGINT.
	Format passes.TimestampFormat
	// Cutoff is the instant the pass under test will sweep at: a row older than it is
	// expired. For a pass run by the runtime that is the clock's now minus the
	// retention period. It and Spacing must be whole milliseconds (whole seconds for
	// passes.TimestampUnixSeconds), what every format stores exactly; truncate a wall
	// clock reading.
	Cutoff time.Time
	// Expired and Fresh count the rows on each side of Cutoff.
	Expired, Fresh int
	// Spacing is the time between neighbouring rows on each side: the newest expired row
	// is Spacing before Cutoff, the oldest fresh row is at Cutoff exactly, and so on.
	// Zero means a minute. On the wall clock a sweep's cutoff comes a little after the
	// fixture's; keep that drift under Spacing.
	Spacing time.Duration
	// Columns are extra columns, created and filled after the key and the timestamp.
	Columns []Column
}

// Column is an extra column of a Fixture.
type Column struct {
	// Name is the column's name.
	Name string
	// Type is its SQL type and constraints, as written in CREATE TABLE ("TEXT NOT NULL
	// DEFAULT 'open'", say); it must mean the same on every database the test runs on.
	Type string
	// Value gives the column's value for a row; nil leaves the column to its default.
	Value func(Row) any
}

// Row is one seeded row, as a Column's Value sees it.
type Row struct {
	Key     Key
	At      time.Time
	Expired bool
}

// Key is the value of a row's key columns, in the fixture's order.
type Key []int64

// String formats a single-column key as its value and a composite one as a tuple.
func (k Key) String() string {
	if len(k) == 1 {
		return fmt.Sprint(k[0])
	}
	parts := make([]string, len(k))
	for i, v := range k {
		parts[i] = fmt.Sprint(v)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Table is a table Seed created, with the keys of the rows it put on each side of the
// cutoff, for the assertions to compare with what is left.
type Table struct {
	// Name is the table's name.
	Name string
	// Cutoff is the fixture's cutoff.
	Cutoff time.Time
	// Expired and Fresh are the keys of the rows older than Cutoff and of the others,
	// in key order.
	Expired, Fresh []Key

	db      *DB
	fixture Fixture
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Seed creates the fixture's table (with an index on the timestamp and the key, as a
// table pass wants) on db, fills it, and drops it when the test ends. A bad fixture or
// a failing statement fails the test.
func Seed(t testing.TB, db *DB, f Fixture) *Table {
	t.Helper()
	tbl, err := seed(context.Background(), t, db, f.withDefaults())
	if err != nil {
		t.Fatalf("passtest.Seed: %v", err)
		return nil
	}
	return tbl
}

func seed(ctx context.Context, t testing.TB, db *DB, f Fixture) (*Table, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	for _, stmt := range f.ddl(db) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return nil, fmt.Errorf("table %s: %s: %w", f.Table, stmt, err)
		}
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS ?", bun.Ident(f.Table)) })
	tbl := &Table{Name: f.Table, Cutoff: f.Cutoff, db: db, fixture: f}
	rows := f.rows()
	for start := 0; start < len(rows); start += insertChunk {
		if err := tbl.insert(ctx, rows[start:min(start+insertChunk, len(rows))]); err != nil {
			return nil, fmt.Errorf("table %s: insert: %w", f.Table, err)
		}
	}
	for _, r := range rows {
		if r.Expired {
			tbl.Expired = append(tbl.Expired, r.Key)
		} else {
			tbl.Fresh = append(tbl.Fresh, r.Key)
		}
	}
	return tbl, nil
}

// insertChunk bounds the rows of one INSERT, well under every driver's parameter limit.
const insertChunk = 200

func (f Fixture) withDefaults() Fixture {
	if len(f.Key) == 0 {
		f.Key = []string{"id"}
	}
	if f.Timestamp == "" {
		f.Timestamp = "created_at"
	}
	if f.Format == "" {
		f.Format = passes.TimestampNative
	}
	if f.Spacing == 0 {
		f.Spacing = time.Minute
	}
	return f
}

func (f Fixture) check() error {
	var problems []string
	names := append(append([]string{f.Table, f.Timestamp}, f.Key...), columnNames(f.Columns)...)
	for _, n := range names {
		if !identifier.MatchString(n) {
			problems = append(problems, fmt.Sprintf("%q is not a plain identifier", n))
		}
	}
	if f.Cutoff.IsZero() {
		problems = append(problems, "Cutoff is not set")
	}
	if f.Expired < 0 || f.Fresh < 0 {
		problems = append(problems, "Expired and Fresh must not be negative")
	}
	if f.Spacing < 0 {
		problems = append(problems, "Spacing must not be negative")
	}
	unit := map[passes.TimestampFormat]time.Duration{
		passes.TimestampNative: time.Millisecond, passes.TimestampUnixSeconds: time.Second, passes.TimestampUnixMillis: time.Millisecond,
	}[f.Format]
	switch {
	case unit == 0:
		problems = append(problems, fmt.Sprintf("Format %q is not a passes.TimestampFormat", f.Format))
	case !f.Cutoff.Truncate(unit).Equal(f.Cutoff) || f.Spacing%unit != 0:
		problems = append(problems, fmt.Sprintf("Cutoff and Spacing must be whole multiples of %v, the precision of a %s timestamp, or a row at the cutoff would be stored before it", unit, f.Format))
	}
	if len(problems) > 0 {
		return fmt.Errorf("fixture %q: %s", f.Table, strings.Join(problems, "; "))
	}
	return nil
}

func columnNames(cols []Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// ddl is the fixture's CREATE TABLE and CREATE INDEX. The identifiers were checked to
// be plain, so they need no quoting.
func (f Fixture) ddl(db *DB) []string {
	tsType := db.Type("TIMESTAMPTZ")
	if f.Format != passes.TimestampNative {
		tsType = "BIGINT"
	}
	var cols []string
	for _, k := range f.Key {
		cols = append(cols, k+" BIGINT NOT NULL")
	}
	cols = append(cols, f.Timestamp+" "+tsType+" NOT NULL")
	for _, c := range f.Columns {
		cols = append(cols, strings.TrimSpace(c.Name+" "+c.Type))
	}
	keys := strings.Join(f.Key, ", ")
	return []string{
		fmt.Sprintf("CREATE TABLE %s (%s, PRIMARY KEY (%s))", f.Table, strings.Join(cols, ", "), keys),
		fmt.Sprintf("CREATE INDEX %s_%s_idx ON %s (%s, %s)", f.Table, f.Timestamp, f.Table, f.Timestamp, keys),
	}
}

// rows lays the rows out: row n (1-based) is fresh when it crosses the next multiple of
// the fresh share, so both kinds spread evenly over the keys.
func (f Fixture) rows() []Row {
	total := f.Expired + f.Fresh
	rows := make([]Row, 0, total)
	expired, fresh := 0, 0
	for n := 1; n <= total; n++ {
		r := Row{Key: f.key(n)}
		if n*f.Fresh/total > (n-1)*f.Fresh/total {
			r.At = f.Cutoff.Add(time.Duration(fresh) * f.Spacing)
			fresh++
		} else {
			expired++
			r.At = f.Cutoff.Add(-time.Duration(expired) * f.Spacing)
			r.Expired = true
		}
		rows = append(rows, r)
	}
	return rows
}

func (f Fixture) key(n int) Key {
	k := make(Key, len(f.Key))
	for i := range k {
		k[i] = int64(1 + n%3)
	}
	k[len(k)-1] = int64(n)
	return k
}

// stored is how the timestamp column holds at.
func (f Fixture) stored(at time.Time) any {
	switch f.Format {
	case passes.TimestampUnixSeconds:
		return at.Unix()
	case passes.TimestampUnixMillis:
		return at.UnixMilli()
	}
	return at.UTC()
}

func (t *Table) insert(ctx context.Context, rows []Row) error {
	f := t.fixture
	cols := append(append([]string{}, f.Key...), f.Timestamp)
	var filled []Column
	for _, c := range f.Columns {
		if c.Value != nil {
			filled = append(filled, c)
			cols = append(cols, c.Name)
		}
	}
	var args []any
	tuples := make([]string, len(rows))
	for i, r := range rows {
		for _, v := range r.Key {
			args = append(args, v)
		}
		args = append(args, f.stored(r.At))
		for _, c := range filled {
			args = append(args, c.Value(r))
		}
		tuples[i] = "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	}
	query := fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", f.Table, strings.Join(cols, ", "), strings.Join(tuples, ", "))
	_, err := t.db.ExecContext(ctx, query, args...)
	return err
}

// Spec returns a passes.TableSpec for the table: its name, key columns, timestamp and
// format. Add a Filter, Where or Children to it as the pass under test needs.
func (t *Table) Spec() passes.TableSpec {
	s := passes.TableSpec{Table: t.Name, Timestamp: t.fixture.Timestamp, TimestampFormat: t.fixture.Format}
	if len(t.fixture.Key) == 1 {
		s.Key = t.fixture.Key[0]
	} else {
		s.KeyColumns = append([]string(nil), t.fixture.Key...)
	}
	return s
}
