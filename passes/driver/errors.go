package driver

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"
)

// Errors sorts a database's errors into core's classes, so the batch loop and
// supervision decide from the class and never read a database's codes or messages.
type Errors interface {
	// Classify returns err as a *core.DatabaseError of its class (core.ErrRetryUnit,
	// ErrRowSpecific, ErrTransient, ErrSchemaDrift or ErrFatal), or err unchanged when
	// it is nil or already classified. An error this driver does not recognise as its
	// own database's is still classified: a connection-level failure is transient,
	// anything else fatal.
	Classify(err error) error
	// Culprit returns the constraint and the table (schema-qualified outside the
	// default schema) that the database names in err, a row's failed delete, so the
	// quarantine can say who holds the row; "" for what it does not name.
	Culprit(err error) (constraint, table string)
}

// IsConnectionFailure reports whether err is a failure to reach or keep talking to a
// server, whatever the database: a timeout of the caller's context, a bad or dropped
// connection, any network error. Drivers share it so each states only its own codes.
func IsConnectionFailure(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}
