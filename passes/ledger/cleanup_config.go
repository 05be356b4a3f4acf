package ledger

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The names the runtime's own loops record their runs under. They are always pruned
// at the default retention while the cleanup is enabled: they are the busiest writers in
// the table, and forgetting one is the unbounded growth the cleanup exists to prevent.
const (
	NameMetadataCleanup   = "retention.metadata-cleanup"
	NameDeadLetterCleanup = "retention.dead-letter-cleanup"
	NameWorkQueuePoller   = "retention.work-queue"
)

// InternalNames lists the internal run names.
func InternalNames() []string {
	return []string{NameMetadataCleanup, NameDeadLetterCleanup, NameWorkQueuePoller}
}

// Defaults of CleanupConfig.
const (
	DefaultCleanupRetention = 30 * time.Minute
	DefaultCleanupInterval  = time.Minute
	DefaultDeleteBatchSize  = 1000
	MaxDeleteBatchSize      = 10000
)

// NameRetention lists a run name for the cleanup, with its own retention or (nil) the
// default.
type NameRetention struct {
	Name      string
	Retention *time.Duration
}

// CleanupConfig configures the metadata cleanup. Zero fields take the defaults: 30m
// retention, every minute, batches of 1,000.
type CleanupConfig struct {
	RetentionPeriod time.Duration
	CleanupInterval time.Duration
	DeleteBatchSize int
	// Names are the user run names to prune besides the internal ones (those are always
	// pruned); a name not listed is never pruned.
	Names []NameRetention
}

// Group is a set of names pruned with one cutoff. Default is true for the group on the
// default retention, the one a runtime override moves.
type Group struct {
	Retention time.Duration
	Names     []string
	Default   bool
}

// Plan is a validated cleanup configuration: its groups, one per distinct retention.
type Plan struct {
	Retention time.Duration
	Interval  time.Duration
	BatchSize int
	Groups    []Group
}

// Build applies the defaults and the configuration rules, returning every problem at
// once, each naming the entry: an internal name may not take its own retention; one name
// listed twice with two retentions is refused; listed twice with the same retention, it
// counts once.
func (c CleanupConfig) Build() (*Plan, error) {
	p := &Plan{Retention: c.RetentionPeriod, Interval: c.CleanupInterval, BatchSize: c.DeleteBatchSize}
	if p.Retention == 0 {
		p.Retention = DefaultCleanupRetention
	}
	if p.Interval == 0 {
		p.Interval = DefaultCleanupInterval
	}
	if p.BatchSize == 0 {
		p.BatchSize = DefaultDeleteBatchSize
	}
	var errs []error
	if p.Retention < 0 || p.Interval < 0 {
		errs = append(errs, fmt.Errorf("metadata_cleanup: retention_period and cleanup_interval must be positive"))
	}
	if p.BatchSize < 1 || p.BatchSize > MaxDeleteBatchSize {
		errs = append(errs, fmt.Errorf("metadata_cleanup.delete_batch_size must be 1 to %d, got %d", MaxDeleteBatchSize, p.BatchSize))
	}
	retentions := map[string]time.Duration{}
	for _, n := range InternalNames() {
		retentions[n] = p.Retention
	}
	for i, n := range c.Names {
		field := fmt.Sprintf("metadata_cleanup.names[%d]", i)
		switch {
		case n.Name == "":
			errs = append(errs, fmt.Errorf("%s.name is empty", field))
			continue
		case slices.Contains(InternalNames(), n.Name):
			if n.Retention != nil {
				errs = append(errs, fmt.Errorf("%s: %q is internal and always pruned at the default retention; it takes no retention_period of its own", field, n.Name))
			}
			continue
		case n.Retention != nil && *n.Retention <= 0:
			errs = append(errs, fmt.Errorf("%s.retention_period must be positive, got %v", field, *n.Retention))
			continue
		}
		r := p.Retention
		if n.Retention != nil {
			r = *n.Retention
		}
		if prev, seen := retentions[n.Name]; seen && prev != r {
			errs = append(errs, fmt.Errorf("%s: %q is listed twice, with retentions %v and %v", field, n.Name, prev, r))
			continue
		}
		retentions[n.Name] = r
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p.Groups = groupsOf(retentions, p.Retention)
	return p, nil
}

// groupsOf puts names with one retention in one group, the default group first.
func groupsOf(retentions map[string]time.Duration, def time.Duration) []Group {
	byRetention := map[time.Duration][]string{}
	for name, r := range retentions {
		byRetention[r] = append(byRetention[r], name)
	}
	var groups []Group
	for r, names := range byRetention {
		slices.Sort(names)
		groups = append(groups, Group{Retention: r, Names: names, Default: r == def})
	}
	slices.SortFunc(groups, func(a, b Group) int {
		if a.Default != b.Default {
			if a.Default {
				return -1
			}
			return 1
		}
		return int(a.Retention - b.Retention)
	})
	return groups
}

// CheckAliases refuses, at startup, a plan that lists one pass under two names the
// registry relates (a short name and its full NameFor name) with two retentions.
// aliases maps each alias to its canonical name.
func (p *Plan) CheckAliases(aliases map[string]string) error {
	var errs []error
	for alias, canonical := range aliases {
		ra, okA := p.retentionOf(alias)
		rc, okC := p.retentionOf(canonical)
		if okA && okC && ra != rc {
			errs = append(errs, fmt.Errorf("metadata_cleanup: %q and %q are the same pass, listed with retentions %v and %v", alias, canonical, ra, rc))
		}
	}
	return errors.Join(errs...)
}

func (p *Plan) retentionOf(name string) (time.Duration, bool) {
	for _, g := range p.Groups {
		if slices.Contains(g.Names, name) {
			return g.Retention, true
		}
	}
	return 0, false
}

// MergeAliases is what the sweep does when CheckAliases was bypassed: a pass listed
// under two related names with two retentions keeps the longer one (under both names),
// and warn is told. A cleanup that failed every cycle would stop pruning altogether,
// which is worse than the misconfiguration.
func (p *Plan) MergeAliases(aliases map[string]string, warn func(string)) *Plan {
	retentions := map[string]time.Duration{}
	for _, g := range p.Groups {
		for _, n := range g.Names {
			retentions[n] = g.Retention
		}
	}
	for _, alias := range slices.Sorted(maps.Keys(aliases)) {
		canonical := aliases[alias]
		ra, okA := retentions[alias]
		rc, okC := retentions[canonical]
		if !okA || !okC || ra == rc {
			continue
		}
		longer := max(ra, rc)
		retentions[alias], retentions[canonical] = longer, longer
		if warn != nil {
			warn(fmt.Sprintf("metadata_cleanup: %q and %q are the same pass with retentions %v and %v; keeping the longer, %v", alias, canonical, ra, rc, longer))
		}
	}
	merged := *p
	merged.Groups = groupsOf(retentions, p.Retention)
	return &merged
}

// AliasesFor maps the short name of every registered name that is a NameFor name
// ("github.com/acme/jobs.PatchPass" -> "PatchPass") to that name, for CheckAliases: the
// registry is what relates the two spellings of one pass.
func AliasesFor(registered []string) map[string]string {
	aliases := map[string]string{}
	for _, full := range registered {
		if i := strings.LastIndexByte(full, '.'); i > 0 && strings.Contains(full[:i], "/") {
			aliases[full[i+1:]] = full
		}
	}
	return aliases
}
