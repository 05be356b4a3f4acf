package passes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Exclusive returns a Factory whose every sweep holds identity's advisory lock (see
// SweepLockOptions), for a pass that is not a Table: the ledger's own loops, a Go pass.
// It is ExclusiveWith with the default connection settings.
func Exclusive(db *bun.DB, identity string, factory Factory) (Factory, error) {
	return ExclusiveWith(db, SweepLockOptions{Identity: identity}, factory)
}

// ExclusiveWith returns a Factory that, at the start of every sweep, pins a connection
// of db, takes o's lock on it and only then builds the pass with factory; the lock is
// given back when the sweep ends (the runtime closes the pass), or with the connection.
// A sweep denied the lock ends with an *ElsewhereError and never builds the pass.
//
// The pass's batches run on connections of its own, not on the lock's, so before every
// batch the wrapper confirms the lock's connection still answers (one "SELECT 1"), and
// stops the sweep with ErrLockLost if it does not: a lock lost between batches never
// lets another batch run. A lock lost during a batch is noticed at the next one; a Table
// closes even that gap with WithSweepLock, which holds the lock on the connection its
// batches run on, and should be preferred for one.
//
// It needs PostgreSQL: on SQLite, and without an identity, it is refused at once.
func ExclusiveWith(db *bun.DB, o SweepLockOptions, factory Factory) (Factory, error) {
	if o.Identity == "" {
		return nil, errors.New("an exclusive pass needs an identity to lock")
	}
	d, err := DriverFor(db)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", o.Identity, err)
	}
	if err := sweepLockSupported(d); err != nil {
		return nil, fmt.Errorf("%q: %w", o.Identity, err)
	}
	if factory == nil {
		return nil, fmt.Errorf("%q: an exclusive pass needs a factory", o.Identity)
	}
	return func(ctx context.Context) (Pass, error) {
		pin, err := pinSweep(ctx, d, db, &o)
		if err != nil {
			return nil, err
		}
		inner, err := factory(ctx)
		if err != nil {
			_ = pin.release()
			return nil, err
		}
		return &exclusivePass{inner: inner, pin: pin}, nil
	}, nil
}

// exclusivePass is one sweep of an Exclusive factory's pass, holding the lock.
type exclusivePass struct {
	inner Pass
	pin   *pinnedSweep
	ran   bool // a batch ran: the lock's connection may have died since
}

func (p *exclusivePass) PurgeBatch(ctx context.Context, batchSize int, olderThan time.Time) (int, error) {
	if p.ran { // the first batch follows the lock at once
		if err := p.pin.alive(ctx); err != nil {
			return 0, err
		}
	}
	p.ran = true
	return p.inner.PurgeBatch(ctx, batchSize, olderThan)
}

// Close ends the inner pass's sweep, then gives the lock back.
func (p *exclusivePass) Close() error {
	var errs []error
	if c, ok := p.inner.(Closer); ok {
		errs = append(errs, c.Close())
	}
	errs = append(errs, p.pin.release())
	return errors.Join(errs...)
}
