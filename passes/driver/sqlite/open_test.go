package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// Before: "out of memory (14)".
func TestOpenSQLiteInAMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	for _, dsn := range []string{filepath.Join(dir, "app.db"), "file:" + filepath.Join(dir, "app.db") + "?_pragma=busy_timeout(100)"} {
		_, err := passes.Open(context.Background(), passes.DriverSQLite, dsn)
		if !errors.Is(err, passes.ErrBadDSN) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("Open(%q): %v", dsn, err)
		}
	}
}

// Before: validating a configuration created the SQLite file it named.
func TestOpenExistingNeverCreatesASQLiteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	_, err := passes.OpenExisting(context.Background(), passes.DriverSQLite, path)
	if !errors.Is(err, passes.ErrBadDSN) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("OpenExisting on a missing file: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file exists after OpenExisting: %v", err)
	}
	db, err := passes.Open(context.Background(), passes.DriverSQLite, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(context.Background(), "CREATE TABLE t (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := passes.OpenExisting(context.Background(), passes.DriverSQLite, path+"?mode=rwc")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var n int
	if err := ro.QueryRowContext(context.Background(), "SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatalf("read: %v", err)
	}
	if _, err := ro.ExecContext(context.Background(), "INSERT INTO t (id) VALUES (1)"); err == nil {
		t.Fatal("OpenExisting's database took a write")
	}
}
