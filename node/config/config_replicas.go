package config

import (
	"fmt"

	"github.com/retentionkit/retention/passes"
)

// replicaErrors checks database.replicas: a list only a driver that asks each replica
// for its lag takes (PostgreSQL reads its replicas' lag on the primary, SQLite has
// none), of DSNs that driver takes, each named once.
func (c *Config) replicaErrors() []error {
	if len(c.Database.Replicas) == 0 {
		return nil
	}
	d, err := passes.DriverNamed(c.Database.Driver)
	if err != nil {
		return nil // database.driver's own error says it
	}
	if !d.ListsReplicas() {
		return []error{fmt.Errorf("%sdatabase.replicas: the %s driver takes no list of replicas (it reads replica lag "+
			"without one, or has no replicas; docs/pacing.md); remove it", c.lineOf("database.replicas"), d.Name())}
	}
	var errs []error
	seen := map[string]int{}
	for i, dsn := range c.Database.Replicas {
		path := fmt.Sprintf("database.replicas[%d]", i)
		switch first, dup := seen[dsn]; {
		case dsn == "":
			errs = append(errs, fmt.Errorf("%s%s: is empty: want the DSN of a replica", c.lineOf(path), path))
		case dup:
			errs = append(errs, fmt.Errorf("%s%s: names the same replica as database.replicas[%d]", c.lineOf(path), path, first))
		case dsn == c.Database.DSN:
			errs = append(errs, fmt.Errorf("%s%s: is database.dsn itself, the source: list its replicas", c.lineOf(path), path))
		default:
			if err := passes.CheckDSN(d.Name(), dsn); err != nil {
				errs = append(errs, fmt.Errorf("%s%s: %w", c.lineOf(path), path, err))
			}
		}
		if _, ok := seen[dsn]; !ok {
			seen[dsn] = i
		}
	}
	return errs
}
