package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// The defaults of StartupOptions and the backoff between rounds of checks.
const (
	// DefaultStartupRetry is how long the checks are tried again, with a backoff, while
	// the database cannot answer them; past it the node gives up with
	// ErrDatabaseUnavailable.
	DefaultStartupRetry = time.Minute
	// DefaultStartupAttempt bounds one round of checks, so a table another session
	// holds under an ACCESS EXCLUSIVE lock makes a check time out instead of hang.
	DefaultStartupAttempt = 5 * time.Second
	// startupBackoffStart is the wait before the first retry; each further one doubles
	// it, up to startupBackoffMax.
	startupBackoffStart = 500 * time.Millisecond
	startupBackoffMax   = 5 * time.Second
)

// StartupOptions bound the startup checks' retries while the database does not answer.
// The zero value takes the defaults.
type StartupOptions struct {
	// Retry is how long the checks are retried in all; 0 means DefaultStartupRetry.
	Retry time.Duration
	// Attempt bounds one round of checks; 0 means DefaultStartupAttempt.
	Attempt time.Duration
}

// withDefaults fills the zero fields.
func (o StartupOptions) withDefaults() StartupOptions {
	if o.Retry <= 0 {
		o.Retry = DefaultStartupRetry
	}
	if o.Attempt <= 0 {
		o.Attempt = DefaultStartupAttempt
	}
	return o
}

// CheckStartup runs every table pass's startup check and, with a cleanup plan (nil when
// the cleanup is off), checks the plan's names against the passes; it logs the warnings
// and fails with every failure at once, as a ConfigError. A check the database could not
// answer (a lost connection, a timeout, a server shutting down) is tried again with a
// backoff within opts; past it the error wraps ErrDatabaseUnavailable, since nothing says
// the configuration is wrong. Open runs it; the one-off commands run it too, so a node
// and a `sweep` refuse the same files.
func CheckStartup(ctx context.Context, log *logrus.Logger, ps []Pass, plan *ledger.Plan, opts StartupOptions) error {
	opts = opts.withDefaults()
	start, wait := time.Now(), startupBackoffStart
	for round := 1; ; round++ {
		unavailable, failures, warnings := startupChecks(ctx, ps, plan, opts.Attempt)
		if len(unavailable) == 0 {
			for _, w := range warnings {
				log.Warn(w)
			}
			return badConfig(errors.Join(failures...))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Since(start)+wait > opts.Retry {
			return fmt.Errorf("%w: the startup checks could not run for %v: %s",
				ErrDatabaseUnavailable, time.Since(start).Round(time.Second), strings.Join(append(unavailable, errorTexts(failures)...), "; "))
		}
		log.WithFields(logrus.Fields{"attempt": round, "retry_in": wait, "error": strings.Join(unavailable, "; ")}).
			Warn("database unavailable during the startup checks; retrying")
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, startupBackoffMax)
	}
}

// startupChecks runs one round of the checks, each table's within attempt, and sorts
// what they found: checks the database could not answer, configuration failures, and
// warnings.
func startupChecks(ctx context.Context, ps []Pass, plan *ledger.Plan, attempt time.Duration) (unavailable []string, failures []error, warnings []string) {
	for _, p := range ps {
		if !p.IsTable() { // a Go pass checks itself when it runs
			continue
		}
		actx, cancel := context.WithTimeout(ctx, attempt)
		res := p.Table.ValidateStartup(actx)
		cancel()
		switch {
		case res.Unavailable():
			unavailable = append(unavailable, res.Message())
		case res.Failed():
			failures = append(failures, errors.New(res.Message()))
		default:
			warnings = append(warnings, res.Warnings()...)
			if p.Registration.Options.Pacing == passes.PacingAdaptive {
				actx, cancel := context.WithTimeout(ctx, attempt)
				warnings = append(warnings, p.Table.PaceWarnings(actx)...)
				cancel()
			}
		}
	}
	if plan != nil {
		if err := plan.CheckAliases(ledger.AliasesFor(passNames(ps))); err != nil {
			failures = append(failures, err)
		}
	}
	return unavailable, failures, warnings
}

// passNames are the names of ps, in order.
func passNames(ps []Pass) []string {
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		names = append(names, p.Name())
	}
	return names
}

func errorTexts(errs []error) []string {
	var out []string
	for _, err := range errs {
		out = append(out, err.Error())
	}
	return out
}
