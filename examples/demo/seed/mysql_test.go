package main

import (
	"context"
	"os"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes/dbtest"
)

// TestMySQLDemoValidatesAndSweeps: the MySQL demo's configuration
// (examples/demo/retention-mysql.yaml, which make run-mysql runs) validates, passes the
// startup checks on a database the seeder wrote, and one sweep deletes every expired row
// the story lets go while the held ones (legal holds, rows export_job references)
// stay. It runs on the server TEST_MYSQL_URL names, in a database of its own.
func TestMySQLDemoValidatesAndSweeps(t *testing.T) {
	if os.Getenv("TEST_MYSQL_URL") == "" && os.Getenv("CI") != "true" {
		t.Skip("TEST_MYSQL_URL is not set: the MySQL demo is not swept (e.g. TEST_MYSQL_URL='root@tcp(127.0.0.1:3306)/')")
	}
	db := dbtest.MySQL(t)
	ctx := context.Background()
	now := time.Now().UTC()
	if err := seedMySQL(ctx, db, 20000, now); err != nil {
		t.Fatal(err)
	}
	cfg, err := gomysql.ParseDSN(os.Getenv("TEST_MYSQL_URL"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&cfg.DBName); err != nil {
		t.Fatal(err)
	}
	t.Setenv(mysqlEnv, cfg.FormatDSN())
	conf, err := config.LoadConfig("../retention-mysql.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := conf.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := node.Sweep(ctx, conf, node.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	swept := map[string]int{}
	for _, p := range res.Passes {
		swept[p.Name] = p.Rows
	}
	if swept["audit-log"] == 0 || swept["sessions"] == 0 {
		t.Fatalf("swept %v; want rows of audit-log and sessions", swept)
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	cutoff := now.Add(-30 * 24 * time.Hour).Format("2006-01-02 15:04:05")
	if n := count(`SELECT COUNT(*) FROM audit_log WHERE occurred_at < '` + cutoff + `' AND state IN ('done', 'failed')
		AND id NOT IN (SELECT audit_log_id FROM legal_hold) AND id NOT IN (SELECT audit_log_id FROM export_job)`); n != 0 {
		t.Errorf("%d expired audit rows nothing holds are left", n)
	}
	if n := count(`SELECT COUNT(*) FROM audit_log WHERE id IN (SELECT audit_log_id FROM legal_hold) OR id IN (SELECT audit_log_id FROM export_job)`); n != count(`SELECT COUNT(DISTINCT audit_log_id) FROM (SELECT audit_log_id FROM legal_hold UNION ALL SELECT audit_log_id FROM export_job) h`) {
		t.Errorf("a held audit row is gone (%d left)", n)
	}
	if n := count(`SELECT COUNT(*) FROM audit_log WHERE occurred_at >= '` + cutoff + `'`); n == 0 {
		t.Error("no recent audit row is left")
	}
}
