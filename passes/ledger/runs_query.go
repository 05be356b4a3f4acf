package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Bounds of RunFilter.Limit: a page of the run history is small enough to render and to
// fetch the log rows of in one query.
const (
	DefaultRunPage = 50
	MaxRunPage     = 500
)

// RunFilter selects runs for the dashboard's run history. Every zero field selects
// everything: the zero RunFilter is the newest DefaultRunPage runs of every name.
type RunFilter struct {
	// Name is one run name (a pass, or an internal name such as NameMetadataCleanup).
	Name string
	// State is one run state.
	State State
	// Since and Until bound the start time: Since <= start_time < Until.
	Since, Until time.Time
	// BeforeID pages back: only runs with a smaller id. Ids grow with every run recorded,
	// so a page ends where the next begins however many runs are written meanwhile.
	BeforeID int64
	// Limit is the page size: DefaultRunPage when below 1, at most MaxRunPage.
	Limit int
}

func (f RunFilter) limit() int {
	switch {
	case f.Limit < 1:
		return DefaultRunPage
	case f.Limit > MaxRunPage:
		return MaxRunPage
	}
	return f.Limit
}

// FindRuns returns the runs f selects, newest (highest id) first.
func (l *Ledger) FindRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	runs := []Run{}
	q := l.db.NewSelect().Model(&runs).ModelTableExpr(l.table("metadata") + " AS run").OrderExpr("id DESC").Limit(int64(f.limit()))
	if f.Name != "" {
		q = q.Where("name = ?", f.Name)
	}
	if f.State != "" {
		q = q.Where("state = ?", f.State)
	}
	if !f.Since.IsZero() {
		q = q.Where("start_time >= ?", f.Since.UTC())
	}
	if !f.Until.IsZero() {
		q = q.Where("start_time < ?", f.Until.UTC())
	}
	if f.BeforeID > 0 {
		q = q.Where("id < ?", f.BeforeID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("ledger: find runs: %w", err)
	}
	return runs, nil
}

// LogsOf returns the log rows of the runs ids, by run id, each run's in the order
// written: one query for a page of runs rather than one per run.
func (l *Ledger) LogsOf(ctx context.Context, ids []int64) (map[int64][]LogEntry, error) {
	out := map[int64][]LogEntry{}
	if len(ids) == 0 {
		return out, nil
	}
	var entries []LogEntry
	err := l.db.NewSelect().Model(&entries).ModelTableExpr(l.table("log")+" AS log_entry").
		Where("metadata_id IN (?)", bun.List(ids)).OrderExpr("id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger: logs of %d runs: %w", len(ids), err)
	}
	for _, e := range entries {
		out[e.MetadataID] = append(out[e.MetadataID], e)
	}
	return out, nil
}

// RunNames returns every run name the ledger holds, sorted, for a filter's choices.
func (l *Ledger) RunNames(ctx context.Context) ([]string, error) {
	var names []string
	err := l.db.NewSelect().TableExpr("?", bun.Ident(l.table("metadata"))).ColumnExpr("DISTINCT name").OrderExpr("name").Scan(ctx, &names)
	if err != nil {
		return nil, fmt.Errorf("ledger: run names: %w", err)
	}
	return names, nil
}

// SweepHistory returns the last n finished runs of pass, oldest first: the series a
// chart of rows deleted per sweep draws.
func (l *Ledger) SweepHistory(ctx context.Context, pass string, n int) ([]Run, error) {
	runs := []Run{}
	err := l.db.NewSelect().Model(&runs).ModelTableExpr(l.table("metadata")+" AS run").
		Where("name = ?", pass).Where("state IN (?)", bun.List([]State{Completed, Failed, Cancelled})).
		OrderExpr("id DESC").Limit(int64(max(n, 1))).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger: sweep history of %q: %w", pass, err)
	}
	for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
		runs[i], runs[j] = runs[j], runs[i]
	}
	return runs, nil
}

// LastRuns returns the latest finished run of every name, by name: one query for a page
// listing every pass with its last sweep's counts.
func (l *Ledger) LastRuns(ctx context.Context) (map[string]Run, error) {
	var runs []Run
	latest := l.db.NewSelect().TableExpr("?", bun.Ident(l.table("metadata"))).ColumnExpr("MAX(id)").
		Where("state IN (?)", bun.List([]State{Completed, Failed, Cancelled})).GroupExpr("name")
	err := l.db.NewSelect().Model(&runs).ModelTableExpr(l.table("metadata")+" AS run").Where("id IN (?)", latest).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger: last runs: %w", err)
	}
	out := make(map[string]Run, len(runs))
	for _, r := range runs {
		out[r.Name] = r
	}
	return out, nil
}
