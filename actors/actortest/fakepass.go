package actortest

import (
	"context"
	"sync"
	"time"

	"github.com/retentionkit/retention/core/retry"
	"github.com/retentionkit/retention/passes"
)

// Step is one scripted PurgeBatch outcome.
type Step struct {
	rows  int
	err   error
	panic any
	block bool
}

// Rows returns n rows.
func Rows(n int) Step { return Step{rows: n} }

// Fail returns err.
func Fail(err error) Step { return Step{err: err} }

// RetryAfter fails with err wrapped in a retry-after hint of d.
func RetryAfter(err error, d time.Duration) Step { return Step{err: retry.Later(err, d)} }

// Panic panics with v.
func Panic(v any) Step { return Step{panic: v} }

// Block waits until Release (then returns n rows) or until the batch's context ends
// (then returns the context's error, as a pass honouring its context does).
func Block(n int) Step { return Step{rows: n, block: true} }

// Call is one PurgeBatch call the fake saw.
type Call struct {
	// Instance numbers the pass value the call went to: 1 for the first the factory
	// built, 2 for the second, and so on.
	Instance  int
	BatchSize int
	OlderThan time.Time
}

// FakePass is a scripted pass. Each PurgeBatch takes the next step of the script; once
// it runs out, every call takes the fallback (Rows(0) unless Otherwise says).
// It records every call, counts how many pass values its factory built, and tracks how
// many batches run at once. It is safe for concurrent use.
type FakePass struct {
	mu         sync.Mutex
	script     []Step
	fallback   Step
	calls      []Call
	builds     int
	running    int
	maxRunning int
	blocked    int
	release    chan struct{}
}

// NewFakePass returns a fake that plays steps in order.
func NewFakePass(steps ...Step) *FakePass {
	return &FakePass{script: steps, release: make(chan struct{})}
}

// Then appends steps to the script.
func (f *FakePass) Then(steps ...Step) *FakePass {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = append(f.script, steps...)
	return f
}

// Otherwise sets the step every call takes once the script has run out.
func (f *FakePass) Otherwise(s Step) *FakePass {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fallback = s
	return f
}

// Factory returns a factory that builds a new pass value for every sweep.
func (f *FakePass) Factory() passes.Factory {
	return func(context.Context) (passes.Pass, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.builds++
		return &fakeInstance{fake: f, id: f.builds}, nil
	}
}

type fakeInstance struct {
	fake *FakePass
	id   int
}

func (p *fakeInstance) PurgeBatch(ctx context.Context, batchSize int, olderThan time.Time) (int, error) {
	return p.fake.purge(ctx, p.id, batchSize, olderThan)
}

func (f *FakePass) purge(ctx context.Context, id, batchSize int, olderThan time.Time) (int, error) {
	f.mu.Lock()
	step := f.fallback
	if len(f.script) > 0 {
		step, f.script = f.script[0], f.script[1:]
	}
	f.calls = append(f.calls, Call{Instance: id, BatchSize: batchSize, OlderThan: olderThan})
	f.running++
	f.maxRunning = max(f.maxRunning, f.running)
	if step.block {
		f.blocked++
	}
	release := f.release
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	if step.panic != nil {
		panic(step.panic)
	}
	if step.block {
		select {
		case <-release:
		case <-ctx.Done():
			f.mu.Lock()
			f.blocked--
			f.mu.Unlock()
			return 0, ctx.Err()
		}
	}
	return step.rows, step.err
}

// Release lets every batch blocked now return.
func (f *FakePass) Release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.release)
	f.release = make(chan struct{})
	f.blocked = 0
}

// Calls returns every PurgeBatch call so far.
func (f *FakePass) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// Builds returns how many pass values the factory built.
func (f *FakePass) Builds() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.builds
}

// Blocked returns how many batches are blocked now.
func (f *FakePass) Blocked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.blocked
}

// Running returns how many batches are running now, and the most that ever ran at once.
func (f *FakePass) Running() (now, peak int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.running, f.maxRunning
}
