package actors

import "github.com/sirupsen/logrus"

// LogPollReporter reports the failures of a background loop (core/polling) of the
// runtime's own, such as the node heartbeat, to a logrus logger at warning level, with
// the error's text: a loop that fails quietly looks exactly like one that works.
type LogPollReporter struct {
	Logger logrus.FieldLogger
	// What names the loop in every line ("node heartbeat").
	What string
}

// PassFailed logs a failed pass of the loop.
func (r LogPollReporter) PassFailed(err error) {
	r.Logger.WithField("loop", r.What).WithError(err).Warn("background loop failed")
}

// PassCancelled logs a pass that ran out of time.
func (r LogPollReporter) PassCancelled() {
	r.Logger.WithField("loop", r.What).Warn("background loop timed out")
}

// Stopping says nothing: the loop stops with the node, which says so itself.
func (r LogPollReporter) Stopping() {}
