package mysql_test

import (
	"context"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/driver/mysql"
)

// class is a lock class for these tests (retention's slot class).
const class int32 = 0x72746e02

// A lock's name is made from the database's name, so two databases on one server
// (GET_LOCK's names are the server's) never share a lock, and it stays within
// GET_LOCK's 64 characters for the longest database name; the server computes the name
// lockName does.
func TestLockNamesArePerDatabase(t *testing.T) {
	for _, db := range []string{"a", strings.Repeat("d", 64)} {
		if n := len(mysql.LockName(db, -1, -1)); n > 64 {
			t.Errorf("the lock name of database %q is %d characters, over 64", db, n)
		}
	}
	if mysql.LockName("orders", 1, 2) == mysql.LockName("Orders", 1, 2) {
		t.Error("databases whose names differ only in case share a lock name (MariaDB compares lock names without case)")
	}
	ctx := context.Background()
	one, two := dbtest.MySQL(t), dbtest.MySQL(t)
	var name, computed string
	if err := one.QueryRowContext(ctx, "SELECT DATABASE(), "+mysql.LockNameSQL(class, 7)).Scan(&name, &computed); err != nil {
		t.Fatal(err)
	}
	if want := mysql.LockName(name, class, 7); computed != want {
		t.Fatalf("the server's lock name %q, lockName's %q", computed, want)
	}
	d := mysql.Driver{}
	c1, err := one.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := two.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, ok, err := d.TrySessionLock(ctx, c1, driver.LockSession{}, class, 7); err != nil || !ok {
		t.Fatalf("first database: %v, %v", ok, err)
	}
	if _, ok, err := d.TrySessionLock(ctx, c2, driver.LockSession{}, class, 7); err != nil || !ok {
		t.Fatalf("the same (class, key) in a second database on the server was denied: %v, %v", ok, err)
	}
	if n, err := d.LocksHeld(ctx, two, class, []int32{7}); err != nil || n != 1 {
		t.Fatalf("LocksHeld in the second database: %d, %v; want its own lock only", n, err)
	}
}

// CheckServer passes an ordinary MariaDB/MySQL database (no Galera, a stable session,
// a current database) and refuses a connection with no current database.
func TestCheckServer(t *testing.T) {
	ctx := context.Background()
	db := dbtest.MySQL(t)
	if err := (mysql.Driver{}).CheckServer(ctx, db); err != nil {
		t.Fatalf("CheckServer: %v", err)
	}
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS rt_mysql_mysqlcluster_nodb"); err != nil {
		t.Fatal(err)
	}
	// A session whose current database is dropped has none.
	if _, err := c.ExecContext(ctx, "USE rt_mysql_mysqlcluster_nodb"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "DROP DATABASE rt_mysql_mysqlcluster_nodb"); err != nil {
		t.Fatal(err)
	}
	if err := (mysql.Driver{}).CheckServer(ctx, c); err == nil || !strings.Contains(err.Error(), "no current database") {
		t.Fatalf("CheckServer with no current database: %v", err)
	}
}

func TestClientAddr(t *testing.T) {
	for in, want := range map[string]string{"": "", "localhost": "", "10.0.0.5:43122": "10.0.0.5", "[::1]:5000": "::1", "::1:5000": "::1", "db-host": "db-host"} {
		if got := mysql.ClientAddr(in); got != want {
			t.Errorf("mysql.ClientAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
