package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// SweepOptions say how Sweep runs its one sweep, beyond what the file says. The zero
// value sweeps every enabled pass once, with the ledger if the file enables it, logging
// nowhere and retrying the startup checks for DefaultStartupRetry.
type SweepOptions struct {
	// Only names the passes to sweep; empty (the default) sweeps every enabled pass. A
	// name neither the file nor Passes has is a *ConfigError, before anything is checked.
	Only []string
	// Passes are the program's own passes (GoPass), swept beside the file's table passes
	// as Options.Passes run beside them in a node, so an embedding program sweeps its Go
	// passes once the way `retention sweep` sweeps tables; a name that repeats the file's
	// is a *ConfigError. A drain sweeps a Go pass again while it stops at its batch limit
	// and takes any other end as drained: there is no table to count what is left.
	Passes []Pass
	// Drain repeats a pass's sweeps while the last stopped at its batch limit, and,
	// within DrainRetry, while expired rows it could not reach are left; a pass that ends
	// with rows left has SweepTotals.Left set. Adaptive passes sweep unbounded.
	Drain bool
	// DrainRetry bounds a drain's retries of rows its sweeps could not reach (locked by
	// other transactions, batches that timed out); zero (the default) gives up at once.
	// `retention sweep` passes DefaultDrainRetry unless told otherwise.
	DrainRetry time.Duration
	// NoLedger leaves the ledger out whatever the file says: no runs recorded, no
	// quarantine, no ledger table created; a row that cannot be deleted is skipped. False
	// (the default) uses the ledger when the file enables it.
	NoLedger bool
	// Logger receives the sweep's lines; nil discards them, as Options.Logger.
	Logger *logrus.Logger
	// Startup bounds the startup checks' retries, as Options.Startup.
	Startup StartupOptions
	// Observers hear every pass event after the ledger has (a progress display listens
	// for actors.BatchDone here). They run on the runtime's goroutines: keep them quick.
	Observers []actors.Observer
	// BeforeSweep, when set, is called with the passes about to be swept once the checks
	// have passed and before the first sweep starts (for a display that estimates each
	// pass's rows first); nil does nothing.
	BeforeSweep func(ctx context.Context, ps []Pass)
	// Batch, when set, is called from Sweep's goroutine with each batch of the swept
	// passes, in order, before its pass's PassDone (a progress display, unlike an
	// observer, needs no lock); nil does nothing.
	Batch func(e actors.BatchDone)
	// PassDone, when set, is called from Sweep's goroutine as each pass finishes (its
	// last sweep is in, or it gave up); nil does nothing.
	PassDone func(name string)
}

// SweepTotals add up one pass's sweeps in a Sweep.
type SweepTotals struct {
	// Name is the pass's.
	Name string
	// Rows, Skipped and Batches add up the pass's sweeps; Sweeps counts them (more than
	// one only in a drain).
	Rows, Skipped, Batches, Sweeps int
	// Duration adds up the sweeps' durations.
	Duration time.Duration
	// Reason is why the pass's last sweep stopped.
	Reason actors.StopReason
	// Failed is the pass's last failure; nil when none.
	Failed error
	// Left is why the pass is not done: a batch timed out, or a drain left rows; nil
	// when it is.
	Left error
}

// SweepResult is what a Sweep did, a SweepTotals per swept pass in the file's order.
type SweepResult struct {
	// Passes are the swept passes' totals.
	Passes []SweepTotals
}

// Err is why the sweep is not a success, every pass's reason joined (a pass that failed,
// a batch that timed out, a drain that left rows), so one error says it all; nil when
// every pass is done.
func (r SweepResult) Err() error {
	var failed, left []string
	for _, t := range r.Passes {
		if t.Reason == actors.Failed && t.Failed != nil {
			failed = append(failed, namedOnce(t.Name, t.Failed))
		}
		if t.Left != nil {
			left = append(left, t.Left.Error())
		}
	}
	var errs []error
	if len(failed) > 0 {
		errs = append(errs, fmt.Errorf("%s failed: %s", counted(len(failed), "pass", "passes"), strings.Join(failed, "; ")))
	}
	if len(left) > 0 {
		errs = append(errs, fmt.Errorf("not done: %s", strings.Join(left, "; ")))
	}
	return errors.Join(errs...)
}

// namedOnce is err's text starting with the pass's name once: a table pass's errors
// name their pass already.
func namedOnce(name string, err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, fmt.Sprintf("pass %q", name)) {
		return msg
	}
	return name + ": " + msg
}

// Sweep is `retention sweep`: one sweep of cfg's enabled passes (opts.Only's, when set),
// then everything released, without a running node. It validates cfg, opens the
// database, runs the startup checks, creates or upgrades the ledger tables, in cluster
// mode checks the database and takes the members' sweep locks (a pass a member is
// sweeping ends "elsewhere"), joins the ledger with a heartbeat, and sweeps each pass as
// soon as its runtime starts, with no stagger and none of the ledger's own loops. What it
// acquires is released, the last first, before it returns, however it ends (the database
// and passes come from OpenTables, which validates cfg).
//
// The error is why the sweep could not run: a *ConfigError for a configuration (or
// opts.Only) found wrong, a database that never answered, ctx ending (with the totals so
// far). How the passes ended is in the result: SweepResult.Err says whether any failed
// or, drained, left rows.
func Sweep(ctx context.Context, cfg *config.Config, opts SweepOptions) (SweepResult, error) {
	s, err := openSweep(ctx, cfg, opts.Logger, opts.NoLedger, opts.Passes, opts.Only)
	if err != nil {
		return SweepResult{}, err
	}
	s.opts = opts
	defer s.undo.close()
	if err := s.prepare(ctx); err != nil {
		return SweepResult{}, err
	}
	return s.run(ctx)
}

// sweep is one Sweep's or DryRun's state; undo releases what it acquired.
type sweep struct {
	cfg    *config.Config
	opts   SweepOptions
	db     *bun.DB
	log    *logrus.Logger
	ledger *ledger.Ledger // nil without the ledger
	passes []Pass         // every pass of the file, then the program's
	plan   *ledger.Plan   // the metadata cleanup's, for the startup checks; nil without
	chosen []Pass         // the ones swept: enabled, and named by only when it names any
	undo   closers
}

// openSweep opens what Sweep and DryRun share: cfg's database, ledger (unless noLedger)
// and table passes with extra beside them, the names in only checked against them and
// the passes to sweep chosen. On error nothing stays open; otherwise the caller closes
// s.undo.
func openSweep(ctx context.Context, cfg *config.Config, log *logrus.Logger, noLedger bool, extra []Pass, only []string) (*sweep, error) {
	if log == nil {
		log = logrus.New()
		log.SetOutput(io.Discard)
	}
	t, err := OpenTables(ctx, cfg, TablesOptions{NoLedger: noLedger, Logger: log})
	if err != nil {
		return nil, err
	}
	s := &sweep{cfg: cfg, db: t.DB, log: log, ledger: t.Ledger, passes: append(t.Passes, extra...), plan: t.Plan}
	s.undo.push(func() { _ = t.Close() })
	names := passNames(s.passes)
	for i, p := range extra {
		if slices.Contains(names[:len(t.Passes)+i], p.Name()) {
			s.undo.close()
			return nil, badConfig(fmt.Errorf("pass %q: the program's pass repeats a pass name of the configuration", p.Name()))
		}
	}
	for _, name := range only {
		if !slices.Contains(names, name) {
			s.undo.close()
			return nil, badConfig(fmt.Errorf("--pass %q: no such pass in the configuration (passes: %s)", name, strings.Join(names, ", ")))
		}
	}
	for _, p := range s.passes {
		if (len(only) == 0 || slices.Contains(only, p.Name())) && p.Options().Enabled() {
			s.chosen = append(s.chosen, p)
		}
	}
	return s, nil
}

// prepare runs every check and setup step before the first sweep.
func (s *sweep) prepare(ctx context.Context) error {
	if err := CheckStartup(ctx, s.log, s.passes, s.plan, s.opts.Startup); err != nil {
		return err
	}
	if s.ledger != nil {
		if err := MigrateLedger(ctx, s.log, s.db, s.cfg); err != nil {
			return err
		}
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	if s.opts.BeforeSweep != nil {
		s.opts.BeforeSweep(ctx, append([]Pass(nil), s.chosen...))
	}
	if s.ledger != nil {
		joined, stop, err := JoinLedger(ctx, s.log, s.ledger, "")
		if err != nil {
			return err
		}
		s.undo.push(stop)
		s.ledger = joined
	}
	if s.opts.Drain {
		drainUnbounded(s.chosen)
	}
	return nil
}

// lock is cluster mode's part of a one-off sweep: it joins no cluster, but its sweeps
// take the same locks as the members' (LockTables), so a manual sweep never runs beside
// a member's sweep of the same pass. Its connections are named retention:sweep-<pid>.
func (s *sweep) lock(ctx context.Context) error {
	if !s.cfg.Cluster.Enabled {
		return nil
	}
	if err := CheckClusterDatabase(ctx, s.db, s.cfg); err != nil {
		return err
	}
	return LockTables(s.chosen, passes.SweepConnOptions{ApplicationName: passes.MemberAppPrefix + "sweep-" + strconv.Itoa(os.Getpid())})
}

// drainUnbounded makes the adaptive passes of a drain unbounded: their controller keeps
// the workload's latency in bounds, so the drain is one sweep that runs until the
// backlog is gone, rather than a chain of bounded sweeps each starting with a baseline
// to learn. Fixed passes keep their bound.
func drainUnbounded(ps []Pass) {
	for i := range ps {
		if ps[i].Options().Adaptive() {
			ps[i].Registration.Options.MaxBatchesPerSweep = passes.Unbounded
		}
	}
}

// runtime builds and starts the runtime of the chosen passes with the ledger observer,
// each sweeping as soon as it starts; undo stops it.
func (s *sweep) runtime(ctx context.Context, events chan<- actors.Event) (*actors.Runtime, error) {
	var all []actors.Observer
	if s.ledger != nil {
		all = append(all, &actors.LedgerObserver{Ledger: s.ledger})
	}
	all = append(all, s.opts.Observers...)
	all = append(all, actors.ObserverFunc(func(e actors.Event) error {
		events <- e
		return nil
	}))
	reporter := actors.LogFailureReporter{Logger: s.log, Redact: func(err error) string {
		return passes.RedactTextFor(s.cfg.Database.Driver, err.Error(), s.cfg.Database.DSN)
	}}
	rt := actors.New(actors.Config{Logger: s.log, MaxConcurrentDeletes: s.cfg.Node.MaxConcurrentDeletes, Observers: all, FailureReporter: reporter})
	for _, p := range s.chosen {
		r := p.Registration
		r.Options.MaxStartupStagger = 0
		if err := rt.Register(r); err != nil {
			return nil, badConfig(err)
		}
	}
	if err := rt.Start(ctx); err != nil {
		return nil, badConfig(err)
	}
	s.undo.push(func() { _ = rt.Stop(context.WithoutCancel(ctx)) })
	return rt, nil
}

// run sweeps the chosen passes (drained: again while the last sweep reports work
// remaining, or rows it could not reach, within DrainRetry) until each is done.
func (s *sweep) run(ctx context.Context) (SweepResult, error) {
	totals := make([]SweepTotals, len(s.chosen))
	byName := map[string]*SweepTotals{}
	for i, p := range s.chosen {
		totals[i].Name = p.Name()
		byName[p.Name()] = &totals[i]
	}
	result := func() SweepResult { return SweepResult{Passes: totals} }
	if len(s.chosen) == 0 {
		return result(), nil
	}
	events := make(chan actors.Event, 1024)
	rt, err := s.runtime(ctx, events)
	if err != nil {
		return SweepResult{}, err
	}
	drains := newDrainer(s.opts.DrainRetry, s.countExpired)
	if s.ledger != nil {
		drains.kept = func(ctx context.Context, pass string) (int, error) {
			rows, err := s.ledger.QuarantinedRows(ctx, pass)
			return len(rows), err
		}
	}
	retries := make(chan string, len(s.chosen))
	done := map[string]bool{}
	pending := len(s.chosen)
	finish := func(name string, left error) {
		done[name], byName[name].Left = true, left
		if s.opts.PassDone != nil {
			s.opts.PassDone(name)
		}
		pending--
	}
	for pending > 0 {
		select {
		case <-ctx.Done():
			return result(), ctx.Err()
		case name := <-retries:
			if err := rt.Trigger(name); err != nil {
				finish(name, err)
			}
		case e := <-events:
			t := byName[e.PassName()]
			if t == nil || done[e.PassName()] {
				continue // a pass restarted after its failure sweeps again: its result is in
			}
			switch e := e.(type) {
			case actors.BatchDone:
				if s.opts.Batch != nil {
					s.opts.Batch(e)
				}
			case actors.PassFailed:
				t.Failed = e.Err
			case actors.SweepDone:
				t.Rows, t.Skipped, t.Batches, t.Sweeps = t.Rows+e.Rows, t.Skipped+e.Skipped, t.Batches+e.Batches, t.Sweeps+1
				t.Duration += e.Duration
				t.Reason = e.Reason
				if !s.opts.Drain {
					finish(e.Name, timedOut(e))
					continue
				}
				v := drains.after(ctx, e)
				if v.kept > 0 {
					s.log.WithFields(logrus.Fields{"pass": e.Name, "left": v.kept}).
						Warn("expired rows left that the pass could not delete (skipped or in quarantine: see `retention quarantine list`)")
				}
				if !v.again {
					finish(e.Name, v.err)
					continue
				}
				if v.wait > 0 {
					s.log.WithFields(logrus.Fields{"pass": e.Name, "left": drains.states[e.Name].left, "retry_in": v.wait}).
						Info("expired rows left after the sweep; sweeping again")
				}
				name := e.Name
				time.AfterFunc(v.wait, func() { retries <- name })
			}
		}
	}
	return result(), nil
}

// timedOut is the error of a single sweep whose batch timed out.
func timedOut(e actors.SweepDone) error {
	if e.Reason != actors.Cancelled {
		return nil
	}
	return fmt.Errorf("%s: a batch timed out (see batch_timeout) after %s deleted", e.Name, counted(e.Rows, "row was", "rows were"))
}

// countTimeout bounds the count that ends a drain, so a table another session holds
// locked fails the drain instead of hanging it.
const countTimeout = 30 * time.Second

// countExpired is the dry-run count of the named pass at cutoff. A Go pass has no table
// to count: its sweep's own stop reason says whether it is drained, so it counts none.
func (s *sweep) countExpired(ctx context.Context, pass string, cutoff time.Time) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, countTimeout)
	defer cancel()
	for _, p := range s.chosen {
		if p.Name() == pass && !p.IsTable() {
			return 0, nil
		}
		if p.Name() == pass {
			res, err := p.Table.DryRun(ctx, cutoff)
			return int(res.Eligible), err
		}
	}
	return 0, fmt.Errorf("no pass %q", pass)
}

// DatabaseOptions say how OpenDatabase opens a configuration's database. The zero
// value opens it as a node does, creating a SQLite file that does not exist.
type DatabaseOptions struct {
	// Existing never creates the database (passes.OpenExisting), for a command that must
	// leave no trace, such as `retention validate`; false (the default) may create it.
	Existing bool
}
