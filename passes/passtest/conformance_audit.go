package passtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// auditCutoff is the cutoff the table behaviours sweep at.
var auditCutoff = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// audit is the audit schema of the example configuration in docs/config.md: a log with
// a filtered state, a delete child with a grandchild, a set_null child, a block child
// and a table the pass is not told about. Each behaviour gets a fresh database, so the
// names need no prefix.
type audit struct {
	t      *testing.T
	db     *DB
	format passes.TimestampFormat
}

func newAudit(t *testing.T, db *DB, format passes.TimestampFormat) *audit {
	t.Helper()
	a := &audit{t: t, db: db, format: format}
	tsType := db.Type("TIMESTAMPTZ")
	if format == passes.TimestampUnixSeconds || format == passes.TimestampUnixMillis {
		tsType = "BIGINT"
	}
	for _, stmt := range []string{
		`CREATE TABLE audit_log (id BIGINT PRIMARY KEY, occurred_at ` + tsType + ` NOT NULL, state TEXT NOT NULL DEFAULT 'done')`,
		`CREATE INDEX audit_log_ts ON audit_log (occurred_at, id)`,
		`CREATE TABLE audit_attachment (id BIGINT PRIMARY KEY, audit_log_id BIGINT NOT NULL REFERENCES audit_log (id))`,
		`CREATE TABLE attachment_blob (id BIGINT PRIMARY KEY, attachment_id BIGINT NOT NULL REFERENCES audit_attachment (id))`,
		`CREATE TABLE audit_review (id BIGINT PRIMARY KEY, audit_log_id BIGINT REFERENCES audit_log (id))`,
		`CREATE TABLE legal_hold (id BIGINT PRIMARY KEY, audit_log_id BIGINT NOT NULL REFERENCES audit_log (id))`,
		`CREATE TABLE unlisted (id BIGINT PRIMARY KEY, audit_log_id BIGINT NOT NULL REFERENCES audit_log (id))`,
	} {
		a.exec(stmt)
	}
	return a
}

func (a *audit) exec(query string, args ...any) {
	a.t.Helper()
	if _, err := a.db.ExecContext(context.Background(), query, args...); err != nil {
		a.t.Fatalf("%s: %v", query, err)
	}
}

// stored is how the timestamp column holds at in the audit's format.
func (a *audit) stored(at time.Time) any {
	switch a.format {
	case passes.TimestampUnixSeconds:
		return at.Unix()
	case passes.TimestampUnixMillis:
		return at.UnixMilli()
	}
	return at
}

func (a *audit) log(id int, at time.Time, state string) {
	a.t.Helper()
	a.exec("INSERT INTO audit_log (id, occurred_at, state) VALUES (?, ?, ?)", id, a.stored(at), state)
}

// ids returns the ids of a table, sorted.
func (a *audit) ids(table string) []int64 {
	a.t.Helper()
	var ids []int64
	if err := a.db.NewSelect().TableExpr(table).Column("id").Scan(context.Background(), &ids); err != nil {
		a.t.Fatalf("ids of %s: %v", table, err)
	}
	slices.Sort(ids)
	return ids
}

// spec is the config example's declaration of the audit pass.
func (a *audit) spec() passes.TableSpec {
	return passes.TableSpec{
		Table: "audit_log", Key: "id", Timestamp: "occurred_at", TimestampFormat: a.format,
		Filter: &passes.Filter{Column: "state", In: []any{"done", "failed"}},
		Children: []passes.ChildSpec{
			{Table: "audit_attachment", ForeignKey: "audit_log_id", Children: []passes.ChildSpec{
				{Table: "attachment_blob", ForeignKey: "attachment_id"},
			}},
			{Table: "audit_review", ForeignKey: "audit_log_id", OnDelete: passes.OnDeleteSetNull},
			{Table: "legal_hold", ForeignKey: "audit_log_id", OnDelete: passes.OnDeleteBlock},
		},
	}
}

// bare is the spec without filter and children: one statement per batch.
func (a *audit) bare() passes.TableSpec {
	s := a.spec()
	s.Filter, s.Children = nil, nil
	return s
}

func (a *audit) table(spec passes.TableSpec) *passes.Table {
	a.t.Helper()
	tbl, err := passes.NewTable(a.db.DB, "audit-log", spec)
	if err != nil {
		a.t.Fatal(err)
	}
	return tbl
}

// requireIDs fails the test unless table holds exactly want, saying why it should.
func (a *audit) requireIDs(table string, want []int64, why string) {
	a.t.Helper()
	if got := a.ids(table); !slices.Equal(got, want) {
		a.t.Fatalf("%s keeps %v, want %v: %s", table, got, want, why)
	}
}

// Swept is what one sweep did, as the runtime would count it.
type Swept struct {
	// Deleted and Batches count the rows the batches deleted and the batches run.
	Deleted, Batches int
	// Skipped are the keys the batches reported skipped, in order.
	Skipped []any
}

type sweepReporter struct {
	skipped []any
	more    bool
}

func (r *sweepReporter) RowSkipped(key any, _ error) { r.skipped = append(r.skipped, key) }
func (r *sweepReporter) MoreWaiting()                { r.more = true }

// Sweep runs one sweep of tbl at cutoff the way the runtime does, batch after batch
// until one is short and no more rows wait, and fails the test on a batch's error. It
// is exported for the tests of passes that still drive a table by hand.
func Sweep(t testing.TB, tbl *passes.Table, batchSize int, cutoff time.Time) Swept {
	t.Helper()
	res, err := sweep(tbl, batchSize, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// sweep is Sweep returning its error, for callers off the test's goroutine.
func sweep(tbl *passes.Table, batchSize int, cutoff time.Time) (res Swept, err error) {
	p, err := tbl.Factory()(context.Background())
	if err != nil {
		return res, err
	}
	if c, ok := p.(passes.Closer); ok {
		defer func() { err = errors.Join(err, c.Close()) }()
	}
	for {
		r := &sweepReporter{}
		n, err := p.PurgeBatch(passes.WithBatchReporter(context.Background(), r), batchSize, cutoff)
		if err != nil {
			return res, fmt.Errorf("batch %d: %w", res.Batches+1, err)
		}
		res.Batches++
		res.Deleted += n
		res.Skipped = append(res.Skipped, r.skipped...)
		if n+len(r.skipped) < batchSize && !r.more {
			return res, nil
		}
		if res.Batches > 1000 {
			return res, errors.New("the sweep does not end")
		}
	}
}

// asInt64 reads a reported key of an integer key column, whatever integer type the
// database driver scanned it as; -1 for anything else.
func asInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	}
	return -1
}

// isDelete reports whether query is a DELETE on table, for hooks that act mid-batch.
func isDelete(query, table string) bool {
	return strings.HasPrefix(query, "DELETE") && strings.Contains(query, table)
}
