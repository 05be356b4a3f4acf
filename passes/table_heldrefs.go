package passes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrReferenced is the cause of a row a failed batch set aside because a table the pass
// does not list references it (found through the foreign key the catalog names, not by
// bisection).
var ErrReferenced = errors.New("still referenced")

// directReferences returns, read once per sweep, the unlisted restricting foreign keys
// into the swept table whose referenced columns are its key: those a batch can check
// for itself. A reference to a child, or to other columns, is left to bisection.
func (s *tableSweep) directReferences(ctx context.Context) []reference {
	if s.refsRead {
		return s.refs
	}
	s.refsRead = true
	t := s.t
	refs, err := t.referencesTo(ctx, t.spec.Table)
	if err != nil {
		return nil // bisection finds the rows all the same
	}
	for _, r := range refs {
		r.Parent = t.spec.Table
		if !t.listed(r) && slices.Equal(r.RefColumns, t.key) {
			s.refs = append(s.refs, r)
		}
	}
	return s.refs
}

// setAsideReferenced takes out of keys those a row of an unlisted table references,
// holds each (in quarantine, or reported skipped) with a *RowError naming the table and
// the constraint, and returns the rest. Without such references, or when a check
// fails, keys come back whole and bisection finds the held rows instead.
func (s *tableSweep) setAsideReferenced(ctx context.Context, keys [][]any, b *bisection) [][]any {
	refs := s.directReferences(ctx)
	if len(refs) == 0 || len(keys) == 0 {
		return keys
	}
	held := map[string]*RowError{}
	for _, r := range refs {
		found, err := s.referencedAmong(ctx, r, keys)
		if err != nil {
			return keys
		}
		for _, k := range found {
			text := KeyText(k)
			if held[text] == nil {
				held[text] = &RowError{Constraint: r.Constraint, Table: r.Table,
					Err: fmt.Errorf("%w by %s (%s)", ErrReferenced, r.Table, strings.Join(r.Columns, ", "))}
			}
		}
	}
	rest := keys[:0:0]
	for _, k := range keys {
		rerr := held[KeyText(k)]
		if rerr == nil {
			rest = append(rest, k)
			continue
		}
		rerr.Key = k
		b.skipped = append(b.skipped, k)
		if s.t.quarantine == nil {
			ReportSkipped(ctx, s.t.reportedKey(k), rerr)
		} else {
			s.hold(ctx, rerr)
		}
	}
	return rest
}

// referencedAmong returns the keys, of keys, that a row of r's table references.
func (s *tableSweep) referencedAmong(ctx context.Context, r reference, keys [][]any) ([][]any, error) {
	t := s.t
	rows, err := t.db.NewSelect().TableExpr("?", ident(r.Table)).ColumnExpr("?", columnList("", r.Columns)).Distinct().
		Where("? IN (?)", tuple("", r.Columns), keyList(keys)).Rows(ctx)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		key := make([]any, len(r.Columns))
		dst := make([]any, len(key))
		for i := range key {
			dst[i] = &key[i]
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		s.layout.fixKey(key)
		out = append(out, key)
	}
	return out, rows.Err()
}
