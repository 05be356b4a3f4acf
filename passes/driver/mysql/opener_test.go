package mysql_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/driver/mysql"
)

// Open gives every connection the settings correctness needs, and a DSN that sets one
// itself keeps its own.
func TestOpenSetsTheSession(t *testing.T) {
	db := openMySQL(t, "")
	ctx := context.Background()
	var zone, iso string
	var wait int
	if err := db.QueryRowContext(ctx, "SELECT @@session.time_zone, @@session.tx_isolation, @@session.innodb_lock_wait_timeout").Scan(&zone, &iso, &wait); err != nil {
		if !strings.Contains(err.Error(), "tx_isolation") {
			t.Fatal(err)
		}
		// MySQL 8 has only transaction_isolation.
		if err := db.QueryRowContext(ctx, "SELECT @@session.time_zone, @@session.transaction_isolation, @@session.innodb_lock_wait_timeout").Scan(&zone, &iso, &wait); err != nil {
			t.Fatal(err)
		}
	}
	if zone != "+00:00" || iso != "READ-COMMITTED" || wait != 5 {
		t.Fatalf("session: time_zone %s, isolation %s, innodb_lock_wait_timeout %d; want +00:00, READ-COMMITTED, 5", zone, iso, wait)
	}
	var name string
	if err := db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	own, err := mysql.Driver{}.Open(ctx, strings.TrimSuffix(baseURL(t), "/")+"/"+name+"?innodb_lock_wait_timeout=7", driver.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if err := own.QueryRowContext(ctx, "SELECT @@session.innodb_lock_wait_timeout").Scan(&wait); err != nil || wait != 7 {
		t.Fatalf("innodb_lock_wait_timeout = %d (%v); want the DSN's 7", wait, err)
	}
}

// baseURL is TEST_MYSQL_URL up to its database part.
func baseURL(t *testing.T) string {
	t.Helper()
	u, _, _ := strings.Cut(strings.TrimSpace(os.Getenv("TEST_MYSQL_URL")), "?")
	i := strings.LastIndexByte(u, '/')
	if i < 0 {
		t.Fatalf("TEST_MYSQL_URL %q has no '/'", u)
	}
	return u[:i+1]
}
