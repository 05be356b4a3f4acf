package harness

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/driver/postgres"
)

// RetentionDays is the retention of every fixture pass: rows in state done older
// than this go.
const RetentionDays = 30

// SuiteApp is the application_name of the harness's own connections, so the lock and
// activity samples leave them out.
const SuiteApp = "multinode-harness"

// DB is the scenario's database: the fixture tables, the keep table, the batch log,
// and the checks over them.
type DB struct {
	*sql.DB
	// DSN is what the nodes connect with (on MariaDB, the harness's own; NodeDSN gives
	// each node its own user).
	DSN string
	// MySQL is set when the database is MySQL or MariaDB (see db_mysql.go): the batch
	// log, the samples and some checks are written in its SQL there.
	MySQL bool
}

// IsPostgresDSN reports whether dsn is a PostgreSQL URL; anything else is taken for a
// go-sql-driver/mysql DSN.
func IsPostgresDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// OpenDB opens dsn for the harness (its own application_name, a long read timeout for
// the checks on a busy machine) and keeps dsn for the nodes.
func OpenDB(ctx context.Context, dsn string) (*DB, error) {
	if !IsPostgresDSN(dsn) {
		return openMySQL(ctx, dsn)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("database URL: %s", postgres.Driver{}.RedactText(err.Error(), dsn))
	}
	q := u.Query()
	q.Set("application_name", SuiteApp)
	q.Set("read_timeout", "300s")
	u.RawQuery = q.Encode()
	db, err := passes.Open(ctx, passes.DriverPostgres, u.String())
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", postgres.Driver{}.RedactDSN(dsn), err)
	}
	return &DB{DB: db.DB, DSN: dsn}, nil
}

// Reset empties the database: every table goes with the public schema, and every
// session a node of an earlier scenario might have left is ended.
func (d *DB) Reset(ctx context.Context) error {
	if d.MySQL {
		return d.resetMySQL(ctx)
	}
	for _, q := range []string{
		// Every other session, not only the nodes': the database is the suite's alone
		// while it runs, and a statement a test before it left running on the server
		// (its client long gone) holds locks DROP SCHEMA would wait on for minutes.
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		 WHERE datname = current_database() AND pid <> pg_backend_pid()
		   AND application_name IS DISTINCT FROM '` + SuiteApp + `'`,
		`DROP SCHEMA IF EXISTS public CASCADE`,
		`CREATE SCHEMA public`,
		batchLogTable,
		keepTable,
		recordFunction,
		slowFunction,
	} {
		if _, err := d.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", firstLine(q), err)
		}
	}
	return nil
}

// keepTable holds every key that must survive, per table: written in SQL from the
// retention rule before any node runs, never from what the generator meant to write.
const keepTable = `CREATE TABLE mn_keep (tbl text NOT NULL, id bigint NOT NULL, PRIMARY KEY (tbl, id))`

// batchLogTable is one row per committed DELETE on a fixture table: who ran it (the
// session's application_name, pid and start), when, how many rows and which keys, the
// advisory locks the session held (classid:objid:objsubid; objsubid 2 is the two-key
// form), those every session of the same application_name (the same member: its slots
// live on connections of their own) held, and the advisory locks granted in the
// database at that moment, by classid:objsubid. A batch that rolls back leaves no
// row, so the log is exactly what was deleted.
const batchLogTable = `CREATE TABLE mn_batches (
	id bigserial PRIMARY KEY,
	tbl text NOT NULL,
	app text NOT NULL,
	pid int NOT NULL,
	backend_start timestamptz NOT NULL,
	at timestamptz NOT NULL,
	nrows int NOT NULL,
	first_id bigint NOT NULL,
	last_id bigint NOT NULL,
	held text[] NOT NULL,
	member_locks text[] NOT NULL,
	db_locks jsonb NOT NULL)`

const recordFunction = `CREATE FUNCTION mn_record() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE n int; lo bigint; hi bigint;
BEGIN
	SELECT count(*), min(id), max(id) INTO n, lo, hi FROM gone;
	IF n = 0 THEN RETURN NULL; END IF;
	INSERT INTO mn_batches (tbl, app, pid, backend_start, at, nrows, first_id, last_id, held, member_locks, db_locks)
	SELECT TG_TABLE_NAME, current_setting('application_name'), pg_backend_pid(),
		(SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()),
		clock_timestamp(), n, lo, hi,
		ARRAY(SELECT classid || ':' || objid || ':' || objsubid FROM pg_locks
		      WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid() ORDER BY 1),
		ARRAY(SELECT l.classid || ':' || l.objid || ':' || l.objsubid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		      WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = current_setting('application_name') ORDER BY 1),
		coalesce((SELECT jsonb_object_agg(k, c) FROM (
			SELECT classid || ':' || objsubid AS k, count(*) AS c FROM pg_locks
			WHERE locktype = 'advisory' AND granted
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			GROUP BY 1) s), '{}');
	RETURN NULL;
END $$`

// slowFunction makes every DELETE on a table take a while, so that batches overlap and
// a sample of pg_stat_activity sees them.
const slowFunction = `CREATE FUNCTION mn_slow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_sleep(TG_ARGV[0]::float8);
	RETURN NULL;
END $$`

// Table is one fixture table and its pass (same name).
type Table struct {
	Name string
	// Rows is how many rows to write: ids 1..Rows, every tenth fresh, every seventh
	// left in state pending (the pass's filter excludes it), the rest expired and
	// done. So about 77% go.
	Rows int
	// SlowDelete, when set, is how long each DELETE on the table sleeps (seconds).
	SlowDelete float64
}

// Seed creates t, fills it, records every batch on it in mn_batches and writes its
// keep-set.
func (d *DB) Seed(ctx context.Context, t Table) error {
	if d.MySQL {
		return d.seedMySQL(ctx, t)
	}
	r := strings.NewReplacer("{t}", t.Name, "{rows}", fmt.Sprint(t.Rows), "{days}", fmt.Sprint(RetentionDays))
	stmts := []string{
		`CREATE TABLE {t} (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, state text NOT NULL)`,
		`INSERT INTO {t} (id, created_at, state) ` + generate(1, t.Rows),
		`CREATE INDEX {t}_created ON {t} (created_at, id)`,
		`CREATE TRIGGER {t}_record AFTER DELETE ON {t} REFERENCING OLD TABLE AS gone
		 FOR EACH STATEMENT EXECUTE FUNCTION mn_record()`,
		`ANALYZE {t}`,
	}
	if t.SlowDelete > 0 {
		stmts = append(stmts, fmt.Sprintf(`CREATE TRIGGER {t}_slow BEFORE DELETE ON {t}
		 FOR EACH STATEMENT EXECUTE FUNCTION mn_slow('%g')`, t.SlowDelete))
	}
	for _, q := range stmts {
		if _, err := d.ExecContext(ctx, r.Replace(q)); err != nil {
			return fmt.Errorf("seed %s: %s: %w", t.Name, firstLine(q), err)
		}
	}
	return d.SnapshotKeep(ctx, t.Name)
}

// generate is the SELECT of rows from..to of a fixture table.
func generate(from, to int) string {
	return fmt.Sprintf(`SELECT g, CASE WHEN g %% 10 = 0 THEN now() - interval '1 hour'
		   ELSE now() - interval '%d days' - interval '1 day' - (g %% 86400) * interval '1 second' END,
		   CASE WHEN g %% 7 = 0 THEN 'pending' ELSE 'done' END
		FROM generate_series(%d, %d) g`, RetentionDays, from, to)
}

// AddRows writes rows from..to into table, as Seed does, and adds the ones the rule
// keeps to the keep-set in the same transaction, so a running node never sees a row
// whose fate is not yet written down.
func (d *DB) AddRows(ctx context.Context, table string, from, to int) error {
	tx, err := d.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	gen, keep := generate(from, to), keepQuery(table)
	if d.MySQL {
		gen, keep = generateMySQL(from, to), keepQueryMySQL(table)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (id, created_at, state) %s`, table, gen)); err != nil {
		return fmt.Errorf("add rows to %s: %w", table, err)
	}
	if _, err := tx.ExecContext(ctx, keep); err != nil {
		return err
	}
	return tx.Commit()
}

// SnapshotKeep adds to mn_keep every row of table the retention rule keeps (not older
// than the retention, or not done), as of now: call it before the nodes start, and
// again after writing fresh rows during a run.
func (d *DB) SnapshotKeep(ctx context.Context, table string) error {
	q := keepQuery(table)
	if d.MySQL {
		q = keepQueryMySQL(table)
	}
	_, err := d.ExecContext(ctx, q)
	return err
}

// keepQuery is the retention rule in SQL, negated: the rows of table that stay.
func keepQuery(table string) string {
	return fmt.Sprintf(`INSERT INTO mn_keep (tbl, id)
		SELECT '%[1]s', id FROM %[1]s
		WHERE NOT (created_at < now() - interval '%[2]d days' AND state = 'done')
		ON CONFLICT DO NOTHING`, table, RetentionDays)
}

// Sessions counts the database sessions whose application_name is app, and the
// advisory locks they hold.
func (d *DB) Sessions(ctx context.Context, app string) (sessions, locks int64, err error) {
	if d.MySQL {
		return d.sessionsMySQL(ctx, app)
	}
	err = d.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1),
		(SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		 WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = $1)`, app).Scan(&sessions, &locks)
	return sessions, locks, err
}

// Count runs a query that returns one integer.
func (d *DB) Count(ctx context.Context, q string, args ...any) (int64, error) {
	var n sql.NullInt64
	if err := d.queryRow(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", firstLine(q), err)
	}
	return n.Int64, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// rebind turns q's PostgreSQL placeholders ($1, $2, ...) into MySQL's (?), repeating
// the arguments in the order the placeholders appear; on PostgreSQL q is unchanged.
func (d *DB) rebind(q string, args []any) (string, []any) {
	if !d.MySQL {
		return q, args
	}
	var out []any
	q = placeholder.ReplaceAllStringFunc(q, func(m string) string {
		i, _ := strconv.Atoi(m[1:])
		if i >= 1 && i <= len(args) {
			out = append(out, args[i-1])
		}
		return "?"
	})
	return q, out
}

var placeholder = regexp.MustCompile(`\$[0-9]+`)

// query is QueryContext with q's placeholders rebound for the database.
func (d *DB) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	q, args = d.rebind(q, args)
	return d.QueryContext(ctx, q, args...)
}

// queryRow is QueryRowContext with q's placeholders rebound for the database.
func (d *DB) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	q, args = d.rebind(q, args)
	return d.QueryRowContext(ctx, q, args...)
}
