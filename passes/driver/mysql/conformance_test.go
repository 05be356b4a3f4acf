package mysql_test

import (
	"fmt"
	"testing"

	"github.com/retentionkit/retention/passes/dbtest"
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
	// so the ledger, quarantine and quarantined-key behaviours run on MySQL. MySQL has
	// session locks (GET_LOCK), but the driver offers none yet, so the suite holds it to
	// refusing them (NoSessionLocks) until cluster mode on MySQL is built.
	passtest.RunConformance(t, passtest.Target{Name: mysql.Name, Open: func(t testing.TB) *passtest.DB { return openMySQL(t, "") },
		OpenInZone: openMySQL, NoSessionLocks: true})
}

// openMySQL is dbtest's fresh MySQL database, opened through the driver's Open as a
// node opens it (so the suite runs with the session settings the driver promises), in
// zone when one is given, with MySQL's type spellings and trigger.
func openMySQL(t testing.TB, zone string) *passtest.DB {
	t.Helper()
	return &passtest.DB{DB: dbtest.MySQLInZone(t, zone), Driver: mysql.Name, Types: mysqlTypes, KeepRow: keepRow}
}

// keepRow is a trigger that signals on the delete of row id of table. The driver sends
// it as one statement, so its body's semicolons need no client DELIMITER.
func keepRow(table string, id int64) []string {
	return []string{fmt.Sprintf("CREATE TRIGGER keep_%[1]s BEFORE DELETE ON %[1]s FOR EACH ROW BEGIN IF OLD.id = %[2]d THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'row %[2]d is kept'; END IF; END", table, id)}
}
