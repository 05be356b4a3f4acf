package passes

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/core/persistence"
)

// DefaultTxAttempts is how often TxUnitOfWork runs work before giving up on a
// serialization failure or deadlock.
const DefaultTxAttempts = 3

// TxUnitOfWork runs work in one database transaction, and runs it again from the start
// (in a fresh transaction) when the database aborts it with a serialization failure or a
// deadlock, or, on SQLite, finds the database locked. Work reaches the transaction with
// DB(ctx). The zero value of Attempts means DefaultTxAttempts.
type TxUnitOfWork struct {
	DB       bun.IDB // a *bun.DB, or a bun.Conn to run on one connection
	Attempts int
	Options  *sql.TxOptions
}

var _ persistence.TransactionalUnitOfWork = TxUnitOfWork{}

type txKey struct{}

// DB returns the transaction a TxUnitOfWork or StagedTx put in ctx, or fallback when
// there is none.
func DB(ctx context.Context, fallback bun.IDB) bun.IDB {
	if tx, ok := ctx.Value(txKey{}).(bun.Tx); ok {
		return tx
	}
	return fallback
}

// Execute runs work in a transaction, committing when it returns nil.
func (u TxUnitOfWork) Execute(ctx context.Context, work func(ctx context.Context) error) error {
	attempts := u.Attempts
	if attempts <= 0 {
		attempts = DefaultTxAttempts
	}
	var err error
	for attempt := 1; attempt <= attempts; attempt++ {
		err = u.DB.RunInTx(ctx, u.Options, func(ctx context.Context, tx bun.Tx) error {
			return work(context.WithValue(ctx, txKey{}, tx))
		})
		if err == nil || !IsRetryable(err) || ctx.Err() != nil {
			return err
		}
	}
	return fmt.Errorf("transaction failed %d times: %w", attempts, err)
}

// IsRetryable reports whether err aborted a transaction that may succeed when run again:
// its driver classifies it core.ErrRetryUnit (a PostgreSQL serialization failure or
// deadlock, a locked SQLite database).
func IsRetryable(err error) bool { return hasClass(err, core.ErrRetryUnit) }

// StagedTx is a unit of work for code that stages writes and commits once: the
// transaction begins on first use and Commit makes everything durable. Rollback (safe
// after Commit) discards what was staged.
type StagedTx struct {
	DB *bun.DB
	tx *bun.Tx
}

var _ persistence.UnitOfWork = (*StagedTx)(nil)

// Tx returns the transaction, beginning it on first use, and a context carrying it.
func (s *StagedTx) Tx(ctx context.Context) (context.Context, bun.Tx, error) {
	if s.tx == nil {
		tx, err := s.DB.BeginTx(ctx, nil)
		if err != nil {
			return ctx, bun.Tx{}, err
		}
		s.tx = &tx
	}
	return context.WithValue(ctx, txKey{}, *s.tx), *s.tx, nil
}

// Commit commits what was staged; with nothing staged it does nothing.
func (s *StagedTx) Commit(context.Context) error {
	if s.tx == nil {
		return nil
	}
	tx := s.tx
	s.tx = nil
	return tx.Commit()
}

// Rollback discards what was staged.
func (s *StagedTx) Rollback() error {
	if s.tx == nil {
		return nil
	}
	tx := s.tx
	s.tx = nil
	return tx.Rollback()
}
