package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/passes/ledger"
)

// The bounds of the startup checks' retries while the database does not answer.
const (
	// defaultStartupRetry is how long the checks are tried again, with a backoff,
	// while the database cannot answer them; past it the node gives up: exit 1,
	// "database unavailable".
	defaultStartupRetry = time.Minute
	// defaultStartupAttempt bounds one round of checks, so a table another session
	// holds under an ACCESS EXCLUSIVE lock makes a check time out instead of hang.
	defaultStartupAttempt = 5 * time.Second
	// startupBackoffStart is the wait before the first retry; each further one doubles
	// it, up to startupBackoffMax.
	startupBackoffStart = 500 * time.Millisecond
	startupBackoffMax   = 5 * time.Second
)

// errDatabaseUnavailable is what the startup checks end with when the database never
// answered them within the retry bound.
var errDatabaseUnavailable = errors.New("database unavailable")

// startupLimits bound the startup checks' retries: how long they are retried in all, and
// how long one round may take. Zero fields take the defaults.
type startupLimits struct {
	retry, attempt time.Duration
}

// startupBounds returns the retry bound and the bound of one round of checks, the
// defaults unless a test set its own.
func (n *node) startupBounds() (retry, attempt time.Duration) {
	retry, attempt = n.startup.retry, n.startup.attempt
	if retry <= 0 {
		retry = defaultStartupRetry
	}
	if attempt <= 0 {
		attempt = defaultStartupAttempt
	}
	return retry, attempt
}

// startupValidate runs every startup check, logs the warnings, and fails with every
// failure at once: a configuration error (exit 2) when a check found the configuration
// wrong. A check the database could not answer (a lost connection, a timeout, a server
// shutting down) is tried again with a backoff within startupBounds; past it the error
// is errDatabaseUnavailable (exit 1), since nothing says the configuration is wrong.
func (n *node) startupValidate(ctx context.Context) error {
	retry, attempt := n.startupBounds()
	start, wait := time.Now(), startupBackoffStart
	for round := 1; ; round++ {
		unavailable, failures, warnings := n.startupChecks(ctx, attempt)
		if len(unavailable) == 0 {
			for _, w := range warnings {
				n.log.Warn(w)
			}
			return badConfig(errors.Join(failures...))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Since(start)+wait > retry {
			return fmt.Errorf("%w: the startup checks could not run for %v: %s",
				errDatabaseUnavailable, time.Since(start).Round(time.Second), strings.Join(append(unavailable, errorTexts(failures)...), "; "))
		}
		n.log.WithFields(logrus.Fields{"attempt": round, "retry_in": wait, "error": strings.Join(unavailable, "; ")}).
			Warn("database unavailable during the startup checks; retrying")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, startupBackoffMax)
	}
}

// startupChecks runs one round of the checks, each table's within attempt, and sorts
// what they found: checks the database could not answer, configuration failures, and
// warnings.
func (n *node) startupChecks(ctx context.Context, attempt time.Duration) (unavailable []string, failures []error, warnings []string) {
	for _, p := range n.passes {
		t := p.Table
		if t == nil { // a Go pass checks itself when it runs
			continue
		}
		actx, cancel := context.WithTimeout(ctx, attempt)
		res := t.ValidateStartup(actx)
		cancel()
		switch {
		case res.Unavailable():
			unavailable = append(unavailable, res.Message())
		case res.Failed():
			failures = append(failures, errors.New(res.Message()))
		default:
			warnings = append(warnings, res.Warnings()...)
		}
	}
	var names []string
	for _, p := range n.passes {
		names = append(names, p.Name())
	}
	if n.cfg.CleanupEnabled() {
		if err := n.plan.CheckAliases(ledger.AliasesFor(names)); err != nil {
			failures = append(failures, err)
		}
	}
	return unavailable, failures, warnings
}

func errorTexts(errs []error) []string {
	var out []string
	for _, err := range errs {
		out = append(out, err.Error())
	}
	return out
}
