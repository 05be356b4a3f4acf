package sqlite

import (
	"errors"
	"strings"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes/driver"
)

// Classify sorts err by SQLite's result text: busy or locked retries the unit (another
// writer held the database past the busy timeout), a failed constraint is one
// row's, a missing table or column is drift, anything else fatal. The pure-Go driver
// reports its result codes only in the message, which is why the text is read.
func (Driver) Classify(err error) error {
	if err == nil || classified(err) {
		return err
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "constraint failed") || strings.Contains(msg, "SQLITE_CONSTRAINT"):
		return core.NewDatabaseError(core.ErrRowSpecific, err)
	case strings.Contains(msg, "no such table") || strings.Contains(msg, "no such column"):
		return core.NewDatabaseError(core.ErrSchemaDrift, err)
	case strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY") ||
		strings.Contains(msg, "database table is locked"):
		// Another writer held the database past the busy timeout: the unit may succeed
		// when run again, as a PostgreSQL deadlock may.
		return core.NewDatabaseError(core.ErrRetryUnit, err)
	case driver.IsConnectionFailure(err):
		return core.NewDatabaseError(core.ErrTransient, err)
	}
	return core.NewDatabaseError(core.ErrFatal, err)
}

// Culprit names nothing: SQLite's constraint errors name neither the constraint nor
// the referencing table.
func (Driver) Culprit(error) (constraint, table string) { return "", "" }

// classified reports whether err already carries a class.
func classified(err error) bool {
	var de *core.DatabaseError
	return errors.As(err, &de) || errors.Is(err, core.ErrSchemaDrift)
}
