// Package persistence states the two ways retention asks a store to make writes durable.
// They are contracts only: the implementations over bun live in package passes, which is
// the only place that touches SQL.
package persistence

import "context"

// UnitOfWork is for code that stages changes and must make them durable itself, such as a
// background sweep that no request commits for.
type UnitOfWork interface {
	Commit(ctx context.Context) error
}

// TransactionalUnitOfWork runs work whose writes must become durable together. The caller
// hands over the work instead of opening a transaction handle, because only an
// implementation that owns the function can run it again from the start after a
// serialization failure or a deadlock. Work must therefore be safe to run more than once.
type TransactionalUnitOfWork interface {
	Execute(ctx context.Context, work func(ctx context.Context) error) error
}

// ExecuteResult runs work in uow and returns its result. The result of an attempt that
// was rolled back and retried is discarded: only the committed attempt's value is kept.
func ExecuteResult[T any](ctx context.Context, uow TransactionalUnitOfWork, work func(ctx context.Context) (T, error)) (T, error) {
	var result T
	err := uow.Execute(ctx, func(ctx context.Context) error {
		v, err := work(ctx)
		if err != nil {
			return err
		}
		result = v
		return nil
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return result, nil
}

// InMemory is the unit of work of a store that has nothing to roll back to, such as a
// process-local map: Execute runs the work once, directly, and Commit has nothing to do.
// Pretending to roll back would be a lie, so it does not try. The zero value is ready.
type InMemory struct{}

// Execute runs work once with ctx.
func (InMemory) Execute(ctx context.Context, work func(ctx context.Context) error) error {
	return work(ctx)
}

// Commit does nothing: every write is already visible.
func (InMemory) Commit(context.Context) error { return nil }
