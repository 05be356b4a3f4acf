package actors

import (
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/supervisor"
)

// LogObserver writes events to a logrus logger at levels that keep a healthy runtime
// quiet: sweeps (one that runs elsewhere too) and restarts at info, batches and skipped
// rows at debug, failures, cancellations and a sweep's one summary of the rows it left
// held (by cause) at warning, a pass stopped by supervision at error. The runtime's own
// routine loops (the run recovery) log at info only a sweep that did work or went wrong:
// their start, their sweeps' starts and their idle sweeps are at debug.
//
// Configuration drift (a table or column gone) would otherwise repeat the same five
// lines on every retry, so it gets one: a warning per failure saying what is missing and
// when the pass tries again, with the pass's routine lines (started, sweep started,
// sweep failed, sweep done) at debug meanwhile, and one info line once a sweep succeeds
// again. It remembers which passes are in drift, so one *LogObserver serves one event
// stream.
type LogObserver struct {
	Logger logrus.FieldLogger

	mu    sync.Mutex
	drift map[string]*driftLog
}

// driftLog is what the log observer remembers of one pass in drift.
type driftLog struct {
	restarted bool // supervision restarted the pass for drift: it is retrying
	failed    bool // its last failure was drift
}

// Observe logs e.
func (o *LogObserver) Observe(e Event) error {
	l := o.Logger.WithField("pass", e.PassName())
	quiet, cleared := o.track(e)
	quiet = quiet || routineQuiet(e)
	at := func(normal logrus.Level) logrus.Level {
		if quiet {
			return logrus.DebugLevel
		}
		return normal
	}
	switch e := e.(type) {
	case PassStarted:
		l.WithFields(logrus.Fields{"offset": e.Offset, "restart": e.Restart}).Log(at(logrus.InfoLevel), "pass started")
	case SweepStarted:
		l.WithFields(logrus.Fields{"sweep": e.Sweep, "cutoff": e.Cutoff.Format(time.RFC3339), "trigger": e.Trigger}).Log(at(logrus.InfoLevel), "sweep started")
	case BatchDone:
		if lv, ok := o.Logger.(interface{ IsLevelEnabled(logrus.Level) bool }); ok && !lv.IsLevelEnabled(logrus.DebugLevel) {
			return nil // the busiest event: skip building fields nobody will read
		}
		l.WithFields(logrus.Fields{"sweep": e.Sweep, "batch": e.Batch, "rows": e.Rows, "duration": e.Duration}).Debug("batch done")
	case SweepDone:
		if e.Reason == Elsewhere {
			// Routine in a cluster (a duplicate activation, a helper's overlap): info, so
			// "who sweeps this pass" can be read from the log, not a warning.
			l.WithFields(logrus.Fields{"sweep": e.Sweep, "reason": e.Reason}).WithError(e.Denied).Log(at(logrus.InfoLevel), "sweep running elsewhere")
			break
		}
		l.WithFields(logrus.Fields{"sweep": e.Sweep, "rows": e.Rows, "skipped": e.Skipped, "batches": e.Batches,
			"work_remains": e.WorkRemains, "reason": e.Reason, "duration": e.Duration}).Log(at(logrus.InfoLevel), "sweep done")
		if e.Pace != nil {
			l.WithField("sweep", e.Sweep).Info(PaceLine(*e.Pace))
		}
		if len(e.HeldBy) > 0 {
			// A warning when the sweep met held rows; rows only in quarantine since an
			// earlier sweep are an info line (the quarantine's summary tells of them).
			level := logrus.InfoLevel
			if heldNews(e.HeldBy) {
				level = logrus.WarnLevel
			}
			l.WithFields(logrus.Fields{"sweep": e.Sweep, "held": heldTotal(e.HeldBy)}).
				Log(at(level), "rows held in place, by cause: "+heldSummary(e.HeldBy))
		}
	case PaceChanged:
		l.WithFields(logrus.Fields{"sweep": e.Sweep, "reason": e.Reason, "batch": e.Batch, "delay": e.Delay,
			"rate": int(e.Rate)}).Info("pace changed: " + e.Detail)
	case PassFailed:
		l.WithField("sweep", e.Sweep).WithError(e.Err).Log(at(logrus.WarnLevel), "sweep failed")
	case PassCancelled:
		l.WithField("sweep", e.Sweep).WithError(e.Err).Warn("batch cancelled")
	case PassRestarted:
		if e.Class == supervisor.Drift {
			l.WithFields(logrus.Fields{"attempt": e.Attempt, "retry_in": e.Backoff}).WithError(e.Err).
				Warn("configuration drift: a table or column the pass was configured with is missing; retrying")
			break
		}
		l.WithFields(logrus.Fields{"attempt": e.Attempt, "backoff": e.Backoff, "class": e.Class}).WithError(e.Err).Info("pass restarted")
	case PassStopped:
		if e.Degraded {
			l.WithField("reason", e.Reason).WithError(e.Err).Error("pass stopped by supervision")
		} else {
			l.WithField("reason", e.Reason).Log(at(logrus.InfoLevel), "pass stopped")
		}
	case SweepCloseFailed:
		l.WithField("sweep", e.Sweep).WithError(e.Err).Warn("sweep close failed")
	case SettingsApplied:
		l.WithFields(logrus.Fields{"batch_size": e.BatchSize, "batch_delay": e.BatchDelay, "sweep_interval": e.SweepInterval,
			"pacing": e.Pacing, "paused": e.Paused}).Info("settings applied")
	case RowSkipped:
		// Per row at debug: the sweep's summary of held rows is the warning.
		l.WithFields(logrus.Fields{"sweep": e.Sweep, "key": fmt.Sprint(e.Key)}).WithError(e.Err).Debug("row skipped")
	case PartitionEvent:
		level := logrus.InfoLevel
		if e.Report.Warns() {
			level = logrus.WarnLevel
		}
		l.WithField("sweep", e.Sweep).Log(level, e.Report.String())
	default:
		l.Infof("event %T", e)
	}
	if cleared {
		l.Info("configuration drift cleared: the pass swept again")
	}
	return nil
}

// track updates what the observer remembers of e's pass and reports whether e's line
// drops to debug (drift said it already) and whether e ends a drift.
func (o *LogObserver) track(e Event) (quiet, cleared bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	name := e.PassName()
	d := o.drift[name]
	switch e := e.(type) {
	case PassFailed:
		if !supervisor.IsDrift(e.Err) {
			if d != nil {
				d.failed = false
			}
			return false, false
		}
		if d == nil {
			if o.drift == nil {
				o.drift = map[string]*driftLog{}
			}
			d = &driftLog{}
			o.drift[name] = d
		}
		d.failed = true
		return true, false
	case PassRestarted:
		if d != nil {
			d.restarted = e.Class == supervisor.Drift
		}
	case PassStarted, SweepStarted:
		return d != nil && d.restarted, false
	case SweepDone:
		switch {
		case d == nil:
		case e.Reason == Failed:
			return d.failed || d.restarted, false
		case e.Reason.Succeeded():
			delete(o.drift, name)
			return false, d.restarted
		}
	case PassStopped:
		delete(o.drift, name)
	}
	return false, false
}

// LogFailureReporter reports observer failures to a logrus logger at warning level, with
// the observer's type, the error's type and the error's text: "observer failed" alone
// tells an operator nothing to act on. Redact, when set, rewrites the text first (a node
// gives it the function that removes its database password).
type LogFailureReporter struct {
	Logger logrus.FieldLogger
	Redact func(err error) string
}

// ObserverFailed logs one contained observer failure.
func (r LogFailureReporter) ObserverFailed(observer any, err error) {
	text := err.Error()
	if r.Redact != nil {
		text = r.Redact(err)
	}
	r.Logger.WithFields(logrus.Fields{"observer": fmt.Sprintf("%T", observer), "error_type": fmt.Sprintf("%T", err), "error": text}).Warn("observer failed")
}
