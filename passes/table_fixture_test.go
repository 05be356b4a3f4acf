package passes_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

// cutoffT is the cutoff the table tests sweep at.
var cutoffT = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// fixture is the audit schema of the example configuration in docs/config.md, under a prefix unique to
// the test, on one database.
type fixture struct {
	t      *testing.T
	db     *bun.DB
	p      string // table name prefix
	format passes.TimestampFormat
}

func newFixture(t *testing.T, db *bun.DB, format passes.TimestampFormat) *fixture {
	t.Helper()
	f := &fixture{t: t, db: db, p: newFixturePrefix(), format: format}
	tsType := nativeTimestampType(t, db)
	if format == passes.TimestampUnixSeconds || format == passes.TimestampUnixMillis {
		tsType = "BIGINT"
	}
	stmts := []string{
		`CREATE TABLE {p}audit_log (id BIGINT PRIMARY KEY, occurred_at ` + tsType + ` NOT NULL, state TEXT NOT NULL DEFAULT 'done')`,
		`CREATE INDEX {p}audit_log_ts ON {p}audit_log (occurred_at, id)`,
		`CREATE TABLE {p}audit_attachment (id BIGINT PRIMARY KEY, audit_log_id BIGINT NOT NULL REFERENCES {p}audit_log (id))`,
		`CREATE TABLE {p}attachment_blob (id BIGINT PRIMARY KEY, attachment_id BIGINT NOT NULL REFERENCES {p}audit_attachment (id))`,
		`CREATE TABLE {p}audit_review (id BIGINT PRIMARY KEY, audit_log_id BIGINT REFERENCES {p}audit_log (id))`,
		`CREATE TABLE {p}legal_hold (id BIGINT PRIMARY KEY, audit_log_id BIGINT NOT NULL REFERENCES {p}audit_log (id))`,
		`CREATE TABLE {p}unlisted (id BIGINT PRIMARY KEY, audit_log_id BIGINT NOT NULL REFERENCES {p}audit_log (id))`,
	}
	for _, s := range stmts {
		f.exec(s)
	}
	t.Cleanup(func() {
		for _, table := range []string{"unlisted", "legal_hold", "audit_review", "attachment_blob", "audit_attachment", "audit_log"} {
			_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+f.p+table)
		}
	})
	return f
}

func (f *fixture) exec(query string, args ...any) {
	f.t.Helper()
	q := replacePrefix(query, f.p)
	if _, err := f.db.ExecContext(context.Background(), q, args...); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
}

func replacePrefix(q, p string) string {
	out := []byte{}
	for i := 0; i < len(q); i++ {
		if i+3 <= len(q) && q[i:i+3] == "{p}" {
			out = append(out, p...)
			i += 2
			continue
		}
		out = append(out, q[i])
	}
	return string(out)
}

// ts is how the fixture stores at in its timestamp column.
func (f *fixture) ts(at time.Time) any {
	switch f.format {
	case passes.TimestampUnixSeconds:
		return at.Unix()
	case passes.TimestampUnixMillis:
		return at.UnixMilli()
	}
	return at
}

func (f *fixture) log(id int, at time.Time, state string) {
	f.exec("INSERT INTO {p}audit_log (id, occurred_at, state) VALUES (?, ?, ?)", id, f.ts(at), state)
}

// spec is the config example's declaration of the audit pass.
func (f *fixture) spec() passes.TableSpec {
	return passes.TableSpec{
		Table: f.p + "audit_log", Key: "id", Timestamp: "occurred_at", TimestampFormat: f.format,
		Filter: &passes.Filter{Column: "state", In: []any{"done", "failed"}},
		Children: []passes.ChildSpec{
			{Table: f.p + "audit_attachment", ForeignKey: "audit_log_id", Children: []passes.ChildSpec{
				{Table: f.p + "attachment_blob", ForeignKey: "attachment_id"},
			}},
			{Table: f.p + "audit_review", ForeignKey: "audit_log_id", OnDelete: passes.OnDeleteSetNull},
			{Table: f.p + "legal_hold", ForeignKey: "audit_log_id", OnDelete: passes.OnDeleteBlock},
		},
	}
}

func (f *fixture) table(spec passes.TableSpec) *passes.Table {
	f.t.Helper()
	tbl, err := passes.NewTable(f.db, "audit-log", spec)
	if err != nil {
		f.t.Fatal(err)
	}
	return tbl
}

// newFixturePrefix returns a table name prefix unique to a test, so tests sharing the
// PostgreSQL database never see each other's tables.
func newFixturePrefix() string { return fmt.Sprintf("t%08x_", rand.Uint32()) }

// nativeTimestampType is the column type the fixture gives a native timestamp: the
// first type db's driver accepts for one, or TEXT on a database whose columns have no
// types to check (SQLite keeps an instant as text).
func nativeTimestampType(t *testing.T, db *bun.DB) string {
	t.Helper()
	d, err := passes.DriverFor(db)
	if err != nil {
		t.Fatal(err)
	}
	if native, _ := d.TimestampTypes(); len(native) > 0 {
		return native[0]
	}
	return "TEXT"
}
