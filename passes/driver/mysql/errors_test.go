package mysql

import (
	"errors"
	"fmt"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/retentionkit/retention/core"
)

func serverError(number uint16, state, msg string) error {
	e := &gomysql.MySQLError{Number: number, Message: msg}
	copy(e.SQLState[:], state)
	return fmt.Errorf("delete batch: %w", e)
}

// Each server error lands in the class the batch loop acts on: retry the unit (after
// its rollback), bisect, wait for drift to be fixed, retry later, or stop.
func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want error
	}{
		{serverError(1213, "40001", "Deadlock found when trying to get lock"), core.ErrRetryUnit},
		{serverError(1205, "HY000", "Lock wait timeout exceeded"), core.ErrTransient}, // busy, never bisected into quarantine
		{serverError(1451, "23000", "Cannot delete or update a parent row"), core.ErrRowSpecific},
		{serverError(1452, "23000", "Cannot add or update a child row"), core.ErrRowSpecific},
		{serverError(1644, "45000", "held by a trigger"), core.ErrRowSpecific},
		{serverError(1146, "42S02", "Table 'shop.orders' doesn't exist"), core.ErrSchemaDrift},
		{serverError(1054, "42S22", "Unknown column 'created_at'"), core.ErrSchemaDrift},
		{serverError(1969, "70100", "max_statement_time exceeded"), core.ErrTransient},
		{serverError(1317, "70100", "Query execution was interrupted"), core.ErrTransient},
		{fmt.Errorf("batch: %w", gomysql.ErrInvalidConn), core.ErrTransient},
		{serverError(1064, "42000", "You have an error in your SQL syntax"), core.ErrFatal},
	}
	for _, tc := range tests {
		if got := (Driver{}).Classify(tc.err); !errors.Is(got, tc.want) {
			t.Errorf("Classify(%v) = %v, want class %v", tc.err, got, tc.want)
		}
	}
}

// A foreign key's refusal names the referencing table and its constraint, for the
// quarantine.
func TestCulprit(t *testing.T) {
	err := serverError(1451, "23000", "Cannot delete or update a parent row: a foreign key constraint fails "+
		"(`shop`.`invoice_lines`, CONSTRAINT `invoice_lines_ibfk_1` FOREIGN KEY (`order_id`) REFERENCES `orders` (`id`))")
	if c, tbl := (Driver{}).Culprit(err); c != "invoice_lines_ibfk_1" || tbl != "invoice_lines" {
		t.Fatalf("Culprit = %q, %q", c, tbl)
	}
}

// Servers without SKIP LOCKED are refused, with the reason; each server's isolation
// variable is named right.
func TestServerVersion(t *testing.T) {
	tests := []struct {
		text    string
		ok      bool
		isoVar  string
		mariaDB bool
	}{
		{"10.11.19-MariaDB-0+deb12u1", true, "tx_isolation", true},
		{"10.5.23-MariaDB", false, "tx_isolation", true},
		{"11.4.2-MariaDB", true, "transaction_isolation", true},
		{"8.0.36", true, "transaction_isolation", false},
		{"5.7.44-log", false, "transaction_isolation", false},
	}
	for _, tc := range tests {
		v, err := parseVersion(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.supported(); (err == nil) != tc.ok {
			t.Errorf("%s: supported() = %v, want ok %v", tc.text, err, tc.ok)
		}
		if v.isolationVariable() != tc.isoVar || v.mariaDB != tc.mariaDB {
			t.Errorf("%s: %s, MariaDB %v", tc.text, v.isolationVariable(), v.mariaDB)
		}
	}
}
