package config

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// Config is the node's configuration file; docs/node.md lists its fields and
// docs/config.md how it is read.
type Config struct {
	Database        DatabaseConfig        `yaml:"database"`
	Node            NodeConfig            `yaml:"node"`
	Passes          []PassConfig          `yaml:"passes"`
	Ledger          LedgerConfig          `yaml:"ledger"`
	MetadataCleanup MetadataCleanupConfig `yaml:"metadata_cleanup"`
	Cluster         ClusterConfig         `yaml:"cluster"`

	lines      map[string]int // each field's line in the file, by path (passes[0].batch_size)
	dsnFromEnv bool           // database.dsn came from RETENTION_DATABASE_URL
}

// DatabaseConfig names the database the passes and the ledger live in.
type DatabaseConfig struct {
	Driver string `yaml:"driver"`
	DSN    string `yaml:"dsn"`
	// Replicas are DSNs of the database's replicas whose lag paces adaptive passes, for
	// a driver whose source keeps no lag of its replicas (MySQL, MariaDB); refused for
	// the others (docs/pacing.md).
	Replicas []string `yaml:"replicas"`
}

// NodeConfig is the node's own settings.
type NodeConfig struct {
	Admin                string    `yaml:"admin"`
	AdminToken           string    `yaml:"admin_token"`
	MaxConcurrentDeletes int       `yaml:"max_concurrent_deletes"`
	ShutdownGrace        *Duration `yaml:"shutdown_grace"`
	// ReadyAfterFailures is how many failed sweeps in a row make a pass degraded on
	// /readyz (default 3).
	ReadyAfterFailures *int `yaml:"ready_after_failures"`
	// Pacing is the pacing of every pass that names none: fixed (the default) or
	// adaptive (docs/pacing.md).
	Pacing string `yaml:"pacing"`
}

// PassConfig declares one table pass.
type PassConfig struct {
	Name               string        `yaml:"name"`
	Table              string        `yaml:"table"`
	Key                Columns       `yaml:"key"`
	Timestamp          string        `yaml:"timestamp"`
	TimestampFormat    string        `yaml:"timestamp_format"`
	TimestampZone      string        `yaml:"timestamp_zone"`
	Filter             *FilterConfig `yaml:"filter"`
	Where              string        `yaml:"where"`
	RetentionPeriod    *Duration     `yaml:"retention_period"`
	BatchSize          *int          `yaml:"batch_size"`
	BatchDelay         *Duration     `yaml:"batch_delay"`
	SweepInterval      *Duration     `yaml:"sweep_interval"`
	MaxStartupStagger  *Duration     `yaml:"max_startup_stagger"`
	MaxBatchesPerSweep *int          `yaml:"max_batches_per_sweep"`
	BatchTimeout       *Duration     `yaml:"batch_timeout"`
	StatementTimeout   *Duration     `yaml:"statement_timeout"`
	SynchronousCommit  string        `yaml:"synchronous_commit"`
	AnalyzeAfterShare  *float64      `yaml:"analyze_after_share"`
	VacuumAfter        *bool         `yaml:"vacuum_after"`
	VacuumTimeout      *Duration     `yaml:"vacuum_timeout"`
	// Pacing is fixed or adaptive; empty takes node.pacing (default fixed).
	Pacing string `yaml:"pacing"`
	// ProbeQuery is the query an adaptive pass times; empty: a lookup of the newest key.
	ProbeQuery string `yaml:"probe_query"`
	// MaxReplicaLag is the replica lag above which an adaptive pass backs off (1s).
	MaxReplicaLag *Duration `yaml:"max_replica_lag"`
	// MaxBusySessions is the most busy sessions an adaptive pass lets the database have
	// before it backs off, whatever their baseline (0, the default: no limit).
	MaxBusySessions *int `yaml:"max_busy_sessions"`
	// CommitProbe adds the commit probe to an adaptive pass's signals (default false;
	// docs/pacing.md says what it costs).
	CommitProbe *bool         `yaml:"commit_probe"`
	Children    []ChildConfig `yaml:"children"`
	// StrictReferences refuses a table that references the pass's tables with a foreign
	// key children does not list, instead of warning (default false).
	StrictReferences *bool `yaml:"strict_references"`
	// Partitions retires whole expired partitions of a range-partitioned table.
	Partitions *PartitionsConfig `yaml:"partitions"`
}

// FilterConfig is a pass's `column IN values` filter.
type FilterConfig struct {
	Column string `yaml:"column"`
	In     []any  `yaml:"in"`
}

// ChildConfig is a child table of a pass.
type ChildConfig struct {
	Table      string        `yaml:"table"`
	ForeignKey Columns       `yaml:"foreign_key"`
	Key        Columns       `yaml:"key"`
	OnDelete   string        `yaml:"on_delete"`
	Children   []ChildConfig `yaml:"children"`
}

// LedgerConfig configures the run ledger.
type LedgerConfig struct {
	Enabled     *bool  `yaml:"enabled"`
	TablePrefix string `yaml:"table_prefix"`
	Migrate     *bool  `yaml:"migrate"`
}

// MetadataCleanupConfig configures the ledger's metadata cleanup.
type MetadataCleanupConfig struct {
	Enabled         *bool              `yaml:"enabled"`
	RetentionPeriod *Duration          `yaml:"retention_period"`
	CleanupInterval *Duration          `yaml:"cleanup_interval"`
	DeleteBatchSize int                `yaml:"delete_batch_size"`
	Names           []CleanupNameEntry `yaml:"names"`
}

// CleanupNameEntry lists a run name for the metadata cleanup.
type CleanupNameEntry struct {
	Name            string    `yaml:"name"`
	RetentionPeriod *Duration `yaml:"retention_period"`
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// LedgerPrefix returns the ledger's table prefix.
func (c *Config) LedgerPrefix() string {
	if c.Ledger.TablePrefix == "" {
		return ledger.DefaultPrefix
	}
	return c.Ledger.TablePrefix
}

// LedgerEnabled reports whether the node keeps a ledger (default true).
func (c *Config) LedgerEnabled() bool { return boolOr(c.Ledger.Enabled, true) }

// ShutdownGrace returns the grace period for in-flight batches (default 30s).
func (c *Config) ShutdownGrace() time.Duration {
	if c.Node.ShutdownGrace == nil {
		return 30 * time.Second
	}
	return c.Node.ShutdownGrace.Duration
}

// DefaultReadyAfterFailures is node.ready_after_failures when the file leaves it out:
// one failed sweep is often a blip (a deadlock victim, a failover), three in a row is a
// pass that is not doing its job.
const DefaultReadyAfterFailures = 3

// ReadyAfterFailures returns how many failed sweeps in a row make a pass degraded.
func (c *Config) ReadyAfterFailures() int {
	if c.Node.ReadyAfterFailures == nil {
		return DefaultReadyAfterFailures
	}
	return *c.Node.ReadyAfterFailures
}

// LedgerMigrate reports whether the node creates or upgrades the ledger tables itself
// (default true), rather than leaving that to the migrate command.
func (c *Config) LedgerMigrate() bool { return boolOr(c.Ledger.Migrate, true) }

// driverNames lists the drivers retention knows, quoted, for a message: a new driver
// package shows up here without an edit.
func driverNames() string {
	var names []string
	for _, d := range passes.Drivers() {
		names = append(names, fmt.Sprintf("%q", d.Name()))
	}
	return strings.Join(names, " or ")
}

// Validate returns every problem at once, each naming the section or pass, the field
// and its line in the file. It does not touch the database.
func (c *Config) Validate() error {
	var errs []error
	add := func(path, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s%s: %s", c.lineOf(path), path, fmt.Sprintf(format, args...)))
	}
	if _, err := passes.DriverNamed(c.Database.Driver); err != nil {
		add("database.driver", "want %s, got %q", driverNames(), c.Database.Driver)
	} else if c.Database.DSN != "" {
		if err := passes.CheckDSN(c.Database.Driver, c.Database.DSN); err != nil {
			errs = append(errs, c.dsnError(err))
		}
	}
	if c.Database.DSN == "" {
		add("database.dsn", "is empty (or set RETENTION_DATABASE_URL)")
	}
	errs = append(errs, c.replicaErrors()...)
	if c.Node.MaxConcurrentDeletes < 0 {
		add("node.max_concurrent_deletes", "must not be negative, got %d", c.Node.MaxConcurrentDeletes)
	}
	if c.ShutdownGrace() < 0 {
		add("node.shutdown_grace", "must not be negative, got %v", c.ShutdownGrace())
	}
	if c.ReadyAfterFailures() < 1 {
		add("node.ready_after_failures", "must be at least 1, got %d", c.ReadyAfterFailures())
	}
	if c.Node.Admin != "" {
		host, _, err := net.SplitHostPort(c.Node.Admin)
		if err != nil {
			add("node.admin", "%v", err)
		} else if !isLoopback(host) && c.Node.AdminToken == "" {
			add("node.admin", "%s is not a loopback address, so node.admin_token is required", c.Node.Admin)
		}
	}
	if _, err := passes.ParsePacing(c.Node.Pacing); err != nil {
		add("node.pacing", "%v", err)
	}
	seen := map[string]bool{}
	for i, p := range c.Passes {
		p = c.withNodeDefaults(p)
		if p.Name != "" && seen[p.Name] {
			errs = append(errs, fmt.Errorf("%spasses[%d]: pass %q: name is already used by another pass", c.lineOf(fmt.Sprintf("passes[%d].name", i)), i, p.Name))
		}
		seen[p.Name] = true
		if _, _, err := p.Build(); err != nil {
			errs = append(errs, c.passErrors(i, p.Name, err)...)
		}
	}
	c.clusterErrors(add)
	if err := ledger.CheckPrefix(c.LedgerPrefix()); err != nil {
		errs = append(errs, fmt.Errorf("%s%w", c.lineOf("ledger.table_prefix"), err))
	}
	if _, err := c.CleanupPlan(); err != nil {
		errs = append(errs, c.sectionErrors("metadata_cleanup", err)...)
	}
	sortByLine(errs)
	return errors.Join(errs...)
}

// dsnError names where a DSN that does not check came from.
func (c *Config) dsnError(err error) error {
	if c.dsnFromEnv {
		return fmt.Errorf("RETENTION_DATABASE_URL (overriding database.dsn): %w", err)
	}
	return fmt.Errorf("%sdatabase.dsn: %w", c.lineOf("database.dsn"), err)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// withNodeDefaults is p with the node-wide defaults filled in where p leaves a field
// out: node.pacing for pacing.
func (c *Config) withNodeDefaults(p PassConfig) PassConfig {
	if p.Pacing == "" {
		if _, err := passes.ParsePacing(c.Node.Pacing); err == nil {
			p.Pacing = c.Node.Pacing
		}
	}
	return p
}

// Build turns the pass into its options and table declaration, validated, so a caller
// (the node, or a service embedding the runtime) can open the table with passes.NewTable.
func (p PassConfig) Build() (passes.Options, passes.TableSpec, error) {
	o := passes.DefaultOptions()
	set := func(d *Duration, dst *time.Duration) {
		if d != nil {
			*dst = d.Duration
		}
	}
	if p.RetentionPeriod != nil {
		o.RetentionPeriod = passes.Retain(p.RetentionPeriod.Duration)
	}
	if p.BatchSize != nil {
		o.BatchSize = *p.BatchSize
	}
	if p.MaxBatchesPerSweep != nil {
		o.MaxBatchesPerSweep = *p.MaxBatchesPerSweep
	}
	set(p.BatchDelay, &o.BatchDelay)
	set(p.SweepInterval, &o.SweepInterval)
	set(p.MaxStartupStagger, &o.MaxStartupStagger)
	set(p.BatchTimeout, &o.BatchTimeout)
	set(p.MaxReplicaLag, &o.MaxReplicaLag)
	if p.MaxBusySessions != nil {
		o.MaxBusySessions = *p.MaxBusySessions
	}
	o.CommitProbe = boolOr(p.CommitProbe, false)
	o.Pacing = passes.Pacing(p.Pacing)
	spec := passes.TableSpec{ProbeQuery: p.ProbeQuery, Table: p.Table, Timestamp: p.Timestamp, TimestampFormat: passes.TimestampFormat(p.TimestampFormat),
		TimestampZone: p.TimestampZone, Where: p.Where, Children: children(p.Children), SynchronousCommit: p.SynchronousCommit}
	spec.Key, spec.KeyColumns = p.Key.split()
	spec.Partitions = p.Partitions.spec()
	if p.Filter != nil {
		spec.Filter = &passes.Filter{Column: p.Filter.Column, In: p.Filter.In}
	}
	set(p.StatementTimeout, &spec.StatementTimeout)
	set(p.VacuumTimeout, &spec.VacuumTimeout)
	spec.VacuumAfter = boolOr(p.VacuumAfter, false)
	spec.StrictReferences = boolOr(p.StrictReferences, false)
	var shareErr error
	if a := p.AnalyzeAfterShare; a != nil {
		switch {
		case *a < 0:
			msg := fmt.Sprintf("pass %q: analyze_after_share must be between 0 (never) and 1, got %v", p.Name, *a)
			shareErr = core.NewValidationErrorMessage(msg, map[string][]string{"analyze_after_share": {msg}})
		case *a == 0:
			spec.AnalyzeAfterShare = -1 // the file's 0 is never; the spec's zero is the default
		default:
			spec.AnalyzeAfterShare = *a
		}
	}
	return o, spec, errors.Join(o.Validate(p.Name), spec.Validate(p.Name), shareErr)
}

func children(cs []ChildConfig) []passes.ChildSpec {
	var out []passes.ChildSpec
	for _, c := range cs {
		child := passes.ChildSpec{Table: c.Table, OnDelete: passes.OnDelete(c.OnDelete), Children: children(c.Children)}
		child.ForeignKey, child.ForeignKeyColumns = c.ForeignKey.split()
		child.Key, child.KeyColumns = c.Key.split()
		out = append(out, child)
	}
	return out
}

// CleanupEnabled reports whether the metadata cleanup runs (default true with a ledger).
func (c *Config) CleanupEnabled() bool {
	return c.LedgerEnabled() && boolOr(c.MetadataCleanup.Enabled, true)
}

// CleanupPlan is the metadata cleanup's plan (per-name retention periods), validated.
func (c *Config) CleanupPlan() (*ledger.Plan, error) {
	return c.CleanupConfig().Build()
}

// CleanupConfig is the metadata_cleanup section as the ledger takes it, before its
// defaults and rules are applied (CleanupPlan does that), for a caller that adds names
// of its own, such as cluster mode's drain helpers.
func (c *Config) CleanupConfig() ledger.CleanupConfig {
	m := c.MetadataCleanup
	cfg := ledger.CleanupConfig{DeleteBatchSize: m.DeleteBatchSize}
	if m.RetentionPeriod != nil {
		cfg.RetentionPeriod = m.RetentionPeriod.Duration
	}
	if m.CleanupInterval != nil {
		cfg.CleanupInterval = m.CleanupInterval.Duration
	}
	for _, n := range m.Names {
		entry := ledger.NameRetention{Name: n.Name}
		if n.RetentionPeriod != nil {
			entry.Retention = &n.RetentionPeriod.Duration
		}
		cfg.Names = append(cfg.Names, entry)
	}
	return cfg
}
