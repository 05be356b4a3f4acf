package ledger_test

import (
	"testing"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/dbtest"
)

// eachDB runs f on every database the ledger lives on: dbtest.Each's PostgreSQL and
// SQLite, and MySQL/MariaDB (TEST_MYSQL_URL; skipped when unset). It is the ledger's own
// rather than dbtest.Each's, because the rest of the repository's tests do not run on
// MySQL yet.
func eachDB(t *testing.T, f func(t *testing.T, db *bun.DB)) {
	t.Helper()
	dbtest.Each(t, f)
	t.Run("mysql", func(t *testing.T) { f(t, dbtest.MySQL(t)) })
}
