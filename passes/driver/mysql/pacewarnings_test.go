package mysql_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/driver/mysql"
)

// TestPaceWarningsWithoutProcess: a user without the PROCESS privilege may not read
// InnoDB's lock waits, so an adaptive pass's startup warns that it paces without the
// sessions the sweep blocks; granted PROCESS, it warns of nothing. It runs on the
// replication tests' source, whose test user may create users.
func TestPaceWarningsWithoutProcess(t *testing.T) {
	r := dbtest.MySQLReplication(t)
	ctx := context.Background()
	name := dbName(t, r.SourceDSN)
	user := fmt.Sprintf("rt_noproc_%08x", rand.Uint32())
	for _, q := range []string{
		"CREATE USER " + user + "@'127.0.0.1'",
		"GRANT ALL ON `" + name + "`.* TO " + user + "@'127.0.0.1'",
		"CREATE TABLE `" + name + "`.events (id BIGINT PRIMARY KEY, at DATETIME(6) NOT NULL, KEY (at, id))",
	} {
		if _, err := r.Source.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { _, _ = r.Source.ExecContext(context.Background(), "DROP USER IF EXISTS "+user+"@'127.0.0.1'") })
	warnings := func() []string {
		t.Helper()
		cfg, err := gomysql.ParseDSN(r.SourceDSN)
		if err != nil {
			t.Fatal(err)
		}
		cfg.User, cfg.Passwd = user, ""
		db, err := mysql.Driver{}.Open(ctx, cfg.FormatDSN(), driver.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		tbl, err := passes.NewTable(db, "events", passes.TableSpec{Table: "events", Key: "id", Timestamp: "at"})
		if err != nil {
			t.Fatal(err)
		}
		return tbl.PaceWarnings(ctx)
	}
	w := warnings()
	if len(w) != 1 || !strings.Contains(w[0], "the sessions the sweep blocks cannot be counted") || !strings.Contains(w[0], "PROCESS") {
		t.Errorf("warnings without PROCESS: %q; want one naming the blocked sessions and the privilege", w)
	}
	if _, err := r.Source.ExecContext(ctx, "GRANT PROCESS ON *.* TO "+user+"@'127.0.0.1'"); err != nil {
		t.Fatal(err)
	}
	if w := warnings(); len(w) != 0 {
		t.Errorf("warnings with PROCESS: %q; want none", w)
	}
}
