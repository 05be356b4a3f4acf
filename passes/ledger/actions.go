package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/retentionkit/retention/passes"
)

// NameAdminActions is the run name operator actions taken through the dashboard are
// recorded under: one run per action, with a log row saying what was done, to what and
// from where. It is not an internal name, so the metadata cleanup keeps these runs (an
// audit trail) unless metadata_cleanup.names lists it with a retention.
const NameAdminActions = "retention.admin"

// Action is one operator action: a trigger, a dead-letter retry, a quarantine release
// or a settings change.
type Action struct {
	// Kind is what was done: "trigger", "retry", "release", "settings".
	Kind string
	// Target is what it was done to: a pass, a dead letter id, a setting key.
	Target string
	// Detail is the outcome in words ("queued run 12", "released 3 rows").
	Detail string
	// From is who asked: the client address of the request.
	From string
	// Err is the action's failure; a failed action is recorded as a Failed run.
	Err error
	At  time.Time
}

// RecordAction writes a as a finished run under NameAdminActions with one log row, in
// one transaction, and returns the run id.
func (l *Ledger) RecordAction(ctx context.Context, a Action) (int64, error) {
	at := a.At.UTC()
	run := &Run{Name: NameAdminActions, State: Completed, StartTime: at, EndTime: &at, StopReason: ptr(a.Kind), NodeID: l.owner()}
	level, msg := "info", fmt.Sprintf("%s %s: %s (from %s)", a.Kind, a.Target, a.Detail, a.From)
	if a.Err != nil {
		run.State, run.Error = Failed, ptr(a.Err.Error())
		level, msg = "warning", fmt.Sprintf("%s %s failed: %v (from %s)", a.Kind, a.Target, a.Err, a.From)
	}
	err := passes.TxUnitOfWork{DB: l.db}.Execute(ctx, func(ctx context.Context) error {
		tx := passes.DB(ctx, l.db)
		if _, err := tx.NewInsert().Model(run).ModelTableExpr(l.table("metadata")).Returning("id").Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewInsert().Model(&LogEntry{MetadataID: run.ID, Level: level, Time: at, Message: msg}).ModelTableExpr(l.table("log")).Exec(ctx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("ledger: record %s of %s: %w", a.Kind, a.Target, err)
	}
	return run.ID, nil
}
