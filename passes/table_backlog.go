package passes

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Backlog is a table pass's expired rows at one cutoff, split three ways that never
// overlap, so every reader (the CLI's status and dry run, /metrics, the dashboard) shows
// the same figures and none of them promises a delete a sweep would not make:
//
//   - Deletable: expired rows matching the filter and the where that a sweep would
//     delete now;
//   - Held: expired rows a child with on_delete: block keeps (a legal hold);
//   - Quarantined: expired rows that are not held and are in the pass's quarantine
//     (their own delete failed; the sweep leaves them out until their next attempt).
//
// Deletable + Held + Quarantined is every expired row the pass selects.
type Backlog struct {
	Deletable, Held, Quarantined int64
}

// Expired returns every expired row the pass selects, held and quarantined included.
func (b Backlog) Expired() int64 { return b.Deletable + b.Held + b.Quarantined }

// quarantineChunk bounds the keys one count compares with an IN list.
const quarantineChunk = 500

// Backlog measures the pass's backlog at cutoff at (see Backlog), deleting nothing.
// Without a quarantine (WithQuarantine) no row is quarantined.
func (t *Table) Backlog(ctx context.Context, at time.Time) (Backlog, error) {
	dry, err := t.DryRun(ctx, at)
	if err != nil {
		return Backlog{}, err
	}
	quarantined, err := t.quarantinedExpired(ctx, at)
	if err != nil {
		return Backlog{}, fmt.Errorf("pass %q: backlog: %w", t.name, err)
	}
	return Backlog{Deletable: max(dry.Eligible-quarantined, 0), Held: dry.Blocked, Quarantined: quarantined}, nil
}

// quarantinedExpired counts the rows in the pass's quarantine that a sweep at cutoff
// would otherwise delete: still present, expired, matching, and not held by a block
// child. A quarantine row whose table row is gone or held counts nowhere here.
func (t *Table) quarantinedExpired(ctx context.Context, at time.Time) (int64, error) {
	if t.quarantine == nil {
		return 0, nil
	}
	entries, err := t.quarantine.Quarantined(ctx, t.name)
	if err != nil || len(entries) == 0 {
		return 0, err
	}
	lay, err := t.readLayout(ctx, t.db)
	if err != nil {
		return 0, err
	}
	keys := make([][]any, 0, len(entries))
	for _, e := range entries {
		if key, ok := lay.decodeKey(e.Key, len(t.key)); ok {
			keys = append(keys, key)
		}
	}
	cut := t.cutoff(at, lay)
	var total int64
	for chunk := range slices.Chunk(keys, quarantineChunk) {
		n, err := t.eligible(t.db.NewSelect().TableExpr("?", ident(t.spec.Table)), cut).
			Where("? IN (?)", tuple(t.spec.Table, t.key), keyList(chunk)).Count(ctx)
		if err != nil {
			return 0, err
		}
		total += int64(n)
	}
	return total, nil
}
