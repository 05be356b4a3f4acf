package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/driver/mysql"
	"github.com/retentionkit/retention/passes/passtest"
)

// dbPrefix starts the name of every database these tests create, so they never touch
// another's.
const dbPrefix = "rt_mysql_"

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
	// so the ledger, quarantine and quarantined-key behaviours run on MySQL. MySQL has
	// session locks (GET_LOCK), but the driver offers none yet, so the suite holds it to
	// refusing them (NoSessionLocks) until cluster mode on MySQL is built.
	passtest.RunConformance(t, passtest.Target{Name: mysql.Name, Open: func(t testing.TB) *passtest.DB { return openMySQL(t, "") },
		OpenInZone: openMySQL, NoSessionLocks: true})
}

// openMySQL creates a fresh database and opens it the way a node does, through the
// driver's Open, so the suite runs with the session settings the driver promises; a zone
// sets every session's time_zone to it instead of the driver's UTC, as a DSN may (named
// zones need the server's time zone tables: .ci/run loads them).
func openMySQL(t testing.TB, zone string) *passtest.DB {
	t.Helper()
	base := os.Getenv("TEST_MYSQL_URL")
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("TEST_MYSQL_URL is not set (CI=true: the MySQL conformance suite must run)")
		}
		t.Skip("TEST_MYSQL_URL is not set: no MySQL/MariaDB test (e.g. TEST_MYSQL_URL='root@tcp(127.0.0.1:3306)/')")
	}
	cfg, err := gomysql.ParseDSN(base)
	if err != nil {
		t.Fatalf("TEST_MYSQL_URL: %v", err)
	}
	name := fmt.Sprintf("%s%08x", dbPrefix, rand.Uint32())
	ctx := context.Background()
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		t.Fatalf("create database %s: %s", name, mysql.Driver{}.RedactText(err.Error(), base))
	}
	t.Cleanup(func() {
		if a, err := sql.Open("mysql", cfg.FormatDSN()); err == nil {
			_, _ = a.ExecContext(context.Background(), "DROP DATABASE IF EXISTS `"+name+"`")
			_ = a.Close()
		}
	})
	cfg.DBName = name
	if zone != "" {
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params["time_zone"] = "'" + zone + "'"
	}
	db, err := mysql.Driver{}.Open(ctx, cfg.FormatDSN(), driver.OpenOptions{})
	if err != nil {
		t.Fatalf("open database %s: %v", name, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return &passtest.DB{DB: db, Driver: mysql.Name, Types: mysqlTypes, KeepRow: keepRow}
}

// keepRow is a trigger that signals on the delete of row id of table. The driver sends
// it as one statement, so its body's semicolons need no client DELIMITER.
func keepRow(table string, id int64) []string {
	return []string{fmt.Sprintf("CREATE TRIGGER keep_%[1]s BEFORE DELETE ON %[1]s FOR EACH ROW BEGIN IF OLD.id = %[2]d THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'row %[2]d is kept'; END IF; END", table, id)}
}
