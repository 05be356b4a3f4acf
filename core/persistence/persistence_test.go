package persistence_test

import (
	"context"
	"errors"
	"testing"

	"github.com/retentionkit/retention/core/persistence"
)

// retrying runs work until it succeeds or attempts run out, as a database implementation
// does after a serialization failure.
type retrying struct{ attempts int }

func (r retrying) Execute(ctx context.Context, work func(context.Context) error) error {
	var err error
	for range r.attempts {
		if err = work(ctx); err == nil {
			return nil
		}
	}
	return err
}

func TestExecuteResult(t *testing.T) {
	t.Parallel()
	t.Run("returns the committed attempt's value", func(t *testing.T) {
		calls := 0
		got, err := persistence.ExecuteResult(context.Background(), retrying{attempts: 3}, func(context.Context) (int, error) {
			calls++
			if calls < 3 {
				return calls * 100, errors.New("serialization failure")
			}
			return calls, nil
		})
		if err != nil || got != 3 {
			t.Fatalf("ExecuteResult = %d, %v; want 3, nil", got, err)
		}
	})
	t.Run("returns the zero value on failure", func(t *testing.T) {
		boom := errors.New("boom")
		got, err := persistence.ExecuteResult(context.Background(), retrying{attempts: 1}, func(context.Context) (string, error) {
			return "partial", boom
		})
		if !errors.Is(err, boom) || got != "" {
			t.Fatalf("ExecuteResult = %q, %v", got, err)
		}
	})
}

func TestInMemoryRunsWorkOnceDirectly(t *testing.T) {
	t.Parallel()
	var uow persistence.InMemory
	var _ persistence.UnitOfWork = uow
	calls := 0
	boom := errors.New("boom")
	err := uow.Execute(context.Background(), func(context.Context) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("Execute = %v after %d calls; want boom after 1", err, calls)
	}
	if err := uow.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}
