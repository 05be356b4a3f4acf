package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes"
)

// OpenReplicas opens the replicas database.replicas lists and checks each answers and
// is a replica (passes.CheckReplica), so a typo or the source's own DSN is refused at
// startup instead of pacing by a lag that never comes. A replica named wrong is a
// *ConfigError; one that does not answer is not (exit 1, as the database's own). A
// replica that is set up but not replicating now is taken: the adaptive passes wait for
// it. Messages show each replica's DSN redacted. On error nothing stays open.
func OpenReplicas(ctx context.Context, cfg *config.Config) ([]passes.Replica, error) {
	var out []passes.Replica
	fail := func(err error) ([]passes.Replica, error) {
		for _, r := range out {
			_ = r.DB.Close()
		}
		return nil, err
	}
	for i, dsn := range cfg.Database.Replicas {
		name := passes.RedactDSNFor(cfg.Database.Driver, dsn)
		at := fmt.Sprintf("%sdatabase.replicas[%d]", cfg.LineOf(fmt.Sprintf("database.replicas[%d]", i)), i)
		db, err := passes.OpenWith(ctx, cfg.Database.Driver, dsn, passes.OpenOptions{})
		if err != nil {
			shown := fmt.Errorf("%s %s: %s", at, name, passes.RedactTextFor(cfg.Database.Driver, err.Error(), dsn))
			if errors.Is(err, passes.ErrBadDSN) {
				return fail(badConfig(shown))
			}
			return fail(shown)
		}
		r := passes.Replica{Name: name, DB: db}
		out = append(out, r)
		if err := passes.CheckReplica(ctx, r); err != nil {
			shown := fmt.Errorf("%s: %s", at, passes.RedactTextFor(cfg.Database.Driver, err.Error(), dsn))
			if errors.Is(err, passes.ErrNotAReplica) {
				return fail(badConfig(shown))
			}
			return fail(shown)
		}
	}
	return out, nil
}
