package ledger

import (
	"cmp"
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
	NameRunRecovery       = "retention.run-recovery"
)

// InternalNames lists the internal run names.
func InternalNames() []string {
	return []string{NameMetadataCleanup, NameDeadLetterCleanup, NameWorkQueuePoller, NameRunRecovery}
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

// Group is a set of names pruned with one retention. Default is true for the group on the
// default retention, the one a runtime override moves; a name given a retention of its
// own is never in it, even when that retention equals the default, so the override
// leaves it where it was.
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
	if p.Retention < 0 {
		errs = append(errs, fmt.Errorf("metadata_cleanup.retention_period must be positive, got %v", p.Retention))
	}
	if p.Interval < 0 {
		errs = append(errs, fmt.Errorf("metadata_cleanup.cleanup_interval must be positive, got %v", p.Interval))
	}
	if p.BatchSize < 1 || p.BatchSize > MaxDeleteBatchSize {
		errs = append(errs, fmt.Errorf("metadata_cleanup.delete_batch_size must be 1 to %d, got %d", MaxDeleteBatchSize, p.BatchSize))
	}
	retentions := map[string]entry{}
	for _, n := range InternalNames() {
		retentions[n] = entry{retention: p.Retention}
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
		e := entry{retention: p.Retention}
		if n.Retention != nil {
			e = entry{retention: *n.Retention, own: true}
		}
		prev, seen := retentions[n.Name]
		if seen && prev.retention != e.retention {
			errs = append(errs, fmt.Errorf("%s: %q is listed twice, with retentions %v and %v", field, n.Name, prev.retention, e.retention))
			continue
		}
		e.own = e.own || prev.own // once on the default, once with the same value: its own
		retentions[n.Name] = e
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p.Groups = groupsOf(retentions)
	return p, nil
}

// entry is one name's retention; own is true when the configuration gave the name a
// retention of its own rather than leaving it on the default.
type entry struct {
	retention time.Duration
	own       bool
}

// groupsOf puts names with one retention in one group, keeping the names on the default
// apart from names given the same value as their own, the default group first.
func groupsOf(retentions map[string]entry) []Group {
	byEntry := map[entry][]string{}
	for name, e := range retentions {
		byEntry[e] = append(byEntry[e], name)
	}
	var groups []Group
	for e, names := range byEntry {
		slices.Sort(names)
		groups = append(groups, Group{Retention: e.retention, Names: names, Default: !e.own})
	}
	slices.SortFunc(groups, func(a, b Group) int {
		if a.Default != b.Default {
			if a.Default {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Retention, b.Retention)
	})
	return groups
}

// entries is the inverse of groupsOf.
func (p *Plan) entries() map[string]entry {
	retentions := map[string]entry{}
	for _, g := range p.Groups {
		for _, n := range g.Names {
			retentions[n] = entry{retention: g.Retention, own: !g.Default}
		}
	}
	return retentions
}

// withDefault returns the plan with the default group (the names on the default) moved
// to retention d, as a runtime override does; d <= 0 leaves it as configured.
func (p *Plan) withDefault(d time.Duration) *Plan {
	moved := *p
	if d <= 0 {
		return &moved
	}
	moved.Retention = d
	moved.Groups = nil
	for _, g := range p.Groups {
		if g.Default {
			g.Retention = d
		}
		moved.Groups = append(moved.Groups, g)
	}
	return &moved
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
//
// The sweep calls it every cycle on the plan with the runtime override applied, so
// "longer" compares the retentions the two names would really be pruned at.
func (p *Plan) MergeAliases(aliases map[string]string, warn func(string)) *Plan {
	retentions := p.entries()
	for _, alias := range slices.Sorted(maps.Keys(aliases)) {
		canonical := aliases[alias]
		ea, okA := retentions[alias]
		ec, okC := retentions[canonical]
		if !okA || !okC || ea.retention == ec.retention {
			continue
		}
		longer := ea
		if ec.retention > ea.retention {
			longer = ec
		}
		retentions[alias], retentions[canonical] = longer, longer
		if warn != nil {
			warn(fmt.Sprintf("metadata_cleanup: %q and %q are the same pass with retentions %v and %v; keeping the longer, %v", alias, canonical, ea.retention, ec.retention, longer.retention))
		}
	}
	merged := *p
	merged.Groups = groupsOf(retentions)
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
