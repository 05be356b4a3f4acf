package actors

import (
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
)

// LogObserver writes events to a logrus logger at levels that keep a healthy runtime
// quiet: sweeps and restarts at info, batches at debug, failures, cancellations and
// skipped rows at warning, a pass stopped by supervision at error.
type LogObserver struct {
	Logger logrus.FieldLogger
}

// Observe logs e.
func (o LogObserver) Observe(e Event) error {
	l := o.Logger.WithField("pass", e.PassName())
	switch e := e.(type) {
	case PassStarted:
		l.WithFields(logrus.Fields{"offset": e.Offset, "restart": e.Restart}).Info("pass started")
	case SweepStarted:
		l.WithFields(logrus.Fields{"sweep": e.Sweep, "cutoff": e.Cutoff.Format(time.RFC3339), "trigger": e.Trigger}).Info("sweep started")
	case BatchDone:
		if lv, ok := o.Logger.(interface{ IsLevelEnabled(logrus.Level) bool }); ok && !lv.IsLevelEnabled(logrus.DebugLevel) {
			return nil // the busiest event: skip building fields nobody will read
		}
		l.WithFields(logrus.Fields{"sweep": e.Sweep, "batch": e.Batch, "rows": e.Rows, "duration": e.Duration}).Debug("batch done")
	case SweepDone:
		l.WithFields(logrus.Fields{"sweep": e.Sweep, "rows": e.Rows, "skipped": e.Skipped, "batches": e.Batches,
			"work_remains": e.WorkRemains, "reason": e.Reason, "duration": e.Duration}).Info("sweep done")
	case PassFailed:
		l.WithField("sweep", e.Sweep).WithError(e.Err).Warn("sweep failed")
	case PassCancelled:
		l.WithField("sweep", e.Sweep).WithError(e.Err).Warn("batch cancelled")
	case PassRestarted:
		l.WithFields(logrus.Fields{"attempt": e.Attempt, "backoff": e.Backoff, "class": e.Class}).WithError(e.Err).Info("pass restarted")
	case PassStopped:
		if e.Degraded {
			l.WithField("reason", e.Reason).WithError(e.Err).Error("pass stopped by supervision")
		} else {
			l.WithField("reason", e.Reason).Info("pass stopped")
		}
	case RowSkipped:
		l.WithFields(logrus.Fields{"sweep": e.Sweep, "key": fmt.Sprint(e.Key)}).WithError(e.Err).Warn("row skipped")
	default:
		l.Infof("event %T", e)
	}
	return nil
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
