package observers_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/core/observers"
)

// runObserver is an observer contract with one event.
type runObserver interface {
	Finished(ctx context.Context, rows int) error
}

type recording struct {
	name string
	log  *[]string
	fail error
	boom any
}

func (o *recording) Finished(_ context.Context, rows int) error {
	*o.log = append(*o.log, fmt.Sprintf("%s:%d", o.name, rows))
	if o.boom != nil {
		panic(o.boom)
	}
	return o.fail
}

type reported struct {
	observer any
	err      error
}

// countingReporter checks that the failure was counted before it heard of it.
type countingReporter struct {
	guard    *observers.Guard
	seen     []reported
	countsAt []int64
	panics   bool
}

func (r *countingReporter) ObserverFailed(o any, err error) {
	r.seen = append(r.seen, reported{o, err})
	r.countsAt = append(r.countsAt, r.guard.Failures())
	if r.panics {
		panic("reporter down")
	}
}

func TestCompositeNotify(t *testing.T) {
	t.Parallel()
	var log []string
	boom := errors.New("disk full")
	a := &recording{name: "a", log: &log}
	b := &recording{name: "b", log: &log, fail: boom}
	c := &recording{name: "c", log: &log, boom: "nil map"}
	d := &recording{name: "d", log: &log}
	rep := &countingReporter{}
	guard := observers.NewGuard(rep)
	rep.guard = guard
	list := []runObserver{a, b, c, d}
	comp := observers.NewComposite(guard, list...)
	list[0] = &recording{name: "replaced", log: &log}

	comp.Notify(func(o runObserver) error { return o.Finished(context.Background(), 5) })

	if want := []string{"a:5", "b:5", "c:5", "d:5"}; !slices.Equal(log, want) {
		t.Fatalf("told %v, want %v (registration order, snapshot at construction)", log, want)
	}
	if guard.Failures() != 2 || guard.ReporterFailures() != 0 {
		t.Fatalf("Failures %d, ReporterFailures %d", guard.Failures(), guard.ReporterFailures())
	}
	if !slices.Equal(rep.countsAt, []int64{1, 2}) {
		t.Fatalf("reporter saw counts %v: failures must be counted before they are reported", rep.countsAt)
	}
	if rep.seen[0].observer != b || !errors.Is(rep.seen[0].err, boom) {
		t.Fatalf("first report = %+v", rep.seen[0])
	}
	var p *core.PanicError
	if rep.seen[1].observer != c || !errors.As(rep.seen[1].err, &p) || p.Value != "nil map" {
		t.Fatalf("second report = %+v", rep.seen[1])
	}
}

func TestGuardContainsAFailingReporter(t *testing.T) {
	t.Parallel()
	rep := &countingReporter{panics: true}
	guard := observers.NewGuard(rep)
	rep.guard = guard
	guard.Run("obs", func() error { return errors.New("x") })
	guard.Run("obs", func() error { panic("y") })
	if guard.Failures() != 2 || guard.ReporterFailures() != 2 {
		t.Fatalf("Failures %d, ReporterFailures %d; want 2, 2", guard.Failures(), guard.ReporterFailures())
	}
}

func TestZeroGuardCounts(t *testing.T) {
	t.Parallel()
	var g observers.Guard
	g.Run(nil, func() error { panic("x") })
	if g.Failures() != 1 {
		t.Fatalf("Failures = %d", g.Failures())
	}
	comp := observers.NewComposite[runObserver](nil)
	comp.Notify(func(runObserver) error { t.Fatal("told an observer of an empty composite"); return nil })
	if comp.Len() != 0 {
		t.Fatal("Len of an empty composite")
	}
}

// ctxObserver runs a function as its event handler.
type ctxObserver struct {
	name string
	log  *[]string
	f    func(ctx context.Context) error
}

func (o ctxObserver) Finished(ctx context.Context, _ int) error {
	*o.log = append(*o.log, o.name)
	if o.f == nil {
		return nil
	}
	return o.f(ctx)
}

func TestCompositeNotifyAsync(t *testing.T) {
	t.Parallel()
	tell := func(ctx context.Context, o runObserver) error { return o.Finished(ctx, 1) }

	t.Run("operation cancelled by an observer's call propagates and nobody after is told", func(t *testing.T) {
		var log []string
		ctx, cancel := context.WithCancel(context.Background())
		guard := &observers.Guard{}
		comp := observers.NewComposite[runObserver](guard,
			ctxObserver{name: "a", log: &log, f: func(ctx context.Context) error { cancel(); return ctx.Err() }},
			ctxObserver{name: "b", log: &log},
		)
		err := comp.NotifyAsync(ctx, tell)
		if !errors.Is(err, context.Canceled) || !slices.Equal(log, []string{"a"}) || guard.Failures() != 0 {
			t.Fatalf("err %v, told %v, failures %d", err, log, guard.Failures())
		}
	})
	t.Run("context checked before each observer", func(t *testing.T) {
		var log []string
		ctx, cancel := context.WithCancel(context.Background())
		guard := &observers.Guard{}
		comp := observers.NewComposite[runObserver](guard,
			ctxObserver{name: "ignores-ctx", log: &log, f: func(context.Context) error { cancel(); return nil }},
			ctxObserver{name: "b", log: &log},
		)
		err := comp.NotifyAsync(ctx, tell)
		if !errors.Is(err, context.Canceled) || !slices.Equal(log, []string{"ignores-ctx"}) {
			t.Fatalf("err %v, told %v", err, log)
		}
	})
	t.Run("an observer cancelling on its own is an ordinary failure", func(t *testing.T) {
		var log []string
		guard := &observers.Guard{}
		comp := observers.NewComposite[runObserver](guard,
			ctxObserver{name: "own-timeout", log: &log, f: func(context.Context) error {
				own, cancel := context.WithCancel(context.Background())
				cancel()
				return own.Err()
			}},
			ctxObserver{name: "b", log: &log},
		)
		if err := comp.NotifyAsync(context.Background(), tell); err != nil {
			t.Fatalf("NotifyAsync = %v", err)
		}
		if !slices.Equal(log, []string{"own-timeout", "b"}) || guard.Failures() != 1 {
			t.Fatalf("told %v, failures %d", log, guard.Failures())
		}
	})
	t.Run("panics and errors are contained", func(t *testing.T) {
		var log []string
		guard := &observers.Guard{}
		comp := observers.NewComposite[runObserver](guard,
			ctxObserver{name: "panics", log: &log, f: func(context.Context) error { panic("x") }},
			ctxObserver{name: "fails", log: &log, f: func(context.Context) error { return errors.New("y") }},
			ctxObserver{name: "c", log: &log},
		)
		if err := comp.NotifyAsync(context.Background(), tell); err != nil {
			t.Fatalf("NotifyAsync = %v", err)
		}
		if len(log) != 3 || guard.Failures() != 2 {
			t.Fatalf("told %v, failures %d", log, guard.Failures())
		}
	})
	t.Run("already cancelled tells nobody", func(t *testing.T) {
		var log []string
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		comp := observers.NewComposite[runObserver](nil, ctxObserver{name: "a", log: &log})
		if err := comp.NotifyAsync(ctx, tell); !errors.Is(err, context.Canceled) || len(log) != 0 {
			t.Fatalf("err %v, told %v", err, log)
		}
	})
}
