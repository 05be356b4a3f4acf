package live_test

import (
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/node/live"
	"github.com/retentionkit/retention/passes/ledger"
)

var known = []string{"audit-log", "events.v2"}

func TestParseKeyAndValue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		key, value, stored, err string
	}{
		{"pass.audit-log.batch_size", "100", "100", ""},
		{"pass.audit-log.batch_delay", "250ms", "250ms", ""},
		{"pass.events.v2.sweep_interval", "1d", "24h0m0s", ""},
		{"pass.audit-log.pacing", "adaptive", "adaptive", ""},
		{"pass.audit-log.batch_size", "0", "", `pass.audit-log.batch_size: pass "audit-log": batch_size must be at least 1, got 0`},
		{"pass.audit-log.batch_size", "1.5", "", `pass.audit-log.batch_size must be a whole number, got "1.5"`},
		{"pass.audit-log.batch_delay", "-1s", "", `batch_delay must not be negative`},
		{"pass.audit-log.batch_delay", "soon", "", `pass.audit-log.batch_delay must be a duration (250ms, 10m, 1d), got "soon"`},
		{"pass.audit-log.sweep_interval", "0s", "", `sweep_interval must be positive`},
		{"pass.audit-log.pacing", "fast", "", `pacing must be "fixed" or "adaptive", got "fast"`},
		{"pass.nope.batch_size", "1", "", `pass.nope.batch_size: no pass "nope" in the configuration (passes: audit-log, events.v2)`},
		{"pass.audit-log.retention_period", "1h", "", `pass.audit-log.retention_period: "retention_period" is not a live setting (one of batch_size, batch_delay, sweep_interval, pacing)`},
		{"pass.audit-log.paused", "true", "", "`retention pause NAME`"},
		{"batch_size", "1", "", `unknown key "batch_size" (known: metadata_cleanup.retention_period, or pass.NAME.FIELD`},
	}
	for _, c := range cases {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			k, err := live.ParseKey(c.key, known, false)
			var stored string
			if err == nil {
				stored, err = live.Parse(k, c.value)
			}
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one containing %q", err, c.err)
			case stored != c.stored:
				t.Fatalf("stored %q, want %q", stored, c.stored)
			}
		})
	}
}

func TestOverridesFromStoredSettings(t *testing.T) {
	t.Parallel()
	at := time.Now()
	settings := []ledger.Setting{
		{Key: "pass.audit-log.batch_size", Value: "50", Updated: at},
		{Key: "pass.audit-log.paused", Value: "true", Updated: at},
		{Key: "pass.audit-log.batch_delay", Value: "-5s", Updated: at}, // written by hand: refused
		{Key: "pass.gone.batch_size", Value: "5", Updated: at},         // a pass no longer configured
		{Key: "metadata_cleanup.retention_period", Value: "2h", Updated: at},
	}
	got, problems := live.Overrides(settings, known)
	a := got["audit-log"]
	if a.BatchSize == nil || *a.BatchSize != 50 || !a.Paused || a.BatchDelay != nil {
		t.Fatalf("audit-log override %+v", a)
	}
	if e := got["events.v2"]; e.BatchSize != nil || e.Paused {
		t.Fatalf("events.v2 override %+v: want none", e)
	}
	if len(problems) != 2 || !strings.Contains(problems[0].Error(), "batch_delay must not be negative") || !strings.Contains(problems[1].Error(), `no pass "gone"`) {
		t.Fatalf("problems %v", problems)
	}
}
