// Command sqlitedemo is what `make run` starts until the node binary lands: it seeds an
// audit table in an embedded SQLite database (examples/demo/demo.db), declares it as a
// table pass with a child table, a set_null reference and a legal hold, and runs one
// paced sweep on the runtime, logging as it goes.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
)

func main() {
	path := flag.String("db", filepath.Join("examples", "demo", "demo.db"), "the SQLite database to seed and sweep")
	rows := flag.Int("rows", 20000, "audit rows to seed, 90% of them expired")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, *path, *rows); err != nil {
		fmt.Fprintln(os.Stderr, "sqlitedemo:", err)
		os.Exit(1)
	}
}

// summary is what the sweep left behind.
type summary struct {
	Deleted, Batches, AuditLeft, AttachmentsLeft, HeldLeft int
}

func run(ctx context.Context, out io.Writer, path string, rows int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	_ = os.Remove(path)
	db, err := passes.Open(ctx, passes.DriverSQLite, path)
	if err != nil {
		return err
	}
	defer db.Close()
	now := time.Now().UTC()
	if err := seed(ctx, db, rows, now); err != nil {
		return err
	}
	fmt.Fprintf(out, "seeded %d audit rows in %s (90%% older than 30 days, every 100th on legal hold)\n", rows, path)

	tbl, err := passes.NewTable(db, "audit-log", passes.TableSpec{
		Table: "audit_log", Key: "id", Timestamp: "occurred_at",
		Children: []passes.ChildSpec{
			{Table: "audit_attachment", ForeignKey: "audit_log_id"},
			{Table: "audit_review", ForeignKey: "audit_log_id", OnDelete: passes.OnDeleteSetNull},
			{Table: "legal_hold", ForeignKey: "audit_log_id", OnDelete: passes.OnDeleteBlock},
		},
	})
	if err != nil {
		return err
	}
	if res := tbl.ValidateStartup(ctx); res.Failed() {
		return fmt.Errorf("startup validation: %s", res.Message())
	}
	dry, err := tbl.DryRun(ctx, now.Add(-30*24*time.Hour))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "dry run: %d rows would go, %d are kept by a legal hold\n", dry.Eligible, dry.Blocked)

	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(30 * 24 * time.Hour)
	opts.BatchSize, opts.BatchDelay, opts.MaxStartupStagger, opts.MaxBatchesPerSweep = 1000, 20*time.Millisecond, 0, 1000
	logger := logrus.New()
	logger.SetOutput(out)
	done := make(chan actors.SweepDone, 1)
	rt := actors.New(actors.Config{Logger: logger, Observers: []actors.Observer{actors.ObserverFunc(func(e actors.Event) error {
		if d, ok := e.(actors.SweepDone); ok {
			done <- d
		}
		return nil
	})}})
	if err := rt.Register(tbl.Registration(opts)); err != nil {
		return err
	}
	if err := rt.Start(ctx); err != nil {
		return err
	}
	var d actors.SweepDone
	select {
	case d = <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := rt.Stop(ctx); err != nil {
		return err
	}
	s := summary{Deleted: d.Rows, Batches: d.Batches}
	for table, n := range map[string]*int{"audit_log": &s.AuditLeft, "audit_attachment": &s.AttachmentsLeft, "legal_hold": &s.HeldLeft} {
		count, err := db.NewSelect().TableExpr(table).Count(ctx)
		if err != nil {
			return err
		}
		*n = int(count)
	}
	fmt.Fprintf(out, "swept: %d rows deleted in %d batches (paced %v apart); left: %d audit rows, %d attachments, %d legal holds\n",
		s.Deleted, s.Batches, opts.BatchDelay, s.AuditLeft, s.AttachmentsLeft, s.HeldLeft)
	return nil
}

func seed(ctx context.Context, db *bun.DB, rows int, now time.Time) error {
	stmts := []string{
		`CREATE TABLE audit_log (id INTEGER PRIMARY KEY, occurred_at TEXT NOT NULL, action TEXT NOT NULL)`,
		`CREATE INDEX audit_log_occurred_at ON audit_log (occurred_at, id)`,
		`CREATE TABLE audit_attachment (id INTEGER PRIMARY KEY, audit_log_id INTEGER NOT NULL REFERENCES audit_log (id))`,
		`CREATE INDEX audit_attachment_log ON audit_attachment (audit_log_id)`,
		`CREATE TABLE audit_review (id INTEGER PRIMARY KEY, audit_log_id INTEGER REFERENCES audit_log (id))`,
		`CREATE INDEX audit_review_log ON audit_review (audit_log_id)`,
		`CREATE TABLE legal_hold (id INTEGER PRIMARY KEY, audit_log_id INTEGER NOT NULL REFERENCES audit_log (id))`,
		`CREATE INDEX legal_hold_log ON legal_hold (audit_log_id)`,
		// Rows are spread evenly over the last 300 days, so 90% are older than 30 days.
		fmt.Sprintf(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d)
			INSERT INTO audit_log (id, occurred_at, action)
			SELECT i, strftime('%%Y-%%m-%%d %%H:%%M:%%S', %d - (%d - i) * %d, 'unixepoch') || '+00:00', 'login' FROM s`,
			rows, now.Unix(), rows, int64(300*24*3600/rows)),
		`INSERT INTO audit_attachment (audit_log_id) SELECT id FROM audit_log WHERE id % 10 = 0`,
		`INSERT INTO audit_review (audit_log_id) SELECT id FROM audit_log WHERE id % 7 = 0`,
		`INSERT INTO legal_hold (audit_log_id) SELECT id FROM audit_log WHERE id % 100 = 0`,
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	return nil
}
