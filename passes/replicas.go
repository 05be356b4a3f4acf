package passes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// Replica is a replica whose lag paces the pass's adaptive sweeps, on a database whose
// source keeps no lag of its replicas (MySQL, MariaDB: the config's database.replicas).
type Replica struct {
	// Name is how messages name the replica: its host and port, never its DSN's secrets.
	Name string
	// DB is a handle on the replica, opened by the caller, who closes it.
	DB *bun.DB
}

// ErrReplicaLagUnknown is a listed replica whose lag cannot be told: it is not
// replicating (a replication thread stopped or broken, MySQL's NULL lag) or it did not
// answer. An adaptive pass counts it as lagging and holds its batches until the lag is
// known again, as pt-archiver waits on a replica whose lag is NULL: deleting on would
// only make the replica's catching up longer.
var ErrReplicaLagUnknown = errors.New("its lag is unknown, which counts as lagging")

// ErrNotAReplica is a listed replica that replicates from no source: the config names
// the wrong server (the source itself, say), and its lag would read as none forever.
var ErrNotAReplica = errors.New("the server replicates from no source")

// WithReplicas returns a copy of the pass whose adaptive sweeps are paced by the lag of
// replicas as each reports it (driver.Pace.ReplicaStatus) instead of by what the
// database reports of its own replicas. It wraps driver.ErrUnsupported where the
// database reads replica lag without a list (PostgreSQL) or has none (SQLite).
func (t *Table) WithReplicas(replicas []Replica) (*Table, error) {
	if len(replicas) > 0 && !t.drv.ListsReplicas() {
		return nil, fmt.Errorf("pass %q: a list of replicas on %s: %w", t.name, t.drv.Name(), driver.ErrUnsupported)
	}
	c := *t
	c.replicas = replicas
	return &c, nil
}

// CheckReplica is what startup asks of each listed replica: that it answers and is a
// replica (ErrNotAReplica when it replicates from nothing). A replica that is set up
// but not replicating now passes: it may be stopped on purpose, and the pacing waits
// for it.
func CheckReplica(ctx context.Context, r Replica) error {
	d, err := DriverFor(r.DB)
	if err != nil {
		return err
	}
	st, err := d.ReplicaStatus(ctx, r.DB)
	switch {
	case err != nil:
		return fmt.Errorf("replica %s: %w", r.Name, err)
	case !st.Replica:
		return fmt.Errorf("replica %s: %w (SHOW REPLICA STATUS is empty there)", r.Name, ErrNotAReplica)
	}
	return nil
}

// listedReplicaLag is the largest lag of the listed replicas. A replica not
// replicating, failing to answer, or no longer a replica makes the lag unknown
// (ErrReplicaLagUnknown, naming the replica): the pacing must not read it as none.
func (s *tableSignals) listedReplicaLag(ctx context.Context) (time.Duration, bool, error) {
	var largest time.Duration
	for _, r := range s.t.replicas {
		st, err := s.t.drv.ReplicaStatus(ctx, r.DB)
		switch {
		case err != nil:
			return 0, true, fmt.Errorf("pass %q: replica %s did not answer (%w); %w", s.t.name, r.Name, err, ErrReplicaLagUnknown)
		case !st.Replica:
			return 0, true, fmt.Errorf("pass %q: replica %s: %w; %w", s.t.name, r.Name, ErrNotAReplica, ErrReplicaLagUnknown)
		case !st.Replicating:
			return 0, true, fmt.Errorf("pass %q: replica %s is not replicating (its lag is NULL); %w", s.t.name, r.Name, ErrReplicaLagUnknown)
		}
		largest = max(largest, st.Lag)
	}
	return largest, true, nil
}
