package passes

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Signals returns the pass's PaceSignals: the probe query (the spec's ProbeQuery, or
// by default a lookup of the newest key, which reads the primary key's index where the
// live workload writes rather than where the sweep deletes), and on PostgreSQL the
// sessions the sweep's backend blocks and the lag of the streaming replicas.
func (t *Table) Signals() PaceSignals {
	probe := t.spec.ProbeQuery
	if probe == "" {
		q := t.db.NewSelect().ColumnExpr("?", columnList(t.spec.Table, t.key)).TableExpr("?", ident(t.spec.Table))
		for _, k := range t.key {
			q = q.OrderExpr("? DESC", qualified(t.spec.Table, k))
		}
		probe = q.Limit(1).String()
	}
	return &tableSignals{t: t, probe: probe}
}

type tableSignals struct {
	t     *Table
	probe string
}

func (s *tableSignals) Probe(ctx context.Context) error {
	rows, err := s.t.db.QueryContext(ctx, s.probe)
	if err != nil {
		return fmt.Errorf("pass %q: probe: %w", s.t.name, err)
	}
	return drain(rows)
}

// drain reads every row, so the probe is timed to its end, not its first row.
func drain(rows *sql.Rows) error {
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

func (s *tableSignals) Blocked(ctx context.Context, sweep Pass) (int, error) {
	b, ok := sweep.(BackendPID)
	if !ok || b.BackendPID() == 0 {
		return 0, nil
	}
	n, err := s.t.drv.Blocked(ctx, s.t.db, b.BackendPID())
	if err != nil {
		return 0, fmt.Errorf("pass %q: sessions the sweep blocks: %w", s.t.name, err)
	}
	return n, nil
}

// BusySessions counts the database's other busy sessions, the sweep's backend (when it
// has one) left out.
func (s *tableSignals) BusySessions(ctx context.Context, sweep Pass) (int, bool, error) {
	backend := 0
	if b, ok := sweep.(BackendPID); ok {
		backend = b.BackendPID()
	}
	n, ok, err := s.t.drv.BusySessions(ctx, s.t.db, backend)
	if err != nil {
		return 0, false, fmt.Errorf("pass %q: busy sessions: %w", s.t.name, err)
	}
	return n, ok, nil
}

// CommitProbe runs the driver's commit probe on the pass's database.
func (s *tableSignals) CommitProbe(ctx context.Context) (bool, error) {
	ok, err := s.t.drv.CommitProbe(ctx, s.t.db)
	if err != nil {
		return false, fmt.Errorf("pass %q: commit probe: %w", s.t.name, err)
	}
	return ok, nil
}

// ReplicaLag is the largest lag of the listed replicas (WithReplicas), or else what the
// database reports of its own: on PostgreSQL pg_stat_replication, the larger of
// replay_lag and write_lag over the replicas. A role that may not read other sessions'
// statistics sees no lag there (PostgreSQL shows it NULL); docs/pacing.md names the
// privilege.
func (s *tableSignals) ReplicaLag(ctx context.Context) (time.Duration, bool, error) {
	if len(s.t.replicas) > 0 {
		return s.listedReplicaLag(ctx)
	}
	lag, ok, err := s.t.drv.ReplicaLag(ctx, s.t.db)
	if err != nil {
		return 0, false, fmt.Errorf("pass %q: replica lag: %w", s.t.name, err)
	}
	return lag, ok, nil
}

// checkProbeQuery returns what is wrong with a probe query as text, or "": one
// read-only statement (it must start with SELECT or WITH) with the same lexical rules
// as a where condition, so nothing can be appended to it.
func checkProbeQuery(q string) string {
	if problem := checkWhere(q); problem != "" {
		return problem
	}
	first := strings.ToUpper(strings.Fields(q)[0])
	if first != "SELECT" && first != "WITH" {
		return fmt.Sprintf("must be a query starting with SELECT or WITH, got %s", quoteForMessage(strings.Fields(q)[0]))
	}
	return ""
}

// PaceWarnings reads, once, the signals an adaptive pass counts sessions by (the
// sessions the sweep blocks, the database's busy sessions) and says which the node's
// user may not read. The pass still runs without them, paced by the others: a signal it
// cannot read is unknown, not zero, and this is the warning that it is. A MySQL user
// without the PROCESS privilege is the usual cause.
func (t *Table) PaceWarnings(ctx context.Context) []string {
	var out []string
	if _, err := t.drv.Blocked(ctx, t.db, 0); err != nil {
		out = append(out, fmt.Sprintf("pass %q: pacing: the sessions the sweep blocks cannot be counted (%v), so the pass paces without them (docs/pacing.md names the privilege)", t.name, err))
	}
	if _, _, err := t.drv.BusySessions(ctx, t.db, 0); err != nil {
		out = append(out, fmt.Sprintf("pass %q: pacing: the database's busy sessions cannot be counted (%v), so the pass paces without them (docs/pacing.md names the privilege)", t.name, err))
	}
	return out
}
