package supervisor_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/supervisor"
)

// fakeSupervisor records what a strategy asked of it.
type fakeSupervisor struct {
	children  []*actor.PID
	restarted [][]*actor.PID
	stopped   [][]*actor.PID
}

func (s *fakeSupervisor) Children() []*actor.PID             { return s.children }
func (s *fakeSupervisor) EscalateFailure(any, any)           {}
func (s *fakeSupervisor) RestartChildren(pids ...*actor.PID) { s.restarted = append(s.restarted, pids) }
func (s *fakeSupervisor) StopChildren(pids ...*actor.PID)    { s.stopped = append(s.stopped, pids) }
func (s *fakeSupervisor) ResumeChildren(...*actor.PID)       {}

type listener struct {
	attempts []int
	delays   []time.Duration
	gaveUp   []int
}

func (l *listener) Restarting(_ *actor.PID, _ []*actor.PID, _ any, d supervisor.Decision, attempt int) {
	l.attempts = append(l.attempts, attempt)
	l.delays = append(l.delays, d.Delay)
}

func (l *listener) GivingUp(_ *actor.PID, _ []*actor.PID, _ any, failures int) {
	l.gaveUp = append(l.gaveUp, failures)
}

type interval time.Duration

func (i interval) Interval(*actor.PID) time.Duration { return time.Duration(i) }

var errBoom = errors.New("errBoom")

func TestOneForOneStopsPastTheLimitWithinTheWindow(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Unix(0, 0))
	l := &listener{}
	s := supervisor.NewOneForOne(clk, supervisor.Policy{Limit: supervisor.Limit{MaxRestarts: 2, Window: time.Minute}}, interval(time.Hour), l)
	a, b := actor.NewPID("local", "a"), actor.NewPID("local", "b")
	sup := &fakeSupervisor{children: []*actor.PID{a, b}}

	s.HandleFailure(nil, sup, a, nil, errBoom, nil)
	clk.Advance(61 * time.Second) // the first failure leaves the window
	s.HandleFailure(nil, sup, a, nil, errBoom, nil)
	s.HandleFailure(nil, sup, a, nil, errBoom, nil)
	s.HandleFailure(nil, sup, b, nil, errBoom, nil) // b has a history of its own
	if len(sup.stopped) != 0 || len(sup.restarted) != 4 {
		t.Fatalf("stopped %v, restarted %v; want 4 restarts and no stop", sup.stopped, sup.restarted)
	}
	if want := []int{1, 2, 3, 1}; !slices.Equal(l.attempts, want) {
		t.Fatalf("attempts = %v, want %v", l.attempts, want)
	}
	s.HandleFailure(nil, sup, a, nil, errBoom, nil) // third within the minute
	if len(sup.stopped) != 1 || sup.stopped[0][0] != a || len(sup.stopped[0]) != 1 || !slices.Equal(l.gaveUp, []int{3}) {
		t.Fatalf("stopped %v, gave up %v", sup.stopped, l.gaveUp)
	}
}

func TestGoodSweepResetsTheBackoffButNotTheWindow(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Unix(0, 0))
	l := &listener{}
	s := supervisor.NewOneForOne(clk, supervisor.Policy{Limit: supervisor.Limit{MaxRestarts: 2, Window: time.Hour}}, interval(time.Hour), l)
	a := actor.NewPID("local", "a")
	sup := &fakeSupervisor{children: []*actor.PID{a}}
	s.HandleFailure(nil, sup, a, nil, errBoom, nil)
	s.HandleFailure(nil, sup, a, nil, errBoom, nil)
	s.GoodSweep(a)
	s.HandleFailure(nil, sup, a, nil, errBoom, nil)
	if want := []time.Duration{time.Second, 2 * time.Second}; !slices.Equal(l.delays, want) {
		t.Fatalf("delays = %v, want %v", l.delays, want)
	}
	if len(sup.stopped) != 1 {
		t.Fatalf("a good sweep cleared the restart window: stopped %v", sup.stopped)
	}
}

func TestAllForOneRestartsAndStopsTheWholeGroup(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Unix(0, 0))
	l := &listener{}
	s := supervisor.NewAllForOne(clk, supervisor.Policy{Limit: supervisor.Limit{MaxRestarts: 1}}, interval(time.Hour), l)
	a, b := actor.NewPID("local", "a"), actor.NewPID("local", "b")
	sup := &fakeSupervisor{children: []*actor.PID{a, b}}
	s.HandleFailure(nil, sup, a, nil, errBoom, nil)
	if len(sup.restarted) != 1 || len(sup.restarted[0]) != 2 {
		t.Fatalf("restarted %v, want both", sup.restarted)
	}
	s.HandleFailure(nil, sup, b, nil, errBoom, nil) // the group shares one history
	if len(sup.stopped) != 1 || len(sup.stopped[0]) != 2 {
		t.Fatalf("stopped %v, want both", sup.stopped)
	}
}

func TestDriftNeverCountsTowardTheRestartLimit(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Unix(0, 0))
	l := &listener{}
	s := supervisor.NewOneForOne(clk, supervisor.Policy{Limit: supervisor.Limit{MaxRestarts: 2, Window: time.Minute}}, interval(time.Hour), l)
	a := actor.NewPID("local", "a")
	sup := &fakeSupervisor{children: []*actor.PID{a}}
	drift := fmt.Errorf("sweep: %w", &core.SchemaDriftError{Err: errBoom})
	for range 10 {
		s.HandleFailure(nil, sup, a, nil, drift, nil)
	}
	if len(sup.stopped) != 0 || len(sup.restarted) != 10 {
		t.Fatalf("stopped %v, restarted %d times; want 10 restarts and no stop", sup.stopped, len(sup.restarted))
	}
	if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(l.attempts, want) {
		t.Fatalf("attempts = %v, want %v: drift still drives the backoff", l.attempts, want)
	}
	s.HandleFailure(nil, sup, a, nil, errBoom, nil)
	s.HandleFailure(nil, sup, a, nil, errBoom, nil)
	if len(sup.stopped) != 0 {
		t.Fatal("two counted failures within the limit of 2 stopped the pass: the drift ones were counted")
	}
	s.HandleFailure(nil, sup, a, nil, errBoom, nil)
	if len(sup.stopped) != 1 {
		t.Fatal("the third counted failure did not stop the pass")
	}
}
