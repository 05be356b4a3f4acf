package actors

import (
	"maps"
	"time"

	"github.com/sirupsen/logrus"
)

// SecondsFormatter wraps a logrus formatter, typically &logrus.JSONFormatter{}, so that
// every time.Duration field is written as a number of seconds (a float). Without it a
// JSON log gives a duration as the integer of nanoseconds encoding/json makes of it,
// which a reader or a log query takes for seconds at a glance and gets wrong by a factor
// of a billion. The text formatter needs no wrapping: it prints durations as "1.5s".
type SecondsFormatter struct {
	logrus.Formatter
}

// Format writes e through the wrapped formatter with its durations in seconds. The entry
// itself is left as it was, so a hook or another formatter still sees time.Duration.
func (f SecondsFormatter) Format(e *logrus.Entry) ([]byte, error) {
	var data logrus.Fields
	for k, v := range e.Data {
		d, ok := v.(time.Duration)
		if !ok {
			continue
		}
		if data == nil {
			data = maps.Clone(e.Data)
		}
		data[k] = d.Seconds()
	}
	if data == nil {
		return f.Formatter.Format(e)
	}
	seconds := *e
	seconds.Data = data
	return f.Formatter.Format(&seconds)
}
