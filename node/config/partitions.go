package config

import "github.com/retentionkit/retention/passes"

// PartitionsConfig is a pass's partitions section: retire whole expired partitions of a
// PostgreSQL range-partitioned table before deleting rows (docs/config.md, "Partitions").
type PartitionsConfig struct {
	Mode             string    `yaml:"mode"`
	ArchiveSchema    string    `yaml:"archive_schema"`
	Concurrently     *bool     `yaml:"concurrently"`
	LockTimeout      *Duration `yaml:"lock_timeout"`
	AllowPublication *bool     `yaml:"allow_publication"`
}

// spec is the section as the pass takes it; nil stays nil (rows only).
func (p *PartitionsConfig) spec() *passes.PartitionSpec {
	if p == nil {
		return nil
	}
	s := &passes.PartitionSpec{Mode: passes.PartitionMode(p.Mode), ArchiveSchema: p.ArchiveSchema,
		Concurrently: p.Concurrently, AllowPublication: boolOr(p.AllowPublication, false)}
	if p.LockTimeout != nil {
		s.LockTimeout = p.LockTimeout.Duration
	}
	return s
}
