package sqlite

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// errNoSessions says a session method was called on a driver whose PinsSweep is false.
var errNoSessions = errors.New("sqlite: sweeps do not pin a session")

// PinsSweep is false: the SQLite driver interrupts a statement when its context ends,
// so batches run on the pool and a statement timeout is the batch's context.
func (Driver) PinsSweep() bool { return false }

// PinSession is never called (PinsSweep is false).
func (Driver) PinSession(context.Context, bun.IConn, driver.Session) (int, error) {
	return 0, errNoSessions
}

// ResetSession has nothing to put back.
func (Driver) ResetSession(context.Context, bun.IConn) error { return nil }

// CancelStatement is never called: the driver cancels on the context.
func (Driver) CancelStatement(context.Context, bun.IDB, int) error { return errNoSessions }

// SetStatementTimeout sets nothing: the hygiene's context bounds it.
func (Driver) SetStatementTimeout(context.Context, bun.IConn, time.Duration) error { return nil }
