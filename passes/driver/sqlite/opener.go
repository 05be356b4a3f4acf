package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/retentionkit/retention/passes/driver"
)

// Open opens the SQLite database dsn names and pings it. A file database gets WAL, a
// busy timeout, foreign keys and immediate transactions, so a sweep and the
// application's own writers wait for each other instead of failing (a DSN that sets any
// of these itself keeps its own); an in-memory one gets a single connection, since each
// connection would otherwise see a database of its own. With o.Existing the file must
// exist and is opened read-only. Network options are refused: there is no server.
func (d Driver) Open(ctx context.Context, dsn string, o driver.OpenOptions) (*bun.DB, error) {
	if o.Dialer != nil || o.NoReadTimeout {
		return nil, fmt.Errorf("%s: network connection options: %w", Name, driver.ErrUnsupported)
	}
	if err := checkSQLitePath(dsn, o.Existing); err != nil {
		return nil, err
	}
	sqldb, err := sql.Open(sqliteshim.ShimName, sqliteDSN(dsn, o.Existing))
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %s", d.RedactText(err.Error(), dsn))
	}
	if isMemory(dsn) {
		sqldb.SetMaxOpenConns(1)
	}
	db := bun.NewDB(sqldb, sqlitedialect.New())
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to %s database: %s", Name, d.RedactText(err.Error(), dsn))
	}
	return db, nil
}

// CheckDSN checks that a file database's directory exists; an in-memory one always does.
func (Driver) CheckDSN(dsn string) error { return checkSQLitePath(dsn, false) }

// checkSQLitePath refuses a file database whose directory is missing (SQLite would
// report it as "out of memory"), and, when existing is set, one whose file is missing.
func checkSQLitePath(dsn string, existing bool) error {
	if isMemory(dsn) {
		return nil
	}
	path := sqlitePath(dsn)
	if path == "" {
		return driver.BadDSN("the SQLite DSN names no file")
	}
	dir := filepath.Dir(path)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return driver.BadDSN("the directory %s of the SQLite database does not exist", dir)
	}
	if existing {
		if _, err := os.Stat(path); err != nil {
			return driver.BadDSN("the SQLite database %s does not exist", path)
		}
	}
	return nil
}

// sqlitePath is the file a SQLite DSN names ("app.db", "file:app.db?...").
func sqlitePath(dsn string) string {
	s, isURI := strings.CutPrefix(strings.TrimSpace(dsn), "file:")
	if !isURI {
		s, _, _ = strings.Cut(s, "?")
		return s
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	if strings.HasPrefix(s, "//") { // file:///abs/path or file://localhost/abs/path
		s = strings.TrimPrefix(s[2:], "localhost")
	}
	return driver.Unescape(s)
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

// sqliteReadOnly are the settings of a file opened by OpenExisting, which also gets
// mode=ro whatever its DSN says: waiting for locks, and deferred transactions (an
// immediate one would ask for the write lock).
var sqliteReadOnly = []struct{ name, param string }{
	{"busy_timeout", "_pragma=busy_timeout(10000)"},
	{"_txlock", "_txlock=deferred"},
}

// sqliteDSN adds sqliteDefaults (sqliteReadOnly and mode=ro for an existing-only open)
// to a file DSN, keeping whatever else it sets itself.
func sqliteDSN(dsn string, existing bool) string {
	if isMemory(dsn) {
		return dsn
	}
	if !strings.HasPrefix(dsn, "file:") {
		path, query, hasQuery := strings.Cut(dsn, "?")
		dsn = "file:" + uriPath.Replace(path)
		if hasQuery {
			dsn += "?" + query
		}
	}
	defaults := sqliteDefaults
	if existing {
		dsn, defaults = readOnlyDSN(dsn), sqliteReadOnly
	}
	for _, d := range defaults {
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

// uriPath escapes the characters a plain file path may hold that mean something in a
// file: URI, so "data #1/app.db" opens that file and not "data " (a '?' still starts the
// parameters, as it always has: "app.db?_pragma=...").
var uriPath = strings.NewReplacer("%", "%25", "#", "%23")

// readOnlyDSN replaces any mode parameter of a file DSN by mode=ro.
func readOnlyDSN(dsn string) string {
	path, query, _ := strings.Cut(dsn, "?")
	params := []string{"mode=ro"}
	for _, kv := range strings.Split(query, "&") {
		if kv != "" && !strings.HasPrefix(kv, "mode=") {
			params = append(params, kv)
		}
	}
	return path + "?" + strings.Join(params, "&")
}
