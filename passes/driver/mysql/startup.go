package mysql

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// CheckSweep refuses two things PostgreSQL would sweep:
//
//   - a timestamp no index can serve the cutoff's range with (an index on the timestamp,
//     or on the filter's column then the timestamp): each batch's candidate read would
//     scan the whole table, and on InnoDB a locking statement whose plan scans the table
//     (at REPEATABLE READ, which a DSN may choose) locks every row it passes, the
//     application's included;
//   - a session whose binary log is written by statement (binlog_format=STATEMENT, with
//     the binary log on) at READ COMMITTED or READ UNCOMMITTED: InnoDB refuses every
//     write there (error 1665), so each batch would fail. It is refused, not mended: the
//     DSN can set binlog_format=ROW for the node's sessions (a privilege the user may
//     lack) or REPEATABLE-READ isolation, and which one is the operator's call.
func (Driver) CheckSweep(ctx context.Context, db bun.IDB, p driver.SweepPlan) ([]driver.Refusal, error) {
	var refusals []driver.Refusal
	indexed, err := rangeIndexed(ctx, db, p)
	if err != nil {
		return nil, fmt.Errorf("reading the indexes of %s: %w", p.Table, err)
	}
	if !indexed {
		refusals = append(refusals, driver.Refusal{Field: "timestamp", Reason: unindexedReason(p)})
	}
	b, err := readBinlog(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("reading the session's binlog_format and isolation: %w", err)
	}
	if reason := b.refusal(); reason != "" {
		refusals = append(refusals, driver.Refusal{Field: "database.dsn", Reason: reason})
	}
	return refusals, nil
}

// rangeIndexed reports whether an index of p.Table starts with p.Timestamp, or with
// p.FilterColumn and then p.Timestamp.
func rangeIndexed(ctx context.Context, db bun.IDB, p driver.SweepPlan) (bool, error) {
	schema, name := schemaOf(p.Table)
	var n int
	err := db.NewRaw(`SELECT COUNT(*) FROM information_schema.STATISTICS s
		WHERE s.TABLE_SCHEMA = COALESCE(?, DATABASE()) AND s.TABLE_NAME = ? AND s.SUB_PART IS NULL AND (
			(s.SEQ_IN_INDEX = 1 AND s.COLUMN_NAME = ?)
			OR (s.SEQ_IN_INDEX = 2 AND s.COLUMN_NAME = ? AND EXISTS (SELECT 1 FROM information_schema.STATISTICS f
				WHERE f.TABLE_SCHEMA = s.TABLE_SCHEMA AND f.TABLE_NAME = s.TABLE_NAME AND f.INDEX_NAME = s.INDEX_NAME
					AND f.SEQ_IN_INDEX = 1 AND f.COLUMN_NAME = ?)))`,
		schema, name, p.Timestamp, p.Timestamp, p.FilterColumn).Scan(ctx, &n)
	return n > 0, err
}

// unindexedReason says why an unindexed timestamp is refused and which index to create.
func unindexedReason(p driver.SweepPlan) string {
	also := ""
	if p.FilterColumn != "" {
		also = fmt.Sprintf(" (or on (%s, %s))", p.FilterColumn, p.Timestamp)
	}
	return fmt.Sprintf("no index of %s starts with %s%s; on MySQL/MariaDB that is refused, not warned: every batch would scan the whole table, "+
		"and InnoDB locks every row a locking statement scans; create an index on (%s)%s",
		p.Table, p.Timestamp, also, p.Timestamp, also)
}

// binlog is the session's binary logging and isolation, as CheckSweep reads them.
type binlog struct {
	logBin, sqlLogBin bool
	format, isolation string
}

// readBinlog reads whether the server writes a binary log, whether this session logs
// to it, its format and the session's isolation.
func readBinlog(ctx context.Context, db bun.IDB) (binlog, error) {
	v, err := sessionVersion(ctx, db)
	if err != nil {
		return binlog{}, err
	}
	var b binlog
	err = db.QueryRowContext(ctx, "SELECT @@global.log_bin, @@session.sql_log_bin, @@session.binlog_format, @@session."+v.isolationVariable()).
		Scan(&b.logBin, &b.sqlLogBin, &b.format, &b.isolation)
	return b, err
}

// refusal is why InnoDB would refuse the sweep's deletes in this session, "" when it
// would not: statement logging on, at an isolation below REPEATABLE READ.
func (b binlog) refusal() string {
	if !b.logBin || !b.sqlLogBin || b.format != "STATEMENT" {
		return ""
	}
	if b.isolation != "READ-COMMITTED" && b.isolation != "READ-UNCOMMITTED" {
		return ""
	}
	return fmt.Sprintf("the server writes its binary log by statement (binlog_format=STATEMENT) and the node's sessions are %s, "+
		"where InnoDB refuses every delete (error 1665); add binlog_format=ROW to the DSN's parameters "+
		"(the user needs the BINLOG ADMIN or SUPER privilege to set it) or set it on the server, "+
		"or else transaction_isolation='REPEATABLE-READ' (tx_isolation on MariaDB before 11.1), where InnoDB's gap locks "+
		"make the application's inserts into the swept range wait on the sweep", b.isolation)
}
