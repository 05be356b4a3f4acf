package node

import (
	"context"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes"
)

// DryRunOptions say which passes DryRun counts, beyond what the file says. The zero
// value counts every enabled pass of the file, with the ledger's quarantine if the file
// enables the ledger, logging nowhere and retrying the startup checks for
// DefaultStartupRetry.
type DryRunOptions struct {
	// Only names the passes to count, as SweepOptions.Only.
	Only []string
	// Passes are the program's own passes, as SweepOptions.Passes: Only may name them,
	// but a Go pass has no table to count, so it has no Estimate.
	Passes []Pass
	// NoLedger leaves the ledger out, as SweepOptions.NoLedger: no row counts as
	// quarantined.
	NoLedger bool
	// Logger receives the startup checks' warnings; nil discards them.
	Logger *logrus.Logger
	// Startup bounds the startup checks' retries, as Options.Startup.
	Startup StartupOptions
}

// Estimate is what a sweep of one table pass would do now: the pass's backlog at its
// cutoff, as `status`, /metrics and the dashboard measure it (MeasureBacklog).
type Estimate struct {
	// Name is the pass's.
	Name string
	// Cutoff is the instant rows older than which are expired.
	Cutoff time.Time
	// Backlog splits the expired rows: Deletable are the ones a sweep would delete;
	// Held and Quarantined stay (a quarantined row is not one a sweep deletes).
	passes.Backlog
}

// DryRun is `retention sweep --dry-run`: it opens cfg as Sweep does, runs the same
// startup checks, and counts what a sweep of each chosen table pass would delete, hold
// and leave in quarantine, deleting nothing and creating no ledger table. The estimates
// are in the file's order. The error is a *ConfigError for a configuration (or
// opts.Only) found wrong, a database that never answered, or a count that failed.
func DryRun(ctx context.Context, cfg *config.Config, opts DryRunOptions) ([]Estimate, error) {
	s, err := openSweep(ctx, cfg, opts.Logger, opts.NoLedger, opts.Passes, opts.Only)
	if err != nil {
		return nil, err
	}
	defer s.undo.close()
	if err := CheckStartup(ctx, s.log, s.passes, s.plan, opts.Startup); err != nil {
		return nil, err
	}
	var out []Estimate
	for _, p := range s.chosen {
		if !p.IsTable() {
			continue // nothing to count
		}
		cutoff := p.Options().Cutoff(time.Now())
		b, err := MeasureBacklog(ctx, s.ledger, p.Table, cutoff)
		if err != nil {
			return nil, err
		}
		out = append(out, Estimate{Name: p.Name(), Cutoff: cutoff, Backlog: b})
	}
	return out, nil
}
