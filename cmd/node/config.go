package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// Config is the node's configuration file (see DESIGN.md, "cmd/node").
type Config struct {
	Database        DatabaseConfig        `yaml:"database"`
	Node            NodeConfig            `yaml:"node"`
	Passes          []PassConfig          `yaml:"passes"`
	Ledger          LedgerConfig          `yaml:"ledger"`
	MetadataCleanup MetadataCleanupConfig `yaml:"metadata_cleanup"`
}

// DatabaseConfig names the database the passes and the ledger live in.
type DatabaseConfig struct {
	Driver string `yaml:"driver"`
	DSN    string `yaml:"dsn"`
}

// NodeConfig is the node's own settings.
type NodeConfig struct {
	Admin                string    `yaml:"admin"`
	AdminToken           string    `yaml:"admin_token"`
	MaxConcurrentDeletes int       `yaml:"max_concurrent_deletes"`
	ShutdownGrace        *Duration `yaml:"shutdown_grace"`
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
	Children           []ChildConfig `yaml:"children"`
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

// Duration is a Go duration that also takes days ("30d", "1d12h").
type Duration struct{ time.Duration }

var daysPattern = regexp.MustCompile(`^(-?)(\d+)d(.*)$`)

// ParseDuration reads a Go duration with an optional leading day count.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if m := daysPattern.FindStringSubmatch(s); m != nil {
		days, err := strconv.Atoi(m[2])
		if err != nil {
			return 0, err
		}
		d := time.Duration(days) * 24 * time.Hour
		if m[3] != "" {
			rest, err := time.ParseDuration(m[3])
			if err != nil {
				return 0, fmt.Errorf("duration %q: %w", s, err)
			}
			d += rest
		}
		if m[1] == "-" {
			d = -d
		}
		return d, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: want a Go duration (90s, 1h30m) or days (30d)", s)
	}
	return d, nil
}

// UnmarshalYAML parses a duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseDuration(n.Value)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

var envPattern = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// LoadConfig reads the file at path: ${VAR} expanded from the environment, unknown
// fields refused, RETENTION_DATABASE_URL overriding the DSN.
func LoadConfig(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	expanded := envPattern.ReplaceAllStringFunc(string(raw), func(m string) string {
		return os.Getenv(envPattern.FindStringSubmatch(m)[1])
	})
	dec := yaml.NewDecoder(bytes.NewReader([]byte(expanded)))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if url := os.Getenv("RETENTION_DATABASE_URL"); url != "" {
		c.Database.DSN = url
	}
	return &c, nil
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

// Validate returns every problem at once, each naming the section or pass and the field.
// It does not touch the database.
func (c *Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch c.Database.Driver {
	case passes.DriverPostgres, passes.DriverSQLite:
	default:
		add("database.driver: want %q or %q, got %q", passes.DriverPostgres, passes.DriverSQLite, c.Database.Driver)
	}
	if c.Database.DSN == "" {
		add("database.dsn: is empty (or set RETENTION_DATABASE_URL)")
	}
	if c.Node.MaxConcurrentDeletes < 0 {
		add("node.max_concurrent_deletes: must not be negative, got %d", c.Node.MaxConcurrentDeletes)
	}
	if c.ShutdownGrace() < 0 {
		add("node.shutdown_grace: must not be negative, got %v", c.ShutdownGrace())
	}
	if c.Node.Admin != "" {
		host, _, err := net.SplitHostPort(c.Node.Admin)
		if err != nil {
			add("node.admin: %v", err)
		} else if !isLoopback(host) && c.Node.AdminToken == "" {
			add("node.admin: %s is not a loopback address, so node.admin_token is required", c.Node.Admin)
		}
	}
	seen := map[string]bool{}
	for i, p := range c.Passes {
		if p.Name != "" && seen[p.Name] {
			add("passes[%d]: pass %q: name is already used by another pass", i, p.Name)
		}
		seen[p.Name] = true
		if _, _, err := p.build(); err != nil {
			errs = append(errs, fmt.Errorf("passes[%d]: %w", i, err))
		}
	}
	if err := ledger.CheckPrefix(c.LedgerPrefix()); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.cleanupPlan(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// build turns the pass into its options and table declaration, validated.
func (p PassConfig) build() (passes.Options, passes.TableSpec, error) {
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
	spec := passes.TableSpec{Table: p.Table, Timestamp: p.Timestamp, TimestampFormat: passes.TimestampFormat(p.TimestampFormat),
		TimestampZone: p.TimestampZone, Where: p.Where, Children: children(p.Children)}
	spec.Key, spec.KeyColumns = p.Key.split()
	if p.Filter != nil {
		spec.Filter = &passes.Filter{Column: p.Filter.Column, In: p.Filter.In}
	}
	set(p.StatementTimeout, &spec.StatementTimeout)
	return o, spec, errors.Join(o.Validate(p.Name), spec.Validate(p.Name))
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

func (c *Config) cleanupPlan() (*ledger.Plan, error) {
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
	return cfg.Build()
}
