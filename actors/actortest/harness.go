package actortest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes"
)

// Harness runs an actors.Runtime on a manual clock inside a synctest bubble.
type Harness struct {
	T       *testing.T
	Clock   *clock.Manual
	Runtime *actors.Runtime
	Probe   *Probe
	// Logs holds what the runtime's logger wrote (debug and above).
	Logs *SyncBuffer

	cursor  int
	started bool
}

// Run builds a runtime from cfg (its Clock, Logger and first observer are the harness's)
// inside a synctest bubble, calls f, and stops the runtime when f returns. f gets the
// bubble's *testing.T: use it, not the outer test's, to fail from inside the bubble.
func Run(t *testing.T, cfg actors.Config, f func(t *testing.T, h *Harness)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		h := &Harness{T: t, Clock: NewClock(), Probe: &Probe{}, Logs: &SyncBuffer{}}
		logger := logrus.New()
		logger.SetOutput(h.Logs)
		logger.SetLevel(logrus.DebugLevel)
		cfg.Clock, cfg.Logger = h.Clock, logger
		cfg.Observers = append([]actors.Observer{h.Probe}, cfg.Observers...)
		h.Runtime = actors.New(cfg)
		defer h.drainBubble()
		defer h.stop()
		f(t, h)
	})
}

// stop stops a runtime the test left running. Batches still blocked get a grace period
// of StopGrace (bubble time, so it costs nothing) and are then cancelled, so a test that
// leaves a batch blocked cannot deadlock its bubble.
func (h *Harness) stop() {
	if !h.started {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), StopGrace)
	defer cancel()
	if err := h.Runtime.Stop(ctx); err != nil {
		h.T.Logf("stop: %v", err)
	}
}

// drainBubble lets bubble time run past protoactor's own timers (its dead-letter log
// throttle waits a second on a ticker), so no goroutine outlives the bubble. The sleep
// is on the bubble's fake clock and costs no wall time.
func (h *Harness) drainBubble() {
	time.Sleep(protoactorTimers)
}

// protoactorTimers is longer than any timer protoactor starts on its own.
const protoactorTimers = 10 * time.Second

// StopGrace is the grace period the harness gives in-flight batches when the test
// function returns with the runtime still running.
const StopGrace = time.Minute

// Register registers passes, failing the test on error.
func (h *Harness) Register(regs ...passes.Registration) {
	h.T.Helper()
	if err := h.Runtime.Register(regs...); err != nil {
		h.T.Fatalf("register: %v", err)
	}
}

// Start starts the runtime, failing the test on error, and lets it settle.
func (h *Harness) Start() {
	h.T.Helper()
	if err := h.Runtime.Start(context.Background()); err != nil {
		h.T.Fatalf("start: %v", err)
	}
	h.started = true
	h.Settle()
}

// Stop stops the runtime with ctx and returns its error; the harness does not stop it
// again.
func (h *Harness) Stop(ctx context.Context) error {
	h.started = false
	return h.Runtime.Stop(ctx)
}

// Settle waits until every goroutine of the bubble is blocked: every message sent has
// been handled, every batch that can return has returned.
func (h *Harness) Settle() { synctest.Wait() }

// Now returns the virtual time.
func (h *Harness) Now() time.Time { return h.Clock.Now() }

// Elapsed returns the virtual time since Epoch.
func (h *Harness) Elapsed() time.Duration { return h.Clock.Now().Sub(Epoch) }

// Advance moves virtual time forward by d, firing due timers one at a time and settling
// after each.
func (h *Harness) Advance(d time.Duration) {
	h.advanceUntil(h.Clock.Now().Add(d), nil)
}

// advanceUntil advances to target, stopping early (and returning true) once stop
// reports true after a step.
func (h *Harness) advanceUntil(target time.Time, stop func() bool) bool {
	for {
		h.Settle()
		if stop != nil && stop() {
			return true
		}
		next, ok := h.Clock.NextDue()
		if !ok || next.After(target) {
			break
		}
		h.Clock.AdvanceTo(next)
	}
	h.Clock.AdvanceTo(target)
	h.Settle()
	return stop != nil && stop()
}

// Expect returns the first event after the ones already expected that m matches,
// skipping the others (fishing), without moving time. It fails the test when none has
// arrived.
func (h *Harness) Expect(m Match) actors.Event {
	h.T.Helper()
	h.Settle()
	if e, ok := h.find(m); ok {
		return e
	}
	h.T.Fatalf("no matching event; events since the last expected one:\n%s", h.describe())
	return nil
}

// ExpectWithin advances virtual time until an event m matches arrives, at most d, and
// returns it; the clock stays at the moment it arrived.
func (h *Harness) ExpectWithin(d time.Duration, m Match) actors.Event {
	h.T.Helper()
	var found actors.Event
	ok := h.advanceUntil(h.Clock.Now().Add(d), func() bool {
		e, ok := h.find(m)
		found = e
		return ok
	})
	if !ok {
		h.T.Fatalf("no matching event within %v; events since the last expected one:\n%s", d, h.describe())
	}
	return found
}

// ExpectNone advances virtual time by d and fails the test if an event m matches
// arrived meanwhile.
func (h *Harness) ExpectNone(d time.Duration, m Match) {
	h.T.Helper()
	h.Advance(d)
	for _, e := range h.Probe.Events()[h.cursor:] {
		if m(e) {
			h.T.Fatalf("unexpected event %T %+v within %v", e, e, d)
		}
	}
}

func (h *Harness) find(m Match) (actors.Event, bool) {
	events := h.Probe.Events()
	for i := h.cursor; i < len(events); i++ {
		if m(events[i]) {
			h.cursor = i + 1
			return events[i], true
		}
	}
	return nil, false
}

func (h *Harness) describe() string { return describe(h.Probe.Events()[h.cursor:]) }

// describe lists events one a line, for a failure message.
func describe(events []actors.Event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "  %T %+v\n", e, e)
	}
	if b.Len() == 0 {
		return "  (none)"
	}
	return b.String()
}

// Status returns the status of the named pass, failing the test if it is unknown.
func (h *Harness) Status(name string) actors.PassStatus {
	h.T.Helper()
	for _, s := range h.Runtime.Status().Passes {
		if s.Name == name {
			return s
		}
	}
	h.T.Fatalf("no pass %q", name)
	return actors.PassStatus{}
}

// SyncBuffer is a bytes.Buffer safe for concurrent writes.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
