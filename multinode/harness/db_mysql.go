package harness

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/retentionkit/retention/passes"
)

// The batch log on MySQL and MariaDB.
//
// PostgreSQL gives the suite three things MariaDB has no equal of: a statement-level
// trigger with the deleted rows as a table, pg_locks listing every advisory lock with its
// session, and application_name, which tells the members' sessions apart. Here:
//
//   - A row-level AFTER DELETE trigger folds a statement's rows into one mn_batch_log
//     row, keyed by (table, CONNECTION_ID(), NOW(6)): NOW() inside a trigger is the
//     time the triggering statement began, the same for all its rows. The first row
//     inserts the batch (and reads the locks), every further row updates it. The log
//     is InnoDB, so a batch that rolls back leaves no row, as on PostgreSQL.
//   - GET_LOCK's locks cannot be listed without a plugin, but IS_USED_LOCK(name) names
//     the connection holding a name. mn_locknames holds every lock name that matters:
//     the pass lock of each table's identities (the pass and its drain helpers) and
//     the cluster-wide slots, each with a label in pg_locks' form
//     (class:key:2), so the checks read both databases' logs alike.
//   - Members are told apart by the MySQL user: each node (n1, n2, ...) connects as
//     rt_mn_<node>, whom the CI script creates (docs/cluster.md). A node restarted under
//     its name is a new member with the same user; mn_members records, for every
//     process the fleet starts, the id of a connection opened just before it starts
//     (every connection of the new process gets a larger one, every connection of an
//     earlier process had a smaller one: ids only grow) and,
//     once the node tells it, the member id. The view mn_batches names a batch's member
//     from its user and connection id, as "retention:<member>", the application_name the
//     same member has on PostgreSQL.
//   - A member's slots live on connections of their own: the trigger counts a slot as
//     the member's when its holder (IS_USED_LOCK) is a connection of the same user and
//     the same process (mn_members) in the process list (the table owner has PROCESS,
//     and the trigger runs as it).

// MemberUserPrefix starts the MySQL user of each node: rt_mn_n1 for node n1.
const MemberUserPrefix = "rt_mn_"

// slotNames is how many cluster-wide slot names the batch log knows (slot i of a
// limit of n is key LockKey("<database>#slot<i>"), i < n): more than any scenario's
// limit.
const slotNames = 32

// drainHelperNames is how many drain helper identities (pass#k) per table the batch
// log knows.
const drainHelperNames = 8

// openMySQL is OpenDB for a go-sql-driver DSN that names the suite's database: it
// creates the database when missing and opens it in UTC.
func openMySQL(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("MySQL DSN: %w", err)
	}
	if cfg.DBName == "" {
		return nil, errors.New("the MySQL DSN names no database")
	}
	server := cfg.Clone()
	server.DBName = ""
	boot, err := sql.Open("mysql", server.FormatDSN())
	if err != nil {
		return nil, err
	}
	_, err = boot.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+cfg.DBName+"`")
	boot.Close()
	if err != nil {
		return nil, fmt.Errorf("create database %s: %w", cfg.DBName, err)
	}
	own := cfg.Clone()
	own.ParseTime = true
	own.Loc = time.UTC
	own.ReadTimeout = 300 * time.Second
	if own.Params == nil {
		own.Params = map[string]string{}
	}
	own.Params["time_zone"] = "'+00:00'"
	db, err := sql.Open("mysql", own.FormatDSN())
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("MySQL %s: %w", cfg.Addr, err)
	}
	return &DB{DB: db, DSN: dsn, MySQL: true}, nil
}

// Driver is the node configuration's database.driver for this database.
func (d *DB) Driver() string {
	if d.MySQL {
		return passes.DriverMySQL
	}
	return passes.DriverPostgres
}

// NodeDSN is the DSN node name connects with: on PostgreSQL the suite's (the node sets
// its own application_name), on MySQL the same database as the user rt_mn_<name>.
func (d *DB) NodeDSN(name string) string {
	if !d.MySQL {
		return d.DSN
	}
	cfg, err := mysql.ParseDSN(d.DSN)
	if err != nil {
		return d.DSN
	}
	node := mysql.NewConfig()
	node.Net, node.Addr, node.DBName = cfg.Net, cfg.Addr, cfg.DBName
	node.User = MemberUserPrefix + name
	return node.FormatDSN()
}

// Starting records that node name is about to start a new process: on MySQL, the id
// of a connection opened now, above which the process's connections will be. It
// returns the process's generation, for Joined.
func (d *DB) Starting(ctx context.Context, name string) (int64, error) {
	if !d.MySQL {
		return 0, nil
	}
	// A brand new connection's id: every connection made before it has a smaller one,
	// every one after a larger. (The process list's highest id would not do: a closed
	// connection of the previous process may have had a higher one.)
	fresh, err := sql.Open("mysql", d.DSN)
	if err != nil {
		return 0, err
	}
	var mark int64
	err = fresh.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&mark)
	fresh.Close()
	if err != nil {
		return 0, fmt.Errorf("record %s's start: %w", name, err)
	}
	res, err := d.ExecContext(ctx, `INSERT INTO mn_members (usr, from_conn, started, node)
		VALUES (?, ?, UTC_TIMESTAMP(6), ?)`, MemberUserPrefix+name, mark, name)
	if err != nil {
		return 0, fmt.Errorf("record %s's start: %w", name, err)
	}
	return res.LastInsertId()
}

// Joined records the member id of generation gen (from Starting).
func (d *DB) Joined(ctx context.Context, gen int64, member string) error {
	if !d.MySQL {
		return nil
	}
	_, err := d.ExecContext(ctx, `UPDATE mn_members SET member = ? WHERE gen = ?`, member, gen)
	return err
}

// resetMySQL empties the suite's database: every session of a node is killed, every
// table and view dropped, and the batch log made again.
func (d *DB) resetMySQL(ctx context.Context) error {
	c, err := d.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ids, err := column[int64](ctx, c, `SELECT ID FROM information_schema.PROCESSLIST
		WHERE USER LIKE 'rt\_mn\_%' AND ID <> CONNECTION_ID()`)
	if err != nil {
		return err
	}
	for _, id := range ids {
		// A session may end between the list and the kill: not an error worth stopping for.
		_, _ = c.ExecContext(ctx, fmt.Sprintf("KILL %d", id))
	}
	views, err := column[string](ctx, c, `SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'VIEW'`)
	if err != nil {
		return err
	}
	tables, err := column[string](ctx, c, `SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE <> 'VIEW'`)
	if err != nil {
		return err
	}
	stmts := []string{"SET FOREIGN_KEY_CHECKS = 0"}
	for _, v := range views {
		stmts = append(stmts, "DROP VIEW IF EXISTS `"+v+"`")
	}
	for _, t := range tables {
		stmts = append(stmts, "DROP TABLE IF EXISTS `"+t+"`")
	}
	stmts = append(stmts, "SET FOREIGN_KEY_CHECKS = 1",
		`CREATE TABLE mn_keep (tbl varchar(64) NOT NULL, id bigint NOT NULL, PRIMARY KEY (tbl, id))`,
		`CREATE TABLE mn_batch_log (
			id bigint AUTO_INCREMENT PRIMARY KEY,
			tbl varchar(64) NOT NULL,
			conn bigint NOT NULL,
			usr varchar(190) NOT NULL,
			started datetime(6) NOT NULL,
			at datetime(6) NOT NULL,
			nrows int NOT NULL,
			first_id bigint NOT NULL,
			last_id bigint NOT NULL,
			held text NOT NULL,
			member_locks text NOT NULL,
			db_locks text NOT NULL,
			UNIQUE KEY mn_batch (tbl, conn, started))`,
		`CREATE TABLE mn_locknames (name varchar(64) PRIMARY KEY, label varchar(64) NOT NULL, class_key varchar(32) NOT NULL, tbl varchar(64) NULL)`,
		`CREATE TABLE mn_members (gen bigint AUTO_INCREMENT PRIMARY KEY, usr varchar(64) NOT NULL, from_conn bigint NOT NULL,
			started datetime(6) NOT NULL, node varchar(64) NOT NULL, member varchar(128) NULL)`,
		// A batch's member: the latest process of its user started below its connection id.
		`CREATE VIEW mn_batches AS SELECT b.id, b.tbl,
			coalesce(concat('retention:', m.member), concat('retention:?', b.usr, '#', coalesce(m.gen, 0))) AS app,
			b.conn AS pid, coalesce(m.started, b.started) AS backend_start, b.at, b.nrows, b.first_id, b.last_id,
			b.held, b.member_locks, b.db_locks
		FROM mn_batch_log b LEFT JOIN mn_members m ON m.gen = (
			SELECT max(g.gen) FROM mn_members g WHERE g.usr = substring_index(b.usr, '@', 1) AND g.from_conn < b.conn)`,
	)
	for _, q := range stmts {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", firstLine(q), err)
		}
	}
	var slots []lockName
	for i := range slotNames {
		slots = append(slots, lockName{class: passes.SlotLockClass, key: passes.LockKey(passes.DefaultDatabase + "#slot" + fmt.Sprint(i))})
	}
	return d.addLockNames(ctx, c, "", slots)
}

// lockName is one session lock the batch log looks for.
type lockName struct {
	class, key int32
}

// label is the lock in pg_locks' form, classid:objid:objsubid.
func (l lockName) label() string { return fmt.Sprintf("%d:%d:2", l.class, uint32(l.key)) }

// addLockNames writes names into mn_locknames. The name is the MySQL driver's: "rtn:",
// the class and key as 8 hex digits each, then the first 24 hex digits of the SHA-256
// of the database's name; a drift from it makes every batch count as unlocked.
func (d *DB) addLockNames(ctx context.Context, c *sql.Conn, table string, names []lockName) error {
	var database string
	if err := c.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&database); err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(database))
	hash := hex.EncodeToString(sum[:])[:24]
	for _, l := range names {
		name := fmt.Sprintf("rtn:%08x:%08x:%s", uint32(l.class), uint32(l.key), hash)
		var tbl any
		if table != "" {
			tbl = table
		}
		if _, err := c.ExecContext(ctx, `INSERT IGNORE INTO mn_locknames (name, label, class_key, tbl) VALUES (?, ?, ?, ?)`,
			name, l.label(), fmt.Sprintf("%d:2", l.class), tbl); err != nil {
			return fmt.Errorf("lock names: %w", err)
		}
	}
	return nil
}

// recordTriggerMySQL is the batch log's trigger on a fixture table ({t}); {slow} is
// the seconds every DELETE statement sleeps at its first row (0: none).
const recordTriggerMySQL = `CREATE TRIGGER {t}_record AFTER DELETE ON {t} FOR EACH ROW
BEGIN
	IF @mn_batch IS NULL OR @mn_batch <> concat('{t}/', NOW(6)) THEN
		SET @mn_batch = concat('{t}/', NOW(6));
		INSERT INTO mn_batch_log (tbl, conn, usr, started, at, nrows, first_id, last_id, held, member_locks, db_locks)
		SELECT '{t}', CONNECTION_ID(), USER(), NOW(6), convert_tz(SYSDATE(6), @@session.time_zone, '+00:00'), 1, OLD.id, OLD.id,
			concat('{', coalesce((SELECT group_concat(label ORDER BY label) FROM mn_locknames
				WHERE IS_USED_LOCK(name) = CONNECTION_ID()), ''), '}'),
			concat('{', coalesce((SELECT group_concat(l.label ORDER BY l.label) FROM mn_locknames l
				JOIN information_schema.PROCESSLIST p ON p.ID = IS_USED_LOCK(l.name)
				WHERE p.USER = substring_index(USER(), '@', 1)
				  AND (SELECT max(g.gen) FROM mn_members g WHERE g.usr = p.USER AND g.from_conn < p.ID)
				  <=> (SELECT max(g.gen) FROM mn_members g WHERE g.usr = p.USER AND g.from_conn < CONNECTION_ID())), ''), '}'),
			concat('{', coalesce((SELECT group_concat(concat('"', k, '":', c)) FROM (
				SELECT class_key AS k, count(*) AS c FROM mn_locknames WHERE IS_USED_LOCK(name) IS NOT NULL GROUP BY class_key) s), ''), '}');
		IF {slow} > 0 THEN
			DO SLEEP({slow});
		END IF;
	ELSE
		UPDATE mn_batch_log SET nrows = nrows + 1, first_id = least(first_id, OLD.id), last_id = greatest(last_id, OLD.id),
			at = convert_tz(SYSDATE(6), @@session.time_zone, '+00:00')
		WHERE tbl = '{t}' AND conn = CONNECTION_ID() AND started = NOW(6);
	END IF;
END`

// seedMySQL is Seed on MySQL.
func (d *DB) seedMySQL(ctx context.Context, t Table) error {
	r := strings.NewReplacer("{t}", t.Name, "{slow}", fmt.Sprintf("%g", t.SlowDelete))
	c, err := d.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, q := range []string{
		`CREATE TABLE {t} (id bigint PRIMARY KEY, created_at datetime(6) NOT NULL, state varchar(16) NOT NULL)`,
		`INSERT INTO {t} (id, created_at, state) ` + generateMySQL(1, t.Rows),
		`CREATE INDEX {t}_created ON {t} (created_at, id)`,
		recordTriggerMySQL,
		`ANALYZE TABLE {t}`,
	} {
		if _, err := c.ExecContext(ctx, r.Replace(q)); err != nil {
			return fmt.Errorf("seed %s: %s: %w", t.Name, firstLine(q), err)
		}
	}
	ids := []lockName{{class: passes.SweepLockClass, key: passes.LockKey(t.Name)}}
	for k := 1; k <= drainHelperNames; k++ {
		ids = append(ids, lockName{class: passes.SweepLockClass, key: passes.LockKey(fmt.Sprintf("%s#%d", t.Name, k))})
	}
	if err := d.addLockNames(ctx, c, t.Name, ids); err != nil {
		return err
	}
	return d.SnapshotKeep(ctx, t.Name)
}

// generateMySQL is generate in MariaDB's SQL: its sequence engine (seq_1_to_N) stands
// for generate_series, and times are UTC wall times (the node pins its sessions to
// +00:00).
func generateMySQL(from, to int) string {
	return fmt.Sprintf(`SELECT seq, CASE WHEN seq %% 10 = 0 THEN UTC_TIMESTAMP(6) - INTERVAL 1 HOUR
		   ELSE UTC_TIMESTAMP(6) - INTERVAL %d DAY - INTERVAL 1 DAY - INTERVAL (seq %% 86400) SECOND END,
		   CASE WHEN seq %% 7 = 0 THEN 'pending' ELSE 'done' END
		FROM seq_%d_to_%d`, RetentionDays, from, to)
}

// keepQueryMySQL is keepQuery in MySQL's SQL.
func keepQueryMySQL(table string) string {
	return fmt.Sprintf(`INSERT IGNORE INTO mn_keep (tbl, id)
		SELECT '%[1]s', id FROM %[1]s
		WHERE NOT (created_at < UTC_TIMESTAMP(6) - INTERVAL %[2]d DAY AND state = 'done')`, table, RetentionDays)
}

// memberConns is the SQL condition that a process-list row p is a connection of the
// member app names, through mn_members (the member's user, above its process's first
// connection id and below the next process's of the same user).
const memberConns = `EXISTS (SELECT 1 FROM mn_members m WHERE concat('retention:', m.member) = ?
	AND p.USER = m.usr AND p.ID > m.from_conn
	AND NOT EXISTS (SELECT 1 FROM mn_members n WHERE n.usr = m.usr AND n.gen > m.gen AND p.ID > n.from_conn))`

// sessionsMySQL is Sessions on MySQL: the member's connections in the process list,
// and the known lock names they hold.
func (d *DB) sessionsMySQL(ctx context.Context, app string) (sessions, locks int64, err error) {
	err = d.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM information_schema.PROCESSLIST p WHERE `+memberConns+`),
		(SELECT count(*) FROM mn_locknames l JOIN information_schema.PROCESSLIST p ON p.ID = IS_USED_LOCK(l.name) WHERE `+memberConns+`)`,
		app, app).Scan(&sessions, &locks)
	return sessions, locks, err
}

// sampleQueryMySQL is sampleQuery on MySQL. GET_LOCK grants a name to one session by
// construction, so the most holders of one name is 1 while any is held; slots and
// pass locks are the known names IS_USED_LOCK names a holder for; waits (the MySQL
// driver's WaitSessionLock, the only GET_LOCK with a year's timeout) and DELETEs are the
// nodes' statements running in the process list (the ledger's DELETEs left out, as on
// PostgreSQL).
const sampleQueryMySQL = `SELECT
	(SELECT count(*) > 0 FROM mn_locknames WHERE IS_USED_LOCK(name) IS NOT NULL),
	(SELECT count(*) FROM mn_locknames WHERE class_key = concat($1, ':2') AND IS_USED_LOCK(name) IS NOT NULL),
	(SELECT count(*) FROM mn_locknames WHERE class_key = concat($2, ':2') AND IS_USED_LOCK(name) IS NOT NULL),
	(SELECT count(*) FROM information_schema.PROCESSLIST WHERE USER LIKE 'rt\_mn\_%' AND COMMAND = 'Query' AND INFO LIKE '%GET\_LOCK(%, 31536000)%'),
	(SELECT count(*) FROM information_schema.PROCESSLIST WHERE USER LIKE 'rt\_mn\_%' AND COMMAND = 'Query' AND DB = DATABASE()
		AND INFO LIKE '%DELETE%FROM%' AND INFO NOT LIKE '%retention\_%')`

// ledgerOverlapsMySQL is LedgerOverlaps on MySQL.
func (d *DB) ledgerOverlapsMySQL(ctx context.Context, deaths map[string]time.Time) ([]RunOverlap, error) {
	deathsSQL := "SELECT CAST(NULL AS char) AS node, CAST(NULL AS datetime(6)) AS at FROM DUAL WHERE false"
	for member, at := range deaths {
		deathsSQL += fmt.Sprintf(" UNION ALL SELECT '%s', TIMESTAMP '%s'", strings.ReplaceAll(member, "'", "''"), at.UTC().Format("2006-01-02 15:04:05.000000"))
	}
	return d.scanOverlaps(ctx, `WITH deaths AS (`+deathsSQL+`),
		r AS (SELECT m.id, m.name, coalesce(m.node_id, '') AS node,
		             coalesce((SELECT min(l.at) FROM mn_batches l WHERE l.tbl = substring_index(m.name, '#', 1)
		                       AND l.app = concat('retention:', m.node_id) AND l.at >= m.start_time), m.start_time) AS a,
		             CASE WHEN x.at IS NULL THEN coalesce(m.end_time, UTC_TIMESTAMP(6)) ELSE least(coalesce(m.end_time, x.at), x.at) END AS b
		      FROM retention_metadata m LEFT JOIN deaths x ON x.node = m.node_id
		      WHERE m.rows_deleted > 0 OR m.batches > 0)
		SELECT x.name, x.id, y.id, x.node, y.node FROM r x JOIN r y ON x.name = y.name AND x.id < y.id
		WHERE x.a < y.b AND y.a < x.b ORDER BY x.name, x.id`)
}

// column reads a one-column query's values.
func column[T any](ctx context.Context, c *sql.Conn, q string) ([]T, error) {
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", firstLine(q), err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// WithDatabase is the go-sql-driver DSN server with its database set to name.
func WithDatabase(server, name string) (string, error) {
	cfg, err := mysql.ParseDSN(server)
	if err != nil {
		return "", fmt.Errorf("TEST_MYSQL_URL: %w", err)
	}
	cfg.DBName = name
	return cfg.FormatDSN(), nil
}

// CheckNodeUsers checks nodes n1..nN can log in as their own users (MemberUserPrefix)
// and reach the database; the CI script creates them (docs/cluster.md).
func (d *DB) CheckNodeUsers(ctx context.Context, n int) error {
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("n%d", i)
		db, err := sql.Open("mysql", d.NodeDSN(name))
		if err != nil {
			return err
		}
		err = db.PingContext(ctx)
		db.Close()
		if err != nil {
			return fmt.Errorf("node user %s%s cannot log in (create it as root, see docs/cluster.md): %w", MemberUserPrefix, name, err)
		}
	}
	return nil
}
