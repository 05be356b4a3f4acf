package passes

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/uptrace/bun/driver/pgdriver"
)

// SchemaDriftError says that a table or column a pass was configured with is not there
// (any more): the configuration and the database have drifted apart. Nothing a retry
// soon can fix, yet it is not a bug either: the pass works again once the table is back
// (a migration restored it, say). A Go pass may return one itself; IsSchemaDrift also
// recognises the databases' own errors.
type SchemaDriftError struct {
	Err error
}

func (e *SchemaDriftError) Error() string { return fmt.Sprintf("configuration drift: %v", e.Err) }

// Unwrap returns the database's error.
func (e *SchemaDriftError) Unwrap() error { return e.Err }

// PostgreSQL error codes the classification reads.
const (
	pgUndefinedTable  = "42P01"
	pgUndefinedColumn = "42703"
	pgInvalidSchema   = "3F000"
)

// IsSchemaDrift reports whether err says that a table, column or schema does not exist:
// a *SchemaDriftError, PostgreSQL's undefined_table (42P01), undefined_column (42703)
// or invalid_schema_name (3F000), or SQLite's "no such table" / "no such column".
func IsSchemaDrift(err error) bool {
	if err == nil {
		return false
	}
	var d *SchemaDriftError
	if errors.As(err, &d) {
		return true
	}
	switch pgCode(err) {
	case pgUndefinedTable, pgUndefinedColumn, pgInvalidSchema:
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "no such table") || strings.Contains(msg, "no such column")
}

// IsTransient reports whether err is the moment's rather than the configuration's: the
// database could not be reached or asked (connection refused or reset, an i/o timeout,
// a timeout of the caller's context), the server is shutting down or starting
// (57P01-57P03), too many connections (class 53), a lock or statement timeout (55P03,
// 57014), a serialization failure or deadlock (40001, 40P01), or SQLite's busy and
// locked errors. Trying again later may succeed; trying a bad configuration again never
// does.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true // every network error: a timeout, a refused or dropped connection
	}
	if code := pgCode(err); code != "" {
		switch {
		case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"): // connection exception, insufficient resources
			return true
		}
		switch code {
		case "57P01", "57P02", "57P03", "55P03", "57014", "40001", "40P01":
			return true
		}
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY") ||
		strings.Contains(msg, "database table is locked")
}

// pgCode returns the SQLSTATE of a PostgreSQL error in err's chain, or "".
func pgCode(err error) string {
	var pe pgdriver.Error
	if errors.As(err, &pe) {
		return pe.Field('C')
	}
	return ""
}
