package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/passes"
)

func main() {
	if err := run(context.Background(), os.Stdout, time.Now()); err != nil {
		fmt.Fprintln(os.Stderr, "custompass:", err)
		os.Exit(1)
	}
}

// run registers the pass on a runtime with its own actor system, triggers one sweep on
// the wall clock, waits for it to end and prints what is left.
func run(ctx context.Context, out io.Writer, now time.Time) error {
	store := NewStore(
		Session{ID: "alice", LastSeen: now.Add(-2 * time.Hour)},
		Session{ID: "bob", LastSeen: now.Add(-10 * time.Minute)},
		Session{ID: "carol", LastSeen: now.Add(-45 * time.Minute)},
		Session{ID: "dave", LastSeen: now},
	)
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(30 * time.Minute)
	opts.BatchSize = 1
	opts.MaxStartupStagger = 0

	done := make(chan actors.SweepDone, 1)
	logger := logrus.New()
	logger.SetOutput(out)
	rt := actors.New(actors.Config{Logger: logger, Observers: []actors.Observer{actors.ObserverFunc(func(e actors.Event) error {
		if d, ok := e.(actors.SweepDone); ok {
			select {
			case done <- d:
			default:
			}
		}
		return nil
	})}})
	if err := rt.Register(passes.Registration{Name: "expired-sessions", New: passes.Reuse(ExpiredSessions{Store: store}), Options: opts}); err != nil {
		return err
	}
	if err := rt.Start(ctx); err != nil {
		return err
	}
	defer rt.Stop(ctx)
	select {
	case d := <-done:
		fmt.Fprintf(out, "deleted %d sessions in %d batches; left: %v\n", d.Rows, d.Batches, store.IDs())
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
