package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/driver/mysql"
)

// The MySQL demo's database: RETENTION_DEMO_MYSQL_DSN, by default root over the local
// server's socket (as Debian's mariadb-server lets the system's root in), in a database
// retention_demo the seeder creates. examples/demo/retention-mysql.yaml reads the same.
const (
	mysqlEnv     = "RETENTION_DEMO_MYSQL_DSN"
	mysqlDefault = "root@unix(/run/mysqld/mysqld.sock)/retention_demo"
)

// reseedMySQL writes the demo afresh in the MySQL or MariaDB database dsn names: the
// database is dropped and created again when it does not exist or holds a demo (told
// by its export_job table); any other database is refused, never dropped.
func reseedMySQL(ctx context.Context, dsn string, rows int, now time.Time) error {
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil || cfg.DBName == "" {
		return fmt.Errorf("-db: want a MySQL DSN that names a database, e.g. %s", mysqlDefault)
	}
	name := cfg.DBName
	cfg.DBName = ""
	server, err := passes.Open(ctx, mysql.Name, cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer server.Close()
	var exists, demo int
	if err := server.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?),
		(SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'export_job')`, name, name).Scan(&exists, &demo); err != nil {
		return err
	}
	if exists > 0 && demo == 0 {
		return fmt.Errorf("database %s exists and is not a demo database (no export_job table), so it is left alone; name another in %s", name, mysqlEnv)
	}
	for _, stmt := range []string{"DROP DATABASE IF EXISTS ?", "CREATE DATABASE ?"} {
		if _, err := server.ExecContext(ctx, stmt, bun.Ident(name)); err != nil {
			return err
		}
	}
	db, err := passes.Open(ctx, mysql.Name, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	return seedMySQL(ctx, db, rows, now)
}

// seedMySQL is seed's story in InnoDB tables: the same rows, children and references,
// the timestamps in DATETIME(6) (UTC wall time, the driver's session zone), written in
// statements of a few thousand rows.
func seedMySQL(ctx context.Context, db *bun.DB, rows int, now time.Time) error {
	step := int64(300 * 24 * 3600 / rows)
	fk := func(table string) string {
		return fmt.Sprintf("CREATE TABLE %[1]s (id BIGINT AUTO_INCREMENT PRIMARY KEY, audit_log_id BIGINT %[2]s, KEY %[1]s_log (audit_log_id), FOREIGN KEY (audit_log_id) REFERENCES audit_log (id))",
			table, map[bool]string{true: "NULL", false: "NOT NULL"}[table == "audit_review"])
	}
	for _, s := range []string{
		`CREATE TABLE audit_log (id BIGINT PRIMARY KEY, occurred_at DATETIME(6) NOT NULL, state VARCHAR(16) NOT NULL, action VARCHAR(32) NOT NULL,
			KEY audit_log_occurred_at (occurred_at, id))`,
		fk("audit_attachment"), fk("audit_review"), fk("legal_hold"),
		// A table the pass does not know about: its references make those rows fail to
		// delete, so the sweep bisects around them and quarantines each.
		fk("export_job"),
		`CREATE TABLE session (id BIGINT PRIMARY KEY, last_seen BIGINT NOT NULL, KEY session_last_seen (last_seen, id))`,
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%.60s: %w", s, err)
		}
	}
	if err := insertRows(ctx, db, "audit_log (id, occurred_at, state, action)", rows, func(i int) string {
		at := time.Unix(now.Unix()-int64(rows-i)*step, 0).UTC().Format("2006-01-02 15:04:05")
		state := "done"
		if i%13 == 0 {
			state = "pending"
		} else if i%5 == 0 {
			state = "failed"
		}
		return fmt.Sprintf("(%d, '%s', '%s', 'login')", i, at, state)
	}); err != nil {
		return err
	}
	if err := insertRows(ctx, db, "session (id, last_seen)", 20000, func(i int) string {
		return fmt.Sprintf("(%d, %d)", i, now.Unix()-int64(i))
	}); err != nil {
		return err
	}
	for _, s := range []string{
		`INSERT INTO audit_attachment (audit_log_id) SELECT id FROM audit_log WHERE id % 4 = 0`,
		`INSERT INTO audit_review (audit_log_id) SELECT id FROM audit_log WHERE id % 9 = 0`,
		`INSERT INTO legal_hold (audit_log_id) SELECT id FROM audit_log WHERE id % 1000 = 7`,
		`INSERT INTO export_job (audit_log_id) SELECT id FROM audit_log WHERE id IN (1001, 50003, 120011)`,
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%.60s: %w", s, err)
		}
	}
	return seedLedger(ctx, db, now)
}

// insertRows inserts rows 1..n into into ("table (columns)"), row i written by value,
// 5,000 rows a statement.
func insertRows(ctx context.Context, db *bun.DB, into string, n int, value func(i int) string) error {
	const per = 5000
	for first := 1; first <= n; first += per {
		var b strings.Builder
		b.WriteString("INSERT INTO " + into + " VALUES ")
		for i := first; i < first+per && i <= n; i++ {
			if i > first {
				b.WriteByte(',')
			}
			b.WriteString(value(i))
		}
		if _, err := db.ExecContext(ctx, b.String()); err != nil {
			return fmt.Errorf("insert into %s: %w", into, err)
		}
	}
	return nil
}
