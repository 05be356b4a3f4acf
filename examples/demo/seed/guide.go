package main

import (
	"io"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// guide is what the seeder prints before the node starts: what the demo is about to
// show, in the order it shows it, and where to look while it runs. Its figures are those
// of examples/demo/retention.yaml; the make-run test checks that the log shows each.
type guide struct {
	DB     string
	Rows   int
	Took   time.Duration
	Admin  string
	Config string
	// Env is the variable that moves the database, and Default the database it names
	// when unset; empty, the SQLite demo's (RETENTION_DEMO_DB, examples/demo/demo.db).
	Env, Default string
}

var guideText = template.Must(template.New("guide").Parse(`
Seeded {{.DB}} afresh in {{.Took}}: {{.Thousands .Rows}} audit rows over 300 days, 90% past
their 30-day retention; 20,000 sessions; 500 ledger runs from the last hour.

What the log below shows within a minute (Ctrl-C stops the node gracefully):
  stagger    each pass starts at its own offset within 5s ("pass started" offset=)
  pacing     audit-log deletes 5,000 rows a batch, 200ms apart ("sweep done" batches= duration=)
  bound      its first sweep stops after 20 batches (reason=batch_limit work_remains=true);
             the next, 15s later, continues where it stopped (reason=held, or drained:
             to the end, leaving the held rows below)
  children   attachments go with their row, reviews are detached, legal holds keep theirs
  held rows  rows 50003 and 120011 cannot go: export_job, a table the pass does not list,
             references them; each enters quarantine, the sweep's one warning counts
             them by constraint ("rows held in place"), they are retried with backoff,
             and the sweep carries on
  cleanup    retention.metadata-cleanup prunes ledger runs older than 30 minutes ("sweep done" rows=)

Where to look meanwhile, from another terminal:
  curl -s http://{{.Admin}}/passes     each pass: state, last sweep, next sweep
  curl -s http://{{.Admin}}/metrics    the retention_* counters and gauges, per pass
  http://{{.Admin}}/ui/                the dashboard, in a browser on this host (docs/ui.md)
  {{.StatusEnv}}./bin/retention status --config {{.Config}}
                                         the ledger's view: runs, backlog, held and quarantined rows
  {{.StatusEnv}}./bin/retention quarantine list --config {{.Config}}
                                         the quarantined rows, with what holds each

`))

// StatusEnv is what the status command needs before it in the guide: the database's
// path (or DSN) when it is not the configuration's default.
func (g guide) StatusEnv() string {
	env, def := g.Env, g.Default
	if env == "" {
		env, def = "RETENTION_DEMO_DB", "examples/demo/demo.db"
	}
	if g.DB == def {
		return ""
	}
	return env + "=" + shellQuote(g.DB) + " "
}

func (g guide) print(w io.Writer) error {
	g.Took = g.Took.Round(10 * time.Millisecond)
	return guideText.Execute(w, g)
}

// Thousands writes n with a comma between each group of three digits.
func (guide) Thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
