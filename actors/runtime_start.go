package actors

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/core/observers"
	"github.com/retentionkit/retention/supervisor"
)

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
	r.d = &deps{system: r.system, clock: r.clock, batchBase: batchBase, pools: map[string]*actor.PID{}, elsewhereRetry: r.cfg.ElsewhereRetry}
	if r.d.elsewhereRetry <= 0 {
		r.d.elsewhereRetry = DefaultElsewhereRetry
	}
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
	r.dbSlotPool = map[string]AdmissionPool{}
	newPool := r.cfg.SlotPools
	if newPool == nil {
		newPool = func(_ string, capacity int) AdmissionPool { return NewLocalSlotPool(capacity) }
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
		if r.cfg.Placed {
			c.status.State = StateInactive
		}
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
