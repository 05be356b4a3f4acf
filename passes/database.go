package passes

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/pgdriver"
	"github.com/uptrace/bun/driver/sqliteshim"
)

// The drivers Open knows.
const (
	DriverPostgres = "postgres"
	DriverSQLite   = "sqlite"
)

// Open returns a bun database for driver ("postgres" or "sqlite") and dsn, and checks
// that it answers. A SQLite file database gets WAL, a busy timeout, foreign keys and
// immediate transactions, so a sweep and the application's own writers wait for each
// other instead of failing (a DSN that sets any of these itself keeps its own); an
// in-memory one gets a single connection, since each connection would otherwise see a
// database of its own.
func Open(ctx context.Context, driver, dsn string) (*bun.DB, error) {
	var db *bun.DB
	switch driver {
	case DriverPostgres:
		db = bun.NewDB(sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn))), pgdialect.New())
	case DriverSQLite:
		sqldb, err := sql.Open(sqliteshim.ShimName, sqliteDSN(dsn))
		if err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		if isMemory(dsn) {
			sqldb.SetMaxOpenConns(1)
		}
		db = bun.NewDB(sqldb, sqlitedialect.New())
	default:
		return nil, fmt.Errorf("database driver %q: want %q or %q", driver, DriverPostgres, DriverSQLite)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to %s database: %w", driver, err)
	}
	return db, nil
}

func isMemory(dsn string) bool {
	return strings.Contains(dsn, ":memory:") || strings.Contains(dsn, "mode=memory")
}

// sqliteDefaults are the settings a file database gets unless its DSN names them: wait
// for locks instead of failing, WAL so readers do not block the writer, enforced foreign
// keys, and immediate transactions (a batch reads, then writes: taking the write lock
// up front means two writers wait for each other instead of one failing to upgrade).
var sqliteDefaults = []struct{ name, param string }{
	{"busy_timeout", "_pragma=busy_timeout(10000)"},
	{"journal_mode", "_pragma=journal_mode(WAL)"},
	{"foreign_keys", "_pragma=foreign_keys(1)"},
	{"_txlock", "_txlock=immediate"},
}

// sqliteDSN adds sqliteDefaults to a file DSN, keeping whatever it sets itself.
func sqliteDSN(dsn string) string {
	if isMemory(dsn) {
		return dsn
	}
	if !strings.HasPrefix(dsn, "file:") {
		dsn = "file:" + dsn
	}
	for _, d := range sqliteDefaults {
		if strings.Contains(dsn, d.name) {
			continue
		}
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += sep + d.param
	}
	return dsn
}

// isPostgres reports whether db speaks PostgreSQL (anything else is treated as SQLite).
func isPostgres(db bun.IDB) bool { return db.Dialect().Name() == dialect.PG }
