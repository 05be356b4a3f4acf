package actors_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
)

// Ping answers ErrNotRunning before Start and after Stop, and nil while the pass actor
// is busy: the batch runs on its worker, the actor answers from its mailbox.
func TestPingAnswersWhileABatchRuns(t *testing.T) {
	t.Parallel()
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	rt := actors.New(actors.Config{Logger: quiet})
	inBatch, release := make(chan struct{}, 1), make(chan struct{}) // buffered: the batch may start before the test waits
	purge := passes.PassFunc(func(ctx context.Context, _ int, _ time.Time) (int, error) {
		select {
		case inBatch <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return 0, nil
	})
	opts := passes.DefaultOptions()
	opts.RetentionPeriod, opts.MaxStartupStagger = passes.Retain(time.Hour), 0
	if err := rt.Register(passes.Registration{Name: "busy", New: passes.Reuse(purge), Options: opts}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound on a hang
	defer cancel()
	if err := rt.Ping(ctx); !errors.Is(err, actors.ErrNotRunning) {
		t.Fatalf("Ping before Start = %v, want ErrNotRunning", err)
	}
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-inBatch:
	case <-ctx.Done():
		t.Fatal("the first batch never started")
	}
	if err := rt.Ping(ctx); err != nil {
		t.Fatalf("Ping while a batch runs = %v", err)
	}
	close(release)
	if err := rt.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rt.Ping(ctx); !errors.Is(err, actors.ErrNotRunning) {
		t.Fatalf("Ping after Stop = %v, want ErrNotRunning", err)
	}
}
