package actors

import (
	"context"
	"errors"
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

// DefaultElsewhereRetry is Config.ElsewhereRetry's default.
const DefaultElsewhereRetry = 5 * time.Second

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
	SlotPools func(database string, capacity int) AdmissionPool
	// ElsewhereRetry is how long a pass waits before trying again after a sweep that
	// ended Elsewhere (another member holds its lock); the wait doubles with every denial
	// in a row, up to the pass's interval. Short, because the holder may be a duplicate
	// activation about to stop; doubling, because it may also be a long drain, and each
	// try costs a ledger run. 0 means DefaultElsewhereRetry.
	ElsewhereRetry time.Duration
	// Supervision is the restart policy; the zero value takes its defaults.
	Supervision supervisor.Policy
	// Observers hear every event after the built-in log observer, in this order.
	Observers []Observer
	// Placed starts no pass at Start: each runs only between Activate and Deactivate,
	// so something outside the runtime (cluster mode) decides where a pass runs. False,
	// the default, starts every pass at Start.
	Placed bool
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
	dbSlotPool map[string]AdmissionPool
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
