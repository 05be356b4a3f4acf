package sqlite

import (
	"strings"
	"testing"
)

func TestSQLiteDSN(t *testing.T) {
	tests := []struct{ in, want string }{
		{"app.db", "file:app.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate"},
		{"file:app.db?_pragma=journal_mode(DELETE)", "file:app.db?_pragma=journal_mode(DELETE)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_txlock=immediate"},
		{"file::memory:?cache=shared", "file::memory:?cache=shared"},
		{"/data #1/50%.db?_txlock=deferred", "file:/data %231/50%25.db?_txlock=deferred&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)"},
	}
	for _, tc := range tests {
		if got := sqliteDSN(tc.in, false); got != tc.want {
			t.Errorf("sqliteDSN(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactDSN(t *testing.T) {
	const pw = "S3cretPw"
	tests := []struct{ dsn, want string }{
		{"file:app.db?_auth_user=a&_auth_pass=" + pw, "file:app.db?_auth_user=a&_auth_pass=xxxxx"},
		{"file:app.db?_pragma=key('" + pw + "')", "file:app.db?_pragma=xxxxx"},
		{"/data/app.db", "/data/app.db"},
	}
	for _, tc := range tests {
		if got := (Driver{}).RedactDSN(tc.dsn); got != tc.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
		if got := (Driver{}).RedactText("failed: "+tc.dsn, tc.dsn); strings.Contains(got, pw) {
			t.Errorf("RedactText(%q) = %q shows the secret", tc.dsn, got)
		}
	}
}
