package live

import (
	"context"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core/clock"
	"github.com/retentionkit/retention/passes/ledger"
)

// DefaultPollInterval is how often a node reads the live settings when Poller.Interval
// is zero: short enough that a pause or a new batch size reaches every node within
// seconds, and one indexed read of a small table each time.
const DefaultPollInterval = 2 * time.Second

// Settings is where the poller reads the stored settings (a *ledger.Ledger).
type Settings interface {
	Settings(ctx context.Context, prefix string) ([]ledger.Setting, error)
}

// Runtime is what the poller applies them to (an *actors.Runtime).
type Runtime interface {
	PassNames() []string
	SetOverride(name string, ov actors.Override) error
}

// Poller reads the live settings every Interval on Clock and hands each pass whose
// settings changed its new Override. The zero value is not usable: Settings and
// Runtime are required; Clock nil is the wall clock, Logger nil discards.
type Poller struct {
	Settings Settings
	Runtime  Runtime
	Clock    clock.Clock
	Interval time.Duration
	Logger   logrus.FieldLogger

	mu       sync.Mutex
	applied  map[string]actors.Override
	reported map[string]bool // ignored settings already logged, so each is logged once
	timer    clock.Timer
	stopped  bool
}

// Poll reads the settings once and applies what changed since the last poll. The node
// calls it once right after the runtime starts, so a pass paused in the ledger is held
// before its first sweep (which the startup stagger puts later), then Start polls on.
func (p *Poller) Poll(ctx context.Context) error {
	settings, err := p.Settings.Settings(ctx, ledger.PassSettingPrefix)
	if err != nil {
		return err
	}
	names := p.Runtime.PassNames()
	overrides, problems := Overrides(settings, names)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.applied == nil {
		p.applied, p.reported = map[string]actors.Override{}, map[string]bool{}
	}
	seen := map[string]bool{}
	for _, e := range problems {
		seen[e.Error()] = true
		if !p.reported[e.Error()] {
			p.logger().Warn(e.Error())
		}
	}
	p.reported = seen
	for _, name := range names {
		ov := overrides[name]
		if equal(ov, p.applied[name]) {
			continue
		}
		if err := p.Runtime.SetOverride(name, ov); err != nil {
			p.logger().WithField("pass", name).WithError(err).Warn("live settings not applied")
			continue
		}
		p.applied[name] = ov
	}
	return nil
}

// Start polls every Interval until Stop; a failed read is logged and tried again at
// the next tick.
func (p *Poller) Start(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scheduleLocked(ctx)
}

func (p *Poller) scheduleLocked(ctx context.Context) {
	if p.stopped {
		return
	}
	every := p.Interval
	if every <= 0 {
		every = DefaultPollInterval
	}
	p.timer = clock.OrReal(p.Clock).AfterFunc(every, func() {
		pctx, cancel := context.WithTimeout(ctx, max(every, time.Second))
		if err := p.Poll(pctx); err != nil && ctx.Err() == nil {
			p.logger().WithError(err).Warn("live settings: read failed; keeping the last ones")
		}
		cancel()
		p.mu.Lock()
		defer p.mu.Unlock()
		p.scheduleLocked(ctx)
	})
}

// Stop ends the polling; a poll already running finishes.
func (p *Poller) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.timer != nil {
		p.timer.Stop()
	}
}

func (p *Poller) logger() logrus.FieldLogger {
	if p.Logger == nil {
		l := logrus.New()
		l.SetLevel(logrus.PanicLevel)
		return l
	}
	return p.Logger
}

func equal(a, b actors.Override) bool {
	return eqPtr(a.BatchSize, b.BatchSize) && eqPtr(a.BatchDelay, b.BatchDelay) && eqPtr(a.SweepInterval, b.SweepInterval) &&
		a.Pacing == b.Pacing && a.Paused == b.Paused
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
