package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// State is where a run is in its life. Only the three terminal states may ever be
// pruned by the metadata cleanup.
type State string

// The run states.
const (
	Pending    State = "Pending"
	InProgress State = "InProgress"
	Completed  State = "Completed"
	Failed     State = "Failed"
	Cancelled  State = "Cancelled"
)

// Terminal reports whether s is a final state.
func (s State) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Run is one metadata row.
type Run struct {
	ID          int64      `bun:"id,pk,autoincrement"`
	Name        string     `bun:"name,notnull"`
	State       State      `bun:"state,notnull"`
	StartTime   time.Time  `bun:"start_time,notnull"`
	EndTime     *time.Time `bun:"end_time"`
	Cutoff      *time.Time `bun:"cutoff"`
	RowsDeleted int64      `bun:"rows_deleted,notnull"`
	RowsSkipped int64      `bun:"rows_skipped,notnull"`
	Batches     int64      `bun:"batches,notnull"`
	StopReason  *string    `bun:"stop_reason"`
	Error       *string    `bun:"error"`
	ParentID    *int64     `bun:"parent_id"`
	// NodeID is the node that ran it (see Ledger.ForNode), nil when none was recorded.
	NodeID *string `bun:"node_id"`
}

// LogEntry is one log row of a run.
type LogEntry struct {
	ID         int64     `bun:"id,pk,autoincrement"`
	MetadataID int64     `bun:"metadata_id,notnull"`
	Level      string    `bun:"level,notnull"`
	Time       time.Time `bun:"time,notnull"`
	Message    string    `bun:"message,notnull"`
	RowKey     *string   `bun:"row_key"`
}

// Ledger reads and writes the run history under one table prefix. It is safe for
// concurrent use.
type Ledger struct {
	db     *bun.DB
	driver driver.Driver // what differs by database: DDL types, row locks, the catalog
	prefix string
	node   string // the owner stamped on runs; "" for none
}

// New returns the ledger under prefix (see CheckPrefix; Migrate creates the tables).
func New(db *bun.DB, prefix string) (*Ledger, error) {
	if err := CheckPrefix(prefix); err != nil {
		return nil, err
	}
	d, err := driverOf(db)
	if err != nil {
		return nil, err
	}
	return &Ledger{db: db, driver: d, prefix: prefix}, nil
}

func (l *Ledger) table(name string) string { return l.prefix + name }

// Prefix returns the ledger's table prefix.
func (l *Ledger) Prefix() string { return l.prefix }

// StartRun records a run that began at start, in state InProgress, and returns its id.
func (l *Ledger) StartRun(ctx context.Context, name string, start, cutoff time.Time, parent *int64) (int64, error) {
	run := &Run{Name: name, State: InProgress, StartTime: start.UTC(), Cutoff: ptr(cutoff.UTC()), ParentID: parent, NodeID: l.owner()}
	if _, err := l.db.NewInsert().Model(run).ModelTableExpr(l.table("metadata")).Returning("id").Exec(ctx); err != nil {
		return 0, fmt.Errorf("ledger: start run of %q: %w", name, err)
	}
	return run.ID, nil
}

// Finish is how a run ended.
type Finish struct {
	End         time.Time
	State       State
	RowsDeleted int64
	RowsSkipped int64
	Batches     int64
	StopReason  string
	Error       string
}

// FinishRun records how run id ended. A run already in a terminal state is left alone,
// but for one recovery closed as abandoned while its owner, this node, was only cut off
// from the database: the owner knows how it really ended.
func (l *Ledger) FinishRun(ctx context.Context, id int64, f Finish) error {
	q := l.db.NewUpdate().TableExpr(l.table("metadata")).
		Set("state = ?", f.State).Set("end_time = ?", f.End.UTC()).
		Set("rows_deleted = ?", f.RowsDeleted).Set("rows_skipped = ?", f.RowsSkipped).
		Set("batches = ?", f.Batches).Set("stop_reason = ?", nullString(f.StopReason)).
		Set("error = ?", nullString(f.Error)).
		Where("id = ?", id)
	if l.node == "" {
		q = q.Where("state IN (?)", bun.List([]State{Pending, InProgress}))
	} else {
		q = q.Where("(state IN (?) OR (stop_reason = ? AND node_id = ?))", bun.List([]State{Pending, InProgress}), StopAbandoned, l.node)
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("ledger: finish run %d: %w", id, err)
	}
	return nil
}

// Progress is what an unfinished run has done so far.
type Progress struct {
	RowsDeleted int64
	RowsSkipped int64
	Batches     int64
}

// RecordProgress stores the counts of run id while it is still InProgress, so a node
// that dies mid-run leaves counts behind that undercount by at most what it did since
// its last call. Counts only grow: a late or repeated write never lowers them.
func (l *Ledger) RecordProgress(ctx context.Context, id int64, p Progress) error {
	_, err := l.db.NewUpdate().TableExpr(l.table("metadata")).
		Set("rows_deleted = ?", p.RowsDeleted).Set("rows_skipped = ?", p.RowsSkipped).Set("batches = ?", p.Batches).
		Where("id = ?", id).Where("state = ?", InProgress).Where("batches <= ?", p.Batches).Exec(ctx)
	if err != nil {
		return fmt.Errorf("ledger: progress of run %d: %w", id, err)
	}
	return nil
}

// Log adds a log row to run id; rowKey is the key of a skipped row, or "".
func (l *Ledger) Log(ctx context.Context, id int64, level string, at time.Time, message, rowKey string) error {
	entry := &LogEntry{MetadataID: id, Level: level, Time: at.UTC(), Message: message}
	if rowKey != "" {
		entry.RowKey = &rowKey
	}
	if _, err := l.db.NewInsert().Model(entry).ModelTableExpr(l.table("log")).Exec(ctx); err != nil {
		return fmt.Errorf("ledger: log for run %d: %w", id, err)
	}
	return nil
}

// Runs returns the latest runs of name, newest first, at most limit.
func (l *Ledger) Runs(ctx context.Context, name string, limit int) ([]Run, error) {
	var runs []Run
	err := l.db.NewSelect().Model(&runs).ModelTableExpr(l.table("metadata")+" AS run").
		Where("name = ?", name).OrderExpr("start_time DESC, id DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil && err != sql.ErrNoRows {
		return nil, fmt.Errorf("ledger: runs of %q: %w", name, err)
	}
	return runs, nil
}

// Logs returns the log rows of run id in the order written.
func (l *Ledger) Logs(ctx context.Context, id int64) ([]LogEntry, error) {
	var entries []LogEntry
	err := l.db.NewSelect().Model(&entries).ModelTableExpr(l.table("log")+" AS log_entry").
		Where("metadata_id = ?", id).OrderExpr("id").Scan(ctx)
	if err != nil && err != sql.ErrNoRows {
		return nil, fmt.Errorf("ledger: logs of run %d: %w", id, err)
	}
	return entries, nil
}

// owner is the node id to stamp on a run, nil for none.
func (l *Ledger) owner() *string {
	if l.node == "" {
		return nil
	}
	return &l.node
}

func ptr[T any](v T) *T { return &v }

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
