package passes

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// heldByChildren returns (as KeyText) the keys among keys, already locked by this
// transaction, that have a child row, at any level and set_null children too, that another
// transaction holds. Deleting or clearing such a child would wait for that transaction
// until the statement timeout and fail the whole batch, so those parents are passed over
// exactly like a parent SKIP LOCKED passed over: left in place, neither bisected nor
// skipped, and tried again when the sweep comes back to them. For each child table it
// locks the batch's children with FOR UPDATE SKIP LOCKED, then counts the same children
// with a plain read: a parent with more children than were locked has one another
// transaction holds. The children of the parents it keeps stay locked until the batch
// commits, so the deletes that follow do not wait for them; the locks it took on the
// children of the parents it passes over go at commit too. A driver that cannot skip locked rows (SQLite: no row locks) has
// none held.
func (t *Table) heldByChildren(ctx context.Context, tx bun.IDB, keys [][]any, lay *tableLayout) (map[string]bool, error) {
	if !t.drv.SkipsLocked() {
		return nil, nil
	}
	held := map[string]bool{}
	for _, c := range t.children {
		if c.onDelete() == OnDeleteBlock {
			continue // a row with a block child is never a candidate
		}
		if keys = without(keys, held); len(keys) == 0 {
			break
		}
		locked, err := t.countChildren(ctx, tx, c, keys, true, lay)
		if err != nil {
			return nil, fmt.Errorf("child table %s: lock the batch's rows: %w", c.spec.Table, err)
		}
		all, err := t.countChildren(ctx, tx, c, keys, false, lay)
		if err != nil {
			return nil, fmt.Errorf("child table %s: count the batch's rows: %w", c.spec.Table, err)
		}
		for k, n := range all {
			if locked[k] < n {
				held[k] = true
			}
		}
	}
	return held, nil
}

// countChildren counts, per key of the swept table (KeyText), the rows of child table c
// that belong to keys, walking down through c's ancestors; with lock, only the rows it
// could lock (FOR UPDATE SKIP LOCKED: the aggregate reads the locking subquery through,
// so every row counted is locked). The keys come back from the swept table itself, so
// they read as the batch's keys do whatever types the foreign keys have.
func (t *Table) countChildren(ctx context.Context, tx bun.IDB, c *childNode, keys [][]any, lock bool, lay *tableLayout) (map[string]int, error) {
	const root = "retention_root"
	alias := func(i int) string { return fmt.Sprintf("retention_c%d", i) }
	sub := tx.NewSelect().TableExpr("? AS ?", ident(c.spec.Table), bun.Ident(alias(0))).ColumnExpr("?", columnList(root, t.key))
	i := 0
	for n := c; n.parent != nil; n = n.parent {
		sub = sub.Join("JOIN ? AS ? ON ?", ident(n.parent.spec.Table), bun.Ident(alias(i+1)), joinOn(alias(i), n.foreignKey(), alias(i+1), n.parent.key()))
		i++
	}
	top := c
	for top.parent != nil {
		top = top.parent
	}
	sub = sub.Join("JOIN ? AS ? ON ?", ident(t.spec.Table), bun.Ident(root), joinOn(alias(i), top.foreignKey(), root, t.key)).
		Where("? IN (?)", tuple(root, t.key), keyList(keys))
	if lock {
		sub = t.drv.LockChildRows(sub, alias(0))
	}
	rows, err := tx.NewSelect().TableExpr("(?) AS retention_children", sub).
		ColumnExpr("?, count(*)", columnList("", t.key)).GroupExpr("?", columnList("", t.key)).Rows(ctx)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	counts := map[string]int{}
	for rows.Next() {
		key := make([]any, len(t.key))
		var n int
		dst := make([]any, 0, len(key)+1)
		for j := range key {
			dst = append(dst, &key[j])
		}
		if err := rows.Scan(append(dst, &n)...); err != nil {
			return nil, err
		}
		lay.fixKey(key)
		counts[KeyText(key)] = n
	}
	return counts, rows.Err()
}

// without returns keys less those in out (KeyText); keys itself when out is empty.
func without(keys [][]any, out map[string]bool) [][]any {
	if len(out) == 0 {
		return keys
	}
	kept := make([][]any, 0, len(keys))
	for _, k := range keys {
		if !out[KeyText(k)] {
			kept = append(kept, k)
		}
	}
	return kept
}
