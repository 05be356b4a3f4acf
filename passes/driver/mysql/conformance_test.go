package mysql_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/driver/mysql"
	"github.com/retentionkit/retention/passes/passtest"
)

// mysqlTypes are MySQL's spellings of the types the suite writes in PostgreSQL's terms:
// an instant is a TIMESTAMP(6) (microseconds, compared in the session's UTC), a uuid
// its 36 characters, NUMERIC a DECIMAL.
var mysqlTypes = map[string]string{
	"TIMESTAMPTZ":      "TIMESTAMP(6)",
	"TIMESTAMP":        "DATETIME(6)",
	"UUID":             "CHAR(36)",
	"NUMERIC(10,2)":    "DECIMAL(10,2)",
	"DOUBLE PRECISION": "DOUBLE",
	"TEXT":             "VARCHAR(255)",
}

// TestConformance runs every table-pass behaviour on MySQL or MariaDB
// (TEST_MYSQL_URL, go-sql-driver's DSN without a database, e.g.
// root@tcp(127.0.0.1:3306)/; skipped when unset, failed under CI=true). Each behaviour
// gets a database of its own, rt_mysql_<random>, dropped when it ends.
func TestConformance(t *testing.T) {
	// The run ledger runs here too (its MySQL spellings are the driver's Ledger group),
	// so the ledger, quarantine and quarantined-key behaviours run on MySQL. Session
	// locks are GET_LOCK's, whose holders the server names by connection id and
	// address but no application name (NoLockHolderNames).
	passtest.RunConformance(t, passtest.Target{Name: mysql.Name, Open: func(t testing.TB) *passtest.DB { return openMySQL(t, "") },
		OpenInZone: openMySQL, NoLockHolderNames: true})
}

// openMySQL is dbtest's fresh MySQL database, opened through the driver's Open as a
// node opens it (so the suite runs with the session settings the driver promises), in
// zone when one is given, with MySQL's type spellings and trigger.
func openMySQL(t testing.TB, zone string) *passtest.DB {
	t.Helper()
	db := dbtest.MySQLInZone(t, zone)
	return &passtest.DB{DB: db, Driver: mysql.Name, Types: mysqlTypes, KeepRow: keepRow, Reopen: func(t testing.TB) *bun.DB { return reopen(t, db) }}
}

// reopen opens another pool on db's database through the driver, as a second member of
// a cluster holds one, closed when the test ends.
func reopen(t testing.TB, db *bun.DB) *bun.DB {
	t.Helper()
	ctx := context.Background()
	var name string
	if err := db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	cfg, err := gomysql.ParseDSN(os.Getenv("TEST_MYSQL_URL"))
	if err != nil {
		t.Fatalf("TEST_MYSQL_URL: %v", err)
	}
	cfg.DBName = name
	other, err := mysql.Driver{}.Open(ctx, cfg.FormatDSN(), driver.OpenOptions{})
	if err != nil {
		t.Fatalf("reopen %s: %v", name, err)
	}
	t.Cleanup(func() { _ = other.Close() })
	return other
}

// keepRow is a trigger that signals on the delete of row id of table. The driver sends
// it as one statement, so its body's semicolons need no client DELIMITER.
func keepRow(table string, id int64) []string {
	return []string{fmt.Sprintf("CREATE TRIGGER keep_%[1]s BEFORE DELETE ON %[1]s FOR EACH ROW BEGIN IF OLD.id = %[2]d THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'row %[2]d is kept'; END IF; END", table, id)}
}
