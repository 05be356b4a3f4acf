package mysql_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/driver/mysql"
	"github.com/retentionkit/retention/passes/ledger"
)

// TestClientFoundRowsIgnored: a DSN with clientFoundRows=true would make the server
// count a row an upsert or update matched but left as it was as affected, so the
// quarantine would count a row it already holds as a new one; Open turns the flag off,
// and the counts are the server's changed rows whatever the DSN says.
func TestClientFoundRowsIgnored(t *testing.T) {
	ctx := context.Background()
	db := openMySQL(t, "")
	var name string
	if err := db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	own, err := mysql.Driver{}.Open(ctx, strings.TrimSuffix(baseURL(t), "/")+"/"+name+"?clientFoundRows=true", driver.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if _, err := own.ExecContext(ctx, "CREATE TABLE kept (id BIGINT PRIMARY KEY, v INT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := own.ExecContext(ctx, "INSERT INTO kept VALUES (1, 1)"); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{"UPDATE kept SET v = 1 WHERE id = 1", "INSERT INTO kept VALUES (1, 1) ON DUPLICATE KEY UPDATE id = id"} {
		res, err := own.ExecContext(ctx, stmt)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 0 {
			t.Errorf("%s on a row it leaves as it is: %d rows affected (%v); want 0, the rows changed", stmt, n, err)
		}
	}

	if _, err := ledger.Migrate(ctx, own, "rt_"); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.New(own, "rt_")
	if err != nil {
		t.Fatal(err)
	}
	q := l.Quarantine(nil)
	row := &passes.RowError{Key: []any{int64(7)}, Err: errors.New("violates foreign key")}
	for i, want := range []bool{true, false, false} {
		entered, err := q.Hold(ctx, "orders", row)
		if err != nil {
			t.Fatal(err)
		}
		if entered != want {
			t.Fatalf("hold %d: entered %v, want %v (a row already held is not new)", i+1, entered, want)
		}
	}
	rows, err := l.QuarantinedRows(ctx, "orders")
	if err != nil || len(rows) != 1 || rows[0].Attempts != 3 {
		t.Fatalf("quarantine = %+v, %v; want one row with 3 attempts", rows, err)
	}
}
