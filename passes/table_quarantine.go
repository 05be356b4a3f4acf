package passes

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/core"
)

// Quarantine remembers, across sweeps, the rows of a table pass whose delete fails on
// its own (a restricting reference from a table the pass does not list, a trigger that
// raises), so a sweep does not pay for them in full every time and an operator hears of
// each once. The ledger implements it; a table pass without one skips such rows every
// sweep, as before. Keys are KeyText strings.
type Quarantine interface {
	// Quarantined returns the pass's quarantined rows, each with whether its next
	// attempt is due. A table pass calls it once, at the start of each sweep.
	Quarantined(ctx context.Context, pass string) ([]QuarantinedKey, error)
	// Hold records that deleting a row failed with row (again, or for the first time),
	// and schedules its next attempt; entered is true when the row was not quarantined.
	Hold(ctx context.Context, pass string, row *RowError) (entered bool, err error)
	// Release takes the rows with keys out of quarantine: they were deleted, or are not
	// waiting to be any more.
	Release(ctx context.Context, pass string, keys []string) error
}

// QuarantinedKey is one quarantined row as a table pass sees it.
type QuarantinedKey struct {
	// Key is the row's key as KeyText writes it.
	Key string
	// Due is true when the row's next attempt has come: the sweep tries it again.
	Due bool
}

// RowError is why deleting one row failed on its own, with what the database named of
// the cause. A table pass reports it with ReportSkipped and hands it to its Quarantine.
type RowError struct {
	// Key is the row's key, one value per key column.
	Key []any
	// Constraint is the constraint the delete violated, when the database names it
	// (PostgreSQL does; SQLite does not).
	Constraint string
	// Table is the table that holds the row, for a foreign key the referencing one,
	// when the database names it.
	Table string
	// Err is the database's error.
	Err error
}

// NewRowError wraps err, the failure to delete the row with key, with the constraint
// and the referencing table the database names in its error (PostgreSQL does, SQLite
// does not): the driver that owns err reads them.
func NewRowError(key []any, err error) *RowError {
	e := &RowError{Key: key, Err: err}
	for _, d := range Drivers() {
		if c, tbl := d.Culprit(err); c != "" || tbl != "" {
			e.Constraint, e.Table = c, tbl
			break
		}
	}
	return e
}

// Error names the referencing table and the constraint before the database's message,
// so the one log line about the row says who holds it.
func (e *RowError) Error() string {
	var held []string
	if e.Table != "" {
		held = append(held, fmt.Sprintf("held by table %q", e.Table))
	}
	if e.Constraint != "" {
		held = append(held, fmt.Sprintf("constraint %q", e.Constraint))
	}
	if len(held) == 0 {
		return e.Err.Error()
	}
	return strings.Join(held, ", ") + ": " + e.Err.Error()
}

// Unwrap returns the database's error.
func (e *RowError) Unwrap() error { return e.Err }

// KeyText writes a key as canonical JSON, one array element per key column ([42],
// ["eu",7]): the form the quarantine stores and `quarantine release` takes. Bytes are
// base64; times are written in UTC as bun writes them into a statement
// ("2006-01-02 15:04:05.999999+00:00"), so the text read back compares equal to the
// column on both databases (SQLite keeps such a key as that text).
func KeyText(key []any) string {
	vals := slices.Clone(key)
	for i, v := range vals {
		if tm, ok := v.(time.Time); ok {
			vals[i] = tm.UTC().Format(keyTimeLayout)
		}
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return fmt.Sprint(key)
	}
	return string(b)
}

// keyTimeLayout is how bun writes a time into a statement.
const keyTimeLayout = "2006-01-02 15:04:05.999999-07:00"

// quarantinable reports whether err, the failure of one row's delete, is the row's own
// (an integrity constraint, a trigger that raised) rather than a deadlock or
// serialization failure that the next try may not meet.
func quarantinable(err error) bool { return hasClass(err, core.ErrRowSpecific) }

// decodeKey reads KeyText back into the values a statement compares the key columns
// with, false when text is not a key of width columns.
func (l *tableLayout) decodeKey(text string, width int) ([]any, bool) {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var raw []any
	if err := dec.Decode(&raw); err != nil || len(raw) != width {
		return nil, false
	}
	for i, v := range raw {
		switch v := v.(type) {
		case json.Number:
			if n, err := v.Int64(); err == nil {
				raw[i] = n
			} else if f, err := v.Float64(); err == nil {
				raw[i] = f
			} else {
				return nil, false
			}
		case string:
			if i < len(l.keyTypes) && l.keyTypes[i] == "bytea" {
				b, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					return nil, false
				}
				raw[i] = b
			}
		case bool:
		default:
			return nil, false
		}
	}
	return raw, true
}

// loadQuarantine, at the start of a sweep, reads the pass's quarantined rows: those not
// yet due are left out of every select of the sweep (up to maxExcluded of them; a
// batch that meets one of the others sets it aside, see bisectNext), those due are
// tried again, and those due that are gone or no longer eligible leave quarantine now.
func (s *tableSweep) loadQuarantine(ctx context.Context, db bun.IDB, cut cutoff) error {
	s.quarantineRead = true
	q := s.t.quarantine
	if q == nil {
		return nil
	}
	entries, err := q.Quarantined(ctx, s.t.name)
	if err != nil {
		return fmt.Errorf("pass %q: quarantine: %w", s.t.name, err)
	}
	s.due = make(map[string]bool)
	var due [][]any
	for _, e := range entries {
		key, ok := s.layout.decodeKey(e.Key, len(s.t.key))
		switch {
		case e.Due:
			s.due[e.Key] = true
			if ok {
				due = append(due, key)
			}
		case ok && len(s.held) < maxExcluded:
			s.held = append(s.held, key)
		default:
			if s.setAside == nil {
				s.setAside = make(map[string]bool)
			}
			s.setAside[e.Key] = true
		}
	}
	ReportLeftOut(ctx, len(s.held), ErrQuarantined)
	return s.releaseGone(ctx, db, cut, due)
}

// releaseGone releases the due keys whose rows are gone or no longer eligible: nothing
// holds them any more.
func (s *tableSweep) releaseGone(ctx context.Context, db bun.IDB, cut cutoff, due [][]any) error {
	if len(due) == 0 || len(due) > maxExcluded {
		return nil
	}
	t := s.t
	rows, err := t.eligible(db.NewSelect().TableExpr("?", ident(t.spec.Table)).ColumnExpr("?, ?", columnList(t.spec.Table, t.key), t.col(t.spec.Timestamp)), cut).
		Where("? IN (?)", tuple(t.spec.Table, t.key), keyList(due)).Rows(ctx)
	if err != nil {
		return fmt.Errorf("pass %q: quarantine: %w", t.name, err)
	}
	left, err := scanCandidates(rows, s.layout)
	if err != nil {
		return fmt.Errorf("pass %q: quarantine: %w", t.name, err)
	}
	present := make(map[string]bool, len(left))
	for _, c := range left {
		present[KeyText(c.key)] = true
	}
	var gone []string
	for _, k := range due {
		if text := KeyText(k); !present[text] {
			gone = append(gone, text)
		}
	}
	return s.release(ctx, gone)
}

// deletedKeys releases the quarantined rows among keys, which the sweep just deleted.
// A release that fails leaves an entry for a deleted row, which the next sweep's
// releaseGone removes, so it does not fail the batch whose deletes are committed.
func (s *tableSweep) deletedKeys(ctx context.Context, keys [][]any) {
	if len(s.due) == 0 {
		return
	}
	var gone []string
	for _, k := range keys {
		if text := KeyText(k); s.due[text] {
			gone = append(gone, text)
			delete(s.due, text)
		}
	}
	_ = s.release(ctx, gone)
}

func (s *tableSweep) release(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if err := s.t.quarantine.Release(ctx, s.t.name, keys); err != nil {
		return fmt.Errorf("pass %q: quarantine: %w", s.t.name, err)
	}
	return nil
}

// rowFailed handles a row whose delete failed on its own: without a quarantine, or for
// a failure the next try may not meet, it is reported skipped; otherwise it is held in
// quarantine (see hold).
func (s *tableSweep) rowFailed(ctx context.Context, key []any, err error) {
	t := s.t
	rerr := NewRowError(key, err)
	if t.quarantine == nil || !quarantinable(err) {
		ReportSkipped(ctx, t.reportedKey(key), rerr)
		return
	}
	s.hold(ctx, rerr)
}

// hold keeps the row rerr names in quarantine and reports it: skipped when it enters
// (the sweep's summary counts it; the node logs the row at debug), held after, and
// skipped with both errors when the quarantine fails.
func (s *tableSweep) hold(ctx context.Context, rerr *RowError) {
	t, key := s.t, rerr.Key
	entered, qerr := t.quarantine.Hold(ctx, t.name, rerr)
	switch {
	case qerr != nil:
		ReportSkipped(ctx, t.reportedKey(key), errors.Join(rerr, fmt.Errorf("quarantine: %w", qerr)))
	case entered:
		ReportSkipped(ctx, t.reportedKey(key), fmt.Errorf("entered quarantine: %w", rerr))
	default:
		ReportHeld(ctx, t.reportedKey(key), rerr)
	}
}

// excluded is what every select of the sweep leaves out: the quarantined rows not yet
// due, and after a rewind the rows bisection skipped.
func (s *tableSweep) excluded(skipped [][]any) [][]any {
	if len(s.held) == 0 {
		return skipped
	}
	return slices.Concat(s.held, skipped)
}

// quarantinedKeys returns the keys of every row in the pass's quarantine, due or not, up
// to maxExcluded of them; none without a quarantine.
func (t *Table) quarantinedKeys(ctx context.Context, lay *tableLayout) ([][]any, error) {
	if t.quarantine == nil {
		return nil, nil
	}
	entries, err := t.quarantine.Quarantined(ctx, t.name)
	if err != nil {
		return nil, fmt.Errorf("quarantine: %w", err)
	}
	var keys [][]any
	for _, e := range entries {
		if key, ok := lay.decodeKey(e.Key, len(t.key)); ok && len(keys) < maxExcluded {
			keys = append(keys, key)
		}
	}
	return keys, nil
}
