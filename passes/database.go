package passes

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/uptrace/bun"
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
// that it answers. A PostgreSQL DSN may be a URL or libpq's key=value pairs (see
// CheckDSN). A SQLite file database gets WAL, a busy timeout, foreign keys and
// immediate transactions, so a sweep and the application's own writers wait for each
// other instead of failing (a DSN that sets any of these itself keeps its own); an
// in-memory one gets a single connection, since each connection would otherwise see a
// database of its own. No error from Open holds the DSN's password.
func Open(ctx context.Context, driver, dsn string) (*bun.DB, error) {
	return open(ctx, driver, dsn, false)
}

// OpenExisting is Open for a caller that must leave no trace, such as a configuration
// check: a SQLite file must already exist (Open would create it) and is opened
// read-only. A PostgreSQL database is opened as by Open, which never creates one.
func OpenExisting(ctx context.Context, driver, dsn string) (*bun.DB, error) {
	return open(ctx, driver, dsn, true)
}

// OpenOptions tune how OpenWith opens a database. The zero value opens as Open does.
type OpenOptions struct {
	// Cluster, when set, gives every PostgreSQL connection of the pool TCP keepalives and
	// a TCP user timeout on the client side (Linux; elsewhere keepalives only), from the
	// same settings SweepConnOptions gives the server side, so a member whose database
	// went silent fails its statements within that bound instead of waiting on the
	// socket. A node turns it on in cluster mode; it is refused for SQLite.
	Cluster *SweepConnOptions
	// NoReadTimeout lifts the driver's read timeout (10 s unless the DSN sets
	// read_timeout), for a pool whose statements wait on purpose, such as the delete
	// slots' blocking queue lock. Use it with Cluster, so a dead server is still noticed.
	NoReadTimeout bool
}

// OpenWith is Open with options; see OpenOptions.
func OpenWith(ctx context.Context, driver, dsn string, o OpenOptions) (*bun.DB, error) {
	if driver != DriverPostgres && (o.Cluster != nil || o.NoReadTimeout) {
		return nil, fmt.Errorf("%w: the database driver is %q", ErrClusterUnsupported, driver)
	}
	var extra []pgdriver.Option
	if o.Cluster != nil {
		extra = append(extra, clusterDialer(*o.Cluster))
	}
	if o.NoReadTimeout {
		extra = append(extra, pgdriver.WithReadTimeout(0))
	}
	return open(ctx, driver, dsn, false, extra...)
}

func open(ctx context.Context, driver, dsn string, existing bool, extra ...pgdriver.Option) (*bun.DB, error) {
	var db *bun.DB
	switch driver {
	case DriverPostgres:
		conn, err := postgresConnector(dsn, extra...)
		if err != nil {
			return nil, err
		}
		db = bun.NewDB(sql.OpenDB(conn), pgdialect.New())
	case DriverSQLite:
		if err := checkSQLitePath(dsn, existing); err != nil {
			return nil, err
		}
		sqldb, err := sql.Open(sqliteshim.ShimName, sqliteDSN(dsn, existing))
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
		return nil, fmt.Errorf("connect to %s database: %s", driver, RedactText(err.Error(), dsn))
	}
	return db, nil
}

// CheckDSN reports whether dsn is usable for driver without connecting: a PostgreSQL
// DSN parses (URL or key=value form) with values the driver can use; a SQLite file's
// directory exists. Its errors wrap ErrBadDSN and never hold the password.
func CheckDSN(driver, dsn string) error {
	switch driver {
	case DriverPostgres:
		_, err := postgresConnector(dsn)
		return err
	case DriverSQLite:
		return checkSQLitePath(dsn, false)
	}
	return fmt.Errorf("database driver %q: want %q or %q", driver, DriverPostgres, DriverSQLite)
}

// checkSQLitePath refuses a file database whose directory is missing (SQLite would
// report it as "out of memory"), and, when existing is set, one whose file is missing.
func checkSQLitePath(dsn string, existing bool) error {
	if isMemory(dsn) {
		return nil
	}
	path := sqlitePath(dsn)
	if path == "" {
		return badDSN("the SQLite DSN names no file")
	}
	dir := filepath.Dir(path)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return badDSN("the directory %s of the SQLite database does not exist", dir)
	}
	if existing {
		if _, err := os.Stat(path); err != nil {
			return badDSN("the SQLite database %s does not exist", path)
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
	return unescape(s)
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
