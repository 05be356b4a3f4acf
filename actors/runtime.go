package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/core/observers"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/supervisor"
)

// DefaultMaxConcurrentDeletes is the admission limit per database when Config sets none.
const DefaultMaxConcurrentDeletes = 2

// Config configures a Runtime. The zero value works: its own actor system, the wall
// clock, a logger on stderr, two concurrent deletes per database, default supervision.
type Config struct {
	// System is an actor system of the caller's to run in; nil creates one, which Stop
	// shuts down. A caller's system is left running.
	System *actor.ActorSystem
	// Clock drives stagger, pacing, intervals, timeouts and supervision; nil is the wall
	// clock. Tests pass a *clock.Manual.
	Clock clock.Clock
	// Logger receives the built-in log observer's lines and, for a system the runtime
	// creates, protoactor's own; nil logs to stderr at info.
	Logger *logrus.Logger
	// ProtoactorVerbose lets protoactor's info lines through; by default only its
	// warnings and errors reach Logger, so a healthy node is quiet.
	ProtoactorVerbose bool
	// MaxConcurrentDeletes bounds the batches running at once per database; 0 means
	// DefaultMaxConcurrentDeletes.
	MaxConcurrentDeletes int
	// DatabaseLimits overrides MaxConcurrentDeletes for named databases.
	DatabaseLimits map[string]int
	// SlotPools makes the slot pool of each database, given its limit; nil makes
	// NewLocalSlotPool(capacity). A pool shared by several nodes plugs in here.
	SlotPools func(database string, capacity int) SlotPool
	// Supervision is the restart policy; the zero value takes its defaults.
	Supervision supervisor.Policy
	// Observers hear every event after the built-in log observer, in this order.
	Observers []Observer
	// FailureReporter hears of observer failures; nil logs them to Logger at warning.
	FailureReporter observers.FailureReporter
}

// Runtime runs registered passes on actors. Register every pass, Start, and Stop when
// done; Trigger and Status may be called from any goroutine while it runs.
type Runtime struct {
	cfg      Config
	clock    clock.Clock
	logger   *logrus.Logger
	registry passes.Registry

	mu      sync.Mutex
	started bool
	stopped bool
	cells   map[string]*passCell
	order   []*passCell
	byPID   sync.Map // pass actor PID id -> *passCell

	system     *actor.ActorSystem
	ownSystem  bool
	guard      *observers.Guard
	d          *deps
	groups     []*actor.PID
	admission  []*actor.PID
	dbSlotPool map[string]SlotPool
	cancel     context.CancelFunc
}

// New returns a runtime with cfg; nothing runs until Start.
func New(cfg Config) *Runtime {
	logger := cfg.Logger
	if logger == nil {
		logger = logrus.New()
	}
	return &Runtime{cfg: cfg, clock: clock.OrReal(cfg.Clock), logger: logger, cells: map[string]*passCell{}}
}

// Register adds a pass. A name already registered is refused with a
// *passes.DuplicateNameError; registering after Start is refused too. The registration
// itself is validated by Start, with every other one.
func (r *Runtime) Register(regs ...passes.Registration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return core.NewBusinessRuleError("retention: register every pass before Start")
	}
	var errs []error
	for _, reg := range regs {
		if err := r.registry.Add(reg); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Start validates every registration (returning all problems at once, each naming its
// pass), then spawns the observer hub, the admission actors and the pass actors. Each
// pass's first sweep follows after its stagger offset.
func (r *Runtime) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return core.NewBusinessRuleError("retention: runtime already started")
	}
	if err := r.registry.Validate(); err != nil {
		return fmt.Errorf("retention: invalid passes: %w", err)
	}
	if err := r.validateLimits(); err != nil {
		return err
	}
	r.started = true
	r.system, r.ownSystem = r.cfg.System, r.cfg.System == nil
	if r.ownSystem {
		r.system = actor.NewActorSystem(actor.WithLoggerFactory(r.protoactorLogger))
	}
	batchBase, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	r.d = &deps{system: r.system, clock: r.clock, batchBase: batchBase, pools: map[string]*actor.PID{}}
	r.spawnHub()
	r.spawnAdmission()
	return r.spawnPasses(ctx)
}

func (r *Runtime) protoactorLogger(s *actor.ActorSystem) *slog.Logger {
	level := slog.LevelWarn
	if r.cfg.ProtoactorVerbose {
		level = slog.LevelInfo
	}
	return slog.New(NewSlogHandler(r.logger, level)).With("lib", "protoactor", "system", s.ID)
}

func (r *Runtime) validateLimits() error {
	fields := map[string][]string{}
	if r.cfg.MaxConcurrentDeletes < 0 {
		fields["max_concurrent_deletes"] = []string{fmt.Sprintf("must not be negative, got %d", r.cfg.MaxConcurrentDeletes)}
	}
	for db, n := range r.cfg.DatabaseLimits {
		if n < 1 {
			fields["database_limits."+db] = []string{fmt.Sprintf("must be at least 1, got %d", n)}
		}
	}
	if len(fields) == 0 {
		return nil
	}
	return core.NewValidationErrorMessage("retention: invalid admission limits", fields)
}

func (r *Runtime) spawnHub() {
	reporter := r.cfg.FailureReporter
	if reporter == nil {
		reporter = LogFailureReporter{Logger: r.logger}
	}
	r.guard = observers.NewGuard(reporter)
	all := append([]Observer{&LogObserver{Logger: r.logger}}, r.cfg.Observers...)
	r.d.hub = r.system.Root.SpawnPrefix(newHubProps(observers.NewComposite(r.guard, all...)), "retention-observers")
}

func (r *Runtime) spawnAdmission() {
	r.d.gate = r.system.Root.SpawnPrefix(newGateProps(), "retention-gate")
	r.admission = append(r.admission, r.d.gate)
	r.dbSlotPool = map[string]SlotPool{}
	newPool := r.cfg.SlotPools
	if newPool == nil {
		newPool = func(_ string, capacity int) SlotPool { return NewLocalSlotPool(capacity) }
	}
	for _, reg := range r.registry.All() {
		db := reg.DatabaseName()
		if _, ok := r.d.pools[db]; ok {
			continue
		}
		pool := newPool(db, r.limitFor(db))
		pid := r.system.Root.SpawnPrefix(pool.Props(), "retention-slots")
		r.d.pools[db], r.dbSlotPool[db] = pid, pool
		r.admission = append(r.admission, pid)
	}
}

func (r *Runtime) limitFor(db string) int {
	if n, ok := r.cfg.DatabaseLimits[db]; ok {
		return n
	}
	if r.cfg.MaxConcurrentDeletes > 0 {
		return r.cfg.MaxConcurrentDeletes
	}
	return DefaultMaxConcurrentDeletes
}

// spawnPasses puts the one-for-one passes under one supervisor and each all-for-one
// group under its own, and waits until every pass actor exists.
func (r *Runtime) spawnPasses(ctx context.Context) error {
	groups := map[string][]*passCell{}
	var names []string
	for _, reg := range r.registry.All() {
		c := newPassCell(reg)
		r.cells[reg.Name], r.order = c, append(r.order, c)
		if _, ok := groups[reg.Group]; !ok {
			names = append(names, reg.Group)
		}
		groups[reg.Group] = append(groups[reg.Group], c)
	}
	var readies []chan struct{}
	for _, name := range names {
		cells := groups[name]
		var strategy *supervisor.Strategy
		if name == "" {
			strategy = supervisor.NewOneForOne(r.clock, r.cfg.Supervision, supervision{r}, supervision{r})
		} else {
			strategy = supervisor.NewAllForOne(r.clock, r.cfg.Supervision, supervision{r}, supervision{r})
		}
		for _, c := range cells {
			c.strategy = strategy
		}
		ready := make(chan struct{})
		readies = append(readies, ready)
		g := &groupActor{cells: cells, d: r.d, rt: r, ready: ready}
		props := actor.PropsFromProducer(func() actor.Actor { return g }, actor.WithSupervisor(strategy))
		pid := r.system.Root.SpawnPrefix(props, "retention-passes")
		for _, c := range cells {
			c.group = pid
		}
		r.groups = append(r.groups, pid)
	}
	for _, ready := range readies {
		select {
		case <-ready:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (r *Runtime) cellOf(pid *actor.PID) *passCell {
	if c, ok := r.byPID.Load(pid.Id); ok {
		return c.(*passCell)
	}
	return nil
}

// supervision is the runtime as its strategies see it: the child lookup and the
// listener, kept off the Runtime's own method set.
type supervision struct{ r *Runtime }

// Interval tells supervision a pass's normal interval.
func (s supervision) Interval(pid *actor.PID) time.Duration {
	if c := s.r.cellOf(pid); c != nil {
		return c.reg.Options.EffectiveInterval()
	}
	return passes.DefaultSweepInterval
}

// Restarting records the backoff for each restarted pass and publishes PassRestarted.
func (s supervision) Restarting(failed *actor.PID, restarted []*actor.PID, reason any, d supervisor.Decision, attempt int) {
	err := reasonError(reason)
	if c := s.r.cellOf(failed); c != nil {
		c.noteFailure(d.Class, err)
	}
	for _, pid := range restarted {
		if c := s.r.cellOf(pid); c != nil {
			c.noteRestart(d.Delay)
			s.r.d.publish(PassRestarted{Name: c.reg.Name, Attempt: attempt, Backoff: d.Delay, Class: d.Class, Err: err})
		}
	}
}

// GivingUp marks each stopped pass degraded; its PassStopped event follows when the
// actor stops.
func (s supervision) GivingUp(_ *actor.PID, stopped []*actor.PID, reason any, failures int) {
	err := fmt.Errorf("%d failures within the restart window: %w", failures, reasonError(reason))
	for _, pid := range stopped {
		if c := s.r.cellOf(pid); c != nil {
			c.noteGaveUp(err)
		}
	}
}

func reasonError(reason any) error {
	if err, ok := reason.(error); ok {
		return err
	}
	return &core.PanicError{Value: reason}
}

// Trigger asks the named pass to sweep now: at once when it is idle, or right after the
// sweep it is running (a trigger never overlaps a sweep, and several triggers during one
// sweep make one follow-up). A trigger also cuts a backoff short. It fails with a
// *core.NotFoundError for an unknown name and a *core.BusinessRuleError for a pass that
// never sweeps or was stopped.
func (r *Runtime) Trigger(name string) error { return r.TriggerRun(name) }

// TriggerRun is Trigger on behalf of requested sweeps recorded in the ledger: the sweep
// it starts (or the follow-up it schedules) carries runs in its SweepStarted, so the
// ledger observer finishes those runs instead of starting a new one.
func (r *Runtime) TriggerRun(name string, runs ...int64) error {
	c, err := r.runningCell(name)
	if err != nil {
		return err
	}
	if !c.reg.Options.Enabled() {
		return core.NewBusinessRuleError(fmt.Sprintf("pass %q has no retention period, so it never sweeps", name))
	}
	if _, degraded := c.gaveUpWith(); degraded {
		return core.NewBusinessRuleError(fmt.Sprintf("pass %q was stopped by supervision", name))
	}
	r.system.Root.Send(c.pid.Load(), &triggerSweep{runs: runs})
	return nil
}

// PassNames returns the registered pass names, in registration order.
func (r *Runtime) PassNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for _, reg := range r.registry.All() {
		names = append(names, reg.Name)
	}
	return names
}

// Status returns a snapshot of every pass, in registration order, and of the admission
// pools.
func (r *Runtime) Status() Status {
	r.mu.Lock()
	cells := slices.Clone(r.order)
	r.mu.Unlock()
	st := Status{Slots: map[string]SlotStatus{}}
	for _, c := range cells {
		ps := c.snapshot()
		st.Passes = append(st.Passes, ps)
		st.Degraded = st.Degraded || ps.Degraded
		st.Drift = st.Drift || ps.Drift
	}
	for db, pool := range r.dbSlotPool {
		st.Slots[db] = pool.Status()
	}
	return st
}

// Stop stops the runtime gracefully: no pass starts another batch, in-flight batches
// finish, and every actor is stopped (protoactor's ActorSystem.Shutdown stops none). When
// ctx ends before the batches finish (the grace period), their contexts are cancelled;
// a batch is one transaction, so a cancelled one leaves nothing half-deleted. Stop then
// still waits for them to return, so a pass must honour its context.
func (r *Runtime) Stop(ctx context.Context) error {
	r.mu.Lock()
	if !r.started || r.stopped {
		r.mu.Unlock()
		return nil
	}
	r.stopped = true
	cells := slices.Clone(r.order)
	r.mu.Unlock()

	graceful := r.drain(ctx, cells)
	root := r.system.Root
	for _, g := range r.groups {
		_ = root.StopFuture(g).Wait()
	}
	_ = root.PoisonFuture(r.d.hub).Wait() // delivers the events still queued
	for _, pid := range r.admission {
		_ = root.StopFuture(pid).Wait()
	}
	r.cancel()
	if r.ownSystem {
		r.system.Shutdown()
	}
	if !graceful {
		return fmt.Errorf("retention: stop grace period ended, in-flight batches were cancelled: %w", ctx.Err())
	}
	return nil
}

// drain asks every live pass to finish its batch and waits; past ctx it cancels the
// batches and waits for them to return. It reports whether the drain beat ctx.
func (r *Runtime) drain(ctx context.Context, cells []*passCell) bool {
	type drainWait struct{ done, gone <-chan struct{} }
	var waits []drainWait
	for _, c := range cells {
		if _, degraded := c.gaveUpWith(); degraded || c.pid.Load() == nil {
			continue
		}
		done := make(chan struct{})
		waits = append(waits, drainWait{done: done, gone: c.goneCh()})
		r.system.Root.Send(c.pid.Load(), &drainPass{done: done})
	}
	graceful := true
	for _, w := range waits {
		select {
		case <-w.done:
			continue
		case <-w.gone: // supervision stopped it before it saw the request
			continue
		case <-ctx.Done():
		}
		graceful = false
		r.cancel()
		select {
		case <-w.done:
		case <-w.gone:
		}
	}
	return graceful
}

// ObserverFailures returns how many observer calls failed and how many failure reports
// failed in turn.
func (r *Runtime) ObserverFailures() (failures, reporterFailures int64) {
	if r.guard == nil {
		return 0, 0
	}
	return r.guard.Failures(), r.guard.ReporterFailures()
}

// System returns the actor system the runtime runs in (nil before Start).
func (r *Runtime) System() *actor.ActorSystem {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.system
}

// PassPID returns the PID of the named pass's actor, for a caller that wants to watch
// it; nil when there is none. The PID stays the same across supervised restarts.
func (r *Runtime) PassPID(name string) *actor.PID {
	r.mu.Lock()
	c := r.cells[name]
	r.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.pid.Load()
}

// Revive starts a new actor for a pass that supervision stopped, as a dead-letter retry
// does, and returns once it runs. Its restart history starts afresh. A pass that is
// running is a *core.BusinessRuleError; an unknown one a *core.NotFoundError.
func (r *Runtime) Revive(ctx context.Context, name string) error {
	c, err := r.runningCell(name)
	if err != nil {
		return err
	}
	if _, degraded := c.gaveUpWith(); !degraded {
		return core.NewBusinessRuleError(fmt.Sprintf("pass %q is running; only a pass stopped by supervision can be revived", name))
	}
	select {
	case <-c.goneCh(): // the old actor is gone: its PassStopped is out
	case <-ctx.Done():
		return ctx.Err()
	}
	done := make(chan struct{})
	r.system.Root.Send(c.group, &revivePass{cell: c, done: done})
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// degraded reports whether the named pass exists and was stopped by supervision.
func (r *Runtime) degraded(name string) (exists, degraded bool) {
	r.mu.Lock()
	c := r.cells[name]
	r.mu.Unlock()
	if c == nil {
		return false, false
	}
	_, degraded = c.gaveUpWith()
	return true, degraded
}

// runningCell returns the named pass of a running runtime, or why there is none.
func (r *Runtime) runningCell(name string) (*passCell, error) {
	r.mu.Lock()
	c, running := r.cells[name], r.started && !r.stopped
	r.mu.Unlock()
	switch {
	case !running:
		return nil, core.NewBusinessRuleError("retention: runtime is not running")
	case c == nil:
		return nil, core.NewNotFoundError("pass", name)
	}
	return c, nil
}
