package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"

	"github.com/retentionkit/retention/passes/driver"
)

// lockWaitTimeout is the innodb_lock_wait_timeout (seconds) the driver sets unless the
// DSN sets one: the server's default of 50 s would hold a batch, and the rows it
// locked, that long behind an application's transaction. A batch locks with SKIP
// LOCKED and does not wait on its candidates; this bounds the waits it cannot skip
// (a child's foreign key check, a unique index), after which the unit is retried.
const lockWaitTimeout = "5"

// Open connects to the MySQL or MariaDB database dsn names (go-sql-driver's form,
// user:password@tcp(host:3306)/dbname?param=value) and pings it. Unless the DSN sets
// them itself, every connection gets what correctness needs: parseTime (timestamps
// come back as time.Time), loc=UTC, the session time_zone '+00:00' (a TIMESTAMP column
// is compared with a cutoff written in UTC), READ COMMITTED (InnoDB then takes no gap
// locks for a sweep's reads, so application inserts into the swept range do not wait)
// and a short innodb_lock_wait_timeout; clientFoundRows is always off (config says
// why). A server older than MySQL 8.0 or MariaDB 10.6
// is refused: it has no SKIP LOCKED, so two sweepers, or a sweeper and the application,
// would queue behind each other's rows. o.Dialer dials every TCP connection with its
// keepalives and user timeout (a cluster pool's, see clusterDial); o.Existing changes
// nothing, as the server never creates a database on connecting.
func (d Driver) Open(ctx context.Context, dsn string, o driver.OpenOptions) (*bun.DB, error) {
	cfg, err := config(dsn)
	if err != nil {
		return nil, err
	}
	if o.Dialer != nil {
		cfg.DialFunc = clusterDial(*o.Dialer)
	}
	if o.NoReadTimeout {
		cfg.ReadTimeout = 0
	}
	version, err := d.serverVersion(ctx, cfg, dsn)
	if err != nil {
		return nil, err
	}
	if err := version.supported(); err != nil {
		return nil, err
	}
	if !hasParam(cfg, "transaction_isolation") && !hasParam(cfg, "tx_isolation") {
		cfg.Params[version.isolationVariable()] = "'READ-COMMITTED'"
	}
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		return nil, driver.BadDSN("%s", d.RedactText(err.Error(), dsn))
	}
	db := bun.NewDB(sql.OpenDB(conn), mysqldialect.New(mysqldialect.WithTimeLocation("UTC")))
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to %s database: %s", Name, d.RedactText(err.Error(), dsn))
	}
	return db, nil
}

// CheckDSN parses dsn and applies the driver's settings to it without connecting.
func (Driver) CheckDSN(dsn string) error {
	_, err := config(dsn)
	return err
}

// config parses dsn and adds the settings Open promises where the DSN names none, and
// turns clientFoundRows off whatever the DSN says: with it the server counts a row an
// UPDATE or an upsert matched but left as it was as affected, and the ledger reads the
// affected count to tell a new quarantined row from one it already held.
func config(dsn string) (*gomysql.Config, error) {
	cfg, err := gomysql.ParseDSN(strings.TrimSpace(dsn))
	if err != nil {
		// go-sql-driver's messages name the part at fault, not the DSN, but a value it
		// quotes could be a secret: redact anyway.
		return nil, driver.BadDSN("%s", Driver{}.RedactText(err.Error(), dsn))
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	query := ""
	if _, q, ok := strings.Cut(dsn, "?"); ok {
		query = "&" + q
	}
	cfg.ClientFoundRows = false
	if !strings.Contains(query, "&parseTime=") {
		cfg.ParseTime = true
	}
	if !strings.Contains(query, "&loc=") {
		cfg.Loc = time.UTC
	}
	if !hasParam(cfg, "time_zone") {
		cfg.Params["time_zone"] = "'+00:00'"
	}
	if !hasParam(cfg, "innodb_lock_wait_timeout") {
		cfg.Params["innodb_lock_wait_timeout"] = lockWaitTimeout
	}
	return cfg, nil
}

// hasParam reports whether the DSN sets the system variable name.
func hasParam(cfg *gomysql.Config, name string) bool {
	_, ok := cfg.Params[name]
	return ok
}

// serverVersion connects once with cfg and reads VERSION(), before the pool is built:
// the isolation variable's name depends on it.
func (d Driver) serverVersion(ctx context.Context, cfg *gomysql.Config, dsn string) (serverVersion, error) {
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		return serverVersion{}, driver.BadDSN("%s", d.RedactText(err.Error(), dsn))
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var text string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&text); err != nil {
		return serverVersion{}, fmt.Errorf("connect to %s database: %s", Name, d.RedactText(err.Error(), dsn))
	}
	return parseVersion(text)
}

// serverVersion is what VERSION() says: which server, and its release.
type serverVersion struct {
	text         string
	mariaDB      bool
	major, minor int
}

// parseVersion reads "8.0.36", "8.4.0-log" or "10.11.19-MariaDB-0+deb12u1".
func parseVersion(text string) (serverVersion, error) {
	v := serverVersion{text: text, mariaDB: strings.Contains(strings.ToLower(text), "mariadb")}
	parts := strings.SplitN(strings.SplitN(text, "-", 2)[0], ".", 3)
	var err1, err2 error
	if len(parts) >= 2 {
		v.major, err1 = strconv.Atoi(parts[0])
		v.minor, err2 = strconv.Atoi(parts[1])
	}
	if len(parts) < 2 || err1 != nil || err2 != nil {
		return v, fmt.Errorf("%s: cannot read the server version %q", Name, text)
	}
	return v, nil
}

// atLeast reports whether v is major.minor or later.
func (v serverVersion) atLeast(major, minor int) bool {
	return v.major > major || (v.major == major && v.minor >= minor)
}

// supported refuses a server without FOR UPDATE SKIP LOCKED.
func (v serverVersion) supported() error {
	if v.mariaDB && !v.atLeast(10, 6) {
		return fmt.Errorf("%s: the server is MariaDB %s; retention needs MariaDB 10.6 or later, the first with FOR UPDATE SKIP LOCKED, so that sweepers pass over rows another transaction holds instead of waiting for them", Name, v.text)
	}
	if !v.mariaDB && !v.atLeast(8, 0) {
		return fmt.Errorf("%s: the server is MySQL %s; retention needs MySQL 8.0 or later, the first with FOR UPDATE SKIP LOCKED, so that sweepers pass over rows another transaction holds instead of waiting for them", Name, v.text)
	}
	return nil
}

// isolationVariable is the session variable of the isolation level: MySQL 8 and
// MariaDB 11.1 call it transaction_isolation; MariaDB before 11.1 only tx_isolation.
func (v serverVersion) isolationVariable() string {
	if v.mariaDB && !v.atLeast(11, 1) {
		return "tx_isolation"
	}
	return "transaction_isolation"
}
