package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/driver/mysql"
)

// TestBinlogStatementRefusedAtStartup runs on a server that writes its binary log by
// statement (TEST_MYSQL_BINLOG_URL, a DSN without a database whose user may create
// one and set binlog_format; e.g. a private mariadbd started with --log-bin
// --binlog-format=STATEMENT). There InnoDB refuses the node's READ COMMITTED deletes
// (error 1665), and startup refuses the pass naming database.dsn; a DSN that sets
// binlog_format=ROW, or REPEATABLE-READ, passes startup and its sweep deletes.
func TestBinlogStatementRefusedAtStartup(t *testing.T) {
	base := os.Getenv("TEST_MYSQL_BINLOG_URL")
	if base == "" && os.Getenv("CI") == "true" {
		t.Fatal("TEST_MYSQL_BINLOG_URL is not set (CI=true: .ci/run starts a statement-binlog MariaDB for this test)")
	}
	if base == "" {
		t.Skip("TEST_MYSQL_BINLOG_URL is not set: no server with binlog_format=STATEMENT to refuse (e.g. a mariadbd started with --log-bin --binlog-format=STATEMENT)")
	}
	ctx := context.Background()
	cfg, err := gomysql.ParseDSN(base)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("rt_mysql_binlog_%08x", rand.Uint32())
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP DATABASE "+name) })
	var format string
	if err := admin.QueryRowContext(ctx, "SELECT @@global.binlog_format").Scan(&format); err != nil || format != "STATEMENT" {
		t.Fatalf("TEST_MYSQL_BINLOG_URL's server logs by %q (%v); want STATEMENT", format, err)
	}
	for _, stmt := range []string{
		"CREATE TABLE " + name + ".events (id BIGINT PRIMARY KEY, at DATETIME(6) NOT NULL, KEY (at, id))",
		"INSERT INTO " + name + ".events VALUES (1, '2026-01-01'), (2, '2026-01-02'), (3, '2026-01-03')",
	} {
		if _, err := admin.ExecContext(ctx, stmt); err != nil { // the server's default isolation: REPEATABLE READ
			t.Fatal(err)
		}
	}
	cutoff := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	open := func(params string) *passes.Table {
		t.Helper()
		c := *cfg
		c.DBName = name
		db, err := mysql.Driver{}.Open(ctx, c.FormatDSN()+params, driver.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		tbl, err := passes.NewTable(db, "events", passes.TableSpec{Table: "events", Key: "id", Timestamp: "at"})
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	sweep := func(tbl *passes.Table) (int, error) {
		p, err := tbl.Factory()(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return p.PurgeBatch(ctx, 1, cutoff)
	}

	refused := open("")
	res := refused.ValidateStartup(ctx)
	if !res.Failed() || !strings.Contains(res.Message(), `pass "events": database.dsn: the server writes its binary log by statement`) {
		t.Fatalf("startup under binlog_format=STATEMENT at READ COMMITTED: %q; want refused naming database.dsn", res.Message())
	}
	// What the refusal spares: every delete fails.
	if _, err := sweep(refused); err == nil || !strings.Contains(err.Error(), "1665") {
		t.Fatalf("a batch at READ COMMITTED under statement logging: %v; want InnoDB's error 1665", err)
	}
	for _, params := range []string{"?binlog_format=ROW", "?tx_isolation='REPEATABLE-READ'"} {
		tbl := open(params)
		if res := tbl.ValidateStartup(ctx); res.Failed() {
			t.Fatalf("DSN %s: startup refused: %s", params, res.Message())
		}
		if n, err := sweep(tbl); err != nil || n != 1 {
			t.Fatalf("DSN %s: batch deleted %d, %v; want 1", params, n, err)
		}
	}
}
