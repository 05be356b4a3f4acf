package mysql

import (
	"strings"
	"testing"
)

// binlog.refusal refuses exactly statement logging that is on for the session at an
// isolation below REPEATABLE READ, where InnoDB refuses every write (error 1665), and
// says which DSN parameters mend it.
func TestBinlogRefusal(t *testing.T) {
	tests := []struct {
		name    string
		b       binlog
		refused bool
	}{
		{"statement, read committed", binlog{logBin: true, sqlLogBin: true, format: "STATEMENT", isolation: "READ-COMMITTED"}, true},
		{"statement, read uncommitted", binlog{logBin: true, sqlLogBin: true, format: "STATEMENT", isolation: "READ-UNCOMMITTED"}, true},
		{"statement, repeatable read (the DSN chose it)", binlog{logBin: true, sqlLogBin: true, format: "STATEMENT", isolation: "REPEATABLE-READ"}, false},
		{"row (the DSN or the server chose it)", binlog{logBin: true, sqlLogBin: true, format: "ROW", isolation: "READ-COMMITTED"}, false},
		{"mixed, MariaDB's default", binlog{logBin: true, sqlLogBin: true, format: "MIXED", isolation: "READ-COMMITTED"}, false},
		{"statement, binary log off", binlog{logBin: false, sqlLogBin: true, format: "STATEMENT", isolation: "READ-COMMITTED"}, false},
		{"statement, this session not logged", binlog{logBin: true, sqlLogBin: false, format: "STATEMENT", isolation: "READ-COMMITTED"}, false},
	}
	for _, tc := range tests {
		got := tc.b.refusal()
		if (got != "") != tc.refused {
			t.Errorf("%s: refusal %q; refused want %v", tc.name, got, tc.refused)
		}
		if got != "" && (!strings.Contains(got, "binlog_format=ROW") || !strings.Contains(got, "REPEATABLE-READ") || !strings.Contains(got, "1665")) {
			t.Errorf("%s: refusal %q does not name the error and both mends", tc.name, got)
		}
	}
}
