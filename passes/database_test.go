package passes

import (
	"context"
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

func TestOpenRefusesAnUnknownDriver(t *testing.T) {
	_, err := Open(context.Background(), "mysql", "x")
	if err == nil || !strings.Contains(err.Error(), `"mysql"`) {
		t.Fatalf("Open = %v", err)
	}
}
