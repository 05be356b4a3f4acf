package driver

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Sessions is how a sweep holds its connection and bounds its statements. The
// reference behaviour is PostgreSQL's: a sweep pins one connection, sets its statement
// timeout and commit mode on the session (so a batch without children stays one
// autocommit statement), cancels a running statement on the server when the batch's
// context ends (the client library does not), and puts the session back before the
// connection returns to the pool.
type Sessions interface {
	// PinsSweep reports whether a sweep's batches run on one connection held for the
	// sweep. When false, batches run on the pool and no other Sessions method is called.
	PinsSweep() bool
	// PinSession applies s to the pinned connection c and returns its backend id, the
	// handle CancelStatement and the pacing signals name it by.
	PinSession(ctx context.Context, c bun.IConn, s Session) (backend int, err error)
	// ResetSession puts back what PinSession set, so no other user of the pool inherits
	// the sweep's settings.
	ResetSession(ctx context.Context, c bun.IConn) error
	// CancelStatement asks the server, over db, to cancel the statement backend runs.
	CancelStatement(ctx context.Context, db bun.IDB, backend int) error
	// SetStatementTimeout bounds every later statement on c by d, for hygiene that runs
	// longer than a batch.
	SetStatementTimeout(ctx context.Context, c bun.IConn, d time.Duration) error
}

// Session is the session settings of a sweep's pinned connection.
type Session struct {
	// SynchronousCommit is the commit mode ("on", "off", ...).
	SynchronousCommit string
	// StatementTimeout bounds each statement; 0: none.
	StatementTimeout time.Duration
}

// TimeoutMillis is d in whole milliseconds, rounded up: truncating would turn 1.5ms into
// 1ms, and anything under 1ms into 0, which PostgreSQL reads as no timeout at all.
func TimeoutMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
