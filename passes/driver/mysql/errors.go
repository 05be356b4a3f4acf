package mysql

import (
	"errors"
	"regexp"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes/driver"
)

// MySQL and MariaDB error numbers the classes are read from.
const (
	errLockWaitTimeout   = 1205 // ER_LOCK_WAIT_TIMEOUT
	errDeadlock          = 1213 // ER_LOCK_DEADLOCK
	errRowIsReferenced   = 1451 // ER_ROW_IS_REFERENCED_2: a delete refused by a foreign key
	errNoReferencedRow   = 1452 // ER_NO_REFERENCED_ROW_2
	errRowIsReferencedV1 = 1217 // ER_ROW_IS_REFERENCED (no constraint named)
	errNoReferencedRowV1 = 1216 // ER_NO_REFERENCED_ROW
	errNoSuchTable       = 1146 // ER_NO_SUCH_TABLE
	errBadField          = 1054 // ER_BAD_FIELD_ERROR: an unknown column
	errBadDB             = 1049 // ER_BAD_DB_ERROR
	errServerShutdown    = 1053 // ER_SERVER_SHUTDOWN
	errQueryInterrupted  = 1317 // ER_QUERY_INTERRUPTED: KILL QUERY
	errConnectionKilled  = 1927 // MariaDB's ER_CONNECTION_KILLED
	errStatementTimeout  = 1969 // MariaDB's ER_STATEMENT_TIMEOUT (max_statement_time)
	errExecutionTimeout  = 3024 // MySQL's ER_QUERY_TIMEOUT (max_execution_time)
	errTooManyConns      = 1040 // ER_CON_COUNT_ERROR
	errUserConns         = 1203 // ER_TOO_MANY_USER_CONNECTIONS
)

// Classify sorts err by its MySQL error number: a deadlock (1213) retries the unit; a
// lock wait timeout (1205) is transient, as PostgreSQL's lock_not_available is: a row an
// application holds past innodb_lock_wait_timeout is busy, not bad, and must not be
// bisected into quarantine after the unit's retries run out. Either way the batch's
// transaction is rolled back explicitly (with InnoDB's default
// innodb_rollback_on_timeout=OFF a lock wait timeout ends only the statement and leaves
// the transaction open), as a unit of work's error always rolls it back; a
// foreign key's refusal (1451, 1452, 1216, 1217), another integrity violation (SQLSTATE
// class 23) or a trigger's SIGNAL (SQLSTATE 45000) is one row's; an unknown table,
// column or database is drift; a statement killed or timed out, a server shutting down
// or out of connections is transient. Without a MySQL error, a connection-level failure
// (go-sql-driver's invalid connection included) is transient and anything else fatal.
func (Driver) Classify(err error) error {
	if err == nil || classified(err) {
		return err
	}
	var me *gomysql.MySQLError
	if !errors.As(err, &me) {
		if driver.IsConnectionFailure(err) || errors.Is(err, gomysql.ErrInvalidConn) {
			return core.NewDatabaseError(core.ErrTransient, err)
		}
		return core.NewDatabaseError(core.ErrFatal, err)
	}
	return core.NewDatabaseError(classOf(me), err)
}

// classOf maps a server error to its class.
func classOf(me *gomysql.MySQLError) error {
	switch me.Number {
	case errDeadlock:
		return core.ErrRetryUnit
	case errLockWaitTimeout:
		return core.ErrTransient
	case errRowIsReferenced, errNoReferencedRow, errRowIsReferencedV1, errNoReferencedRowV1:
		return core.ErrRowSpecific
	case errNoSuchTable, errBadField, errBadDB:
		return core.ErrSchemaDrift
	case errServerShutdown, errQueryInterrupted, errConnectionKilled, errStatementTimeout,
		errExecutionTimeout, errTooManyConns, errUserConns:
		return core.ErrTransient
	}
	state := string(me.SQLState[:])
	switch {
	case state == "45000", state[:2] == "23":
		return core.ErrRowSpecific
	case state[:2] == "08":
		return core.ErrTransient
	}
	return core.ErrFatal
}

// fkMessage reads InnoDB's message of a refused delete: "... a foreign key constraint
// fails (`db`.`child`, CONSTRAINT `name` FOREIGN KEY ...". The server sends no
// structured fields, so the text is the only place the names are.
var fkMessage = regexp.MustCompile("foreign key constraint fails \\(`((?:[^`]|``)*)`\\.`((?:[^`]|``)*)`, CONSTRAINT `((?:[^`]|``)*)`")

// Culprit reads the referencing table and the constraint from a foreign key's refusal
// (1451, 1452). The table is named without its database, the way a config names the
// tables of the database its DSN opens.
func (Driver) Culprit(err error) (constraint, table string) {
	var me *gomysql.MySQLError
	if !errors.As(err, &me) || (me.Number != errRowIsReferenced && me.Number != errNoReferencedRow) {
		return "", ""
	}
	m := fkMessage.FindStringSubmatch(me.Message)
	if m == nil {
		return "", ""
	}
	unquote := func(s string) string { return strings.ReplaceAll(s, "``", "`") }
	return unquote(m[3]), unquote(m[2])
}

// classified reports whether err already carries a class, so classifying twice keeps the
// first driver's verdict.
func classified(err error) bool {
	var de *core.DatabaseError
	return errors.As(err, &de) || errors.Is(err, core.ErrSchemaDrift)
}
