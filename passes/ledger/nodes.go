package ledger

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"time"

	"github.com/uptrace/bun"
)

// Heartbeat timing. A node writes its heartbeat every DefaultHeartbeatInterval; a run
// whose owner's heartbeat is older than DefaultStaleAfter (three missed heartbeats) was
// abandoned by a node that died, and any node closes it. Node clocks must agree to well
// within DefaultStaleAfter: each node stamps its heartbeats with its own clock and judges
// the others' with it.
const (
	DefaultHeartbeatInterval = 5 * time.Second
	DefaultStaleAfter        = 3 * DefaultHeartbeatInterval
	// NodeRetention is how long the row of a node that stopped heartbeating is kept
	// after its runs were recovered, so `status` can still say which node ran a run.
	NodeRetention = 7 * 24 * time.Hour
)

// StopAbandoned is the stop reason of a run closed because its node stopped
// heartbeating before finishing it (killed, or cut off from the database).
const StopAbandoned = "abandoned"

// Node is one process writing the ledger: a random id made at startup, where it runs,
// and when it started. A restarted process is a new node.
type Node struct {
	ID      string    `bun:"id,pk"`
	Host    string    `bun:"host,notnull"`
	PID     int64     `bun:"pid,notnull"`
	Started time.Time `bun:"started_time,notnull"`
	// Heartbeat is the node's last heartbeat, on its own clock.
	Heartbeat time.Time `bun:"heartbeat_time,notnull"`
}

// NewNode returns this process as a node started at started, with a fresh random id.
func NewNode(started time.Time) Node {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return Node{ID: rand.Text(), Host: host, PID: int64(os.Getpid()), Started: started.UTC(), Heartbeat: started.UTC()}
}

// ForNode returns the ledger as written by node id: every run it starts, claims or
// activates records id as its owner, so recovery can tell when the owner is gone.
func (l *Ledger) ForNode(id string) *Ledger {
	owned := *l
	owned.node = id
	return &owned
}

// NodeID returns the node the ledger writes as, or "" for none (runs without an owner
// are never recovered).
func (l *Ledger) NodeID() string { return l.node }

// Heartbeat records that node n is alive at `at`, inserting its row the first time (and
// again should recovery have pruned it while the node was cut off).
func (l *Ledger) Heartbeat(ctx context.Context, n Node, at time.Time) error {
	n.Heartbeat = at.UTC()
	q := l.db.NewInsert().Model(&n).ModelTableExpr(l.table("node"))
	_, err := l.driver.LedgerUpsert(q, []string{"id"}, "heartbeat_time").Exec(ctx)
	if err != nil {
		return fmt.Errorf("ledger: heartbeat of node %s: %w", n.ID, err)
	}
	return nil
}

// Nodes returns every node row, latest heartbeat first.
func (l *Ledger) Nodes(ctx context.Context) ([]Node, error) {
	var nodes []Node
	if err := l.db.NewSelect().Model(&nodes).ModelTableExpr(l.table("node") + " AS node").OrderExpr("heartbeat_time DESC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("ledger: nodes: %w", err)
	}
	return nodes, nil
}

// CloseAbandoned closes up to n open runs (InProgress, or Pending and claimed) whose
// owner's last heartbeat is before staleBefore, or whose owner has no row any more, as
// Failed with stop reason "abandoned" at `at`, keeping the counts they recorded. It
// returns how many it closed. A run with no owner is left alone: nothing says whether
// its writer is alive.
func (l *Ledger) CloseAbandoned(ctx context.Context, staleBefore, at time.Time, n int) (int, error) {
	batch := l.db.NewSelect().TableExpr("? AS m", bun.Ident(l.table("metadata"))).Column("m.id").
		Where("m.state IN (?)", bun.List([]State{InProgress, Pending})).
		Where("m.node_id IS NOT NULL").
		Where("NOT EXISTS (SELECT 1 FROM ? AS n WHERE n.id = m.node_id AND n.heartbeat_time >= ?)", bun.Ident(l.table("node")), staleBefore.UTC()).
		OrderExpr("m.id").Limit(int64(n))
	// The batch is read through a derived table: MySQL allows no LIMIT in an IN subquery
	// (error 1235) and no subquery on the table an UPDATE writes (1093), but
	// materialises a derived table first; PostgreSQL and SQLite read it the same.
	ids := l.db.NewSelect().TableExpr("(?) AS batch", batch).Column("id")
	res, err := l.db.NewUpdate().TableExpr("?", bun.Ident(l.table("metadata"))).
		Set("state = ?", Failed).Set("end_time = ?", at.UTC()).Set("stop_reason = ?", StopAbandoned).
		Set("error = ?", fmt.Sprintf("the node running it stopped heartbeating (none since %s)", staleBefore.UTC().Format(time.RFC3339))).
		Where("id IN (?)", ids).Where("state IN (?)", bun.List([]State{InProgress, Pending})).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("ledger: close abandoned runs: %w", err)
	}
	closed, err := res.RowsAffected()
	return int(closed), err
}

// PruneNodes deletes the rows of nodes whose last heartbeat is before before and that
// own no open run any more.
func (l *Ledger) PruneNodes(ctx context.Context, before time.Time) error {
	// The node table has no alias: MySQL and MariaDB before 11.6 take none in a
	// single-table DELETE, so the subquery names it in full.
	node := bun.Ident(l.table("node"))
	_, err := l.db.NewDelete().TableExpr("?", node).
		Where("heartbeat_time < ?", before.UTC()).
		Where("NOT EXISTS (SELECT 1 FROM ? AS m WHERE m.node_id = ?.id AND m.state IN (?))", bun.Ident(l.table("metadata")), node, bun.List([]State{InProgress, Pending})).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("ledger: prune nodes: %w", err)
	}
	return nil
}
