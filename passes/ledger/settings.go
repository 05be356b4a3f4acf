package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// The settings table holds what operators changed at run time, one value per key, for
// every node sharing the ledger to read: the metadata cleanup's retention
// (SettingCleanupRetention) and each pass's live pace and pause (keys under
// PassSettingPrefix, such as pass.audit-log.batch_size). Values are stored as text;
// whoever reads a key parses and validates it, so a hand-edited row is refused there
// rather than trusted.

// PassSettingPrefix starts the key of every per-pass setting: pass.NAME.FIELD.
const PassSettingPrefix = "pass."

// Setting is one stored setting.
type Setting struct {
	Key     string
	Value   string
	Updated time.Time
}

// SetSetting stores value under key, replacing what was there.
func (l *Ledger) SetSetting(ctx context.Context, key, value string, at time.Time) error {
	if err := l.storeSetting(ctx, key, value, at); err != nil {
		return fmt.Errorf("ledger: store setting %s: %w", key, err)
	}
	return nil
}

// settingRow is a row of the settings table, as storeSetting writes it.
type settingRow struct {
	Key         string    `bun:"key"`
	Value       string    `bun:"value"`
	UpdatedTime time.Time `bun:"updated_time"`
}

// storeSetting upserts key's value, in the driver's spelling of an upsert.
func (l *Ledger) storeSetting(ctx context.Context, key, value string, at time.Time) error {
	q := l.db.NewInsert().Model(&settingRow{Key: key, Value: value, UpdatedTime: at.UTC()}).ModelTableExpr(l.table("settings"))
	_, err := l.driver.LedgerUpsert(q, []string{"key"}, "value", "updated_time").Exec(ctx)
	return err
}

// keyColumn is the settings table's key column as the driver spells it: key is a
// reserved word on MySQL.
func (l *Ledger) keyColumn() bun.Safe { return bun.Safe(l.driver.LedgerIdent("key")) }

// UnsetSetting removes key, so whoever reads it falls back to the configuration file's
// value; it reports whether there was one.
func (l *Ledger) UnsetSetting(ctx context.Context, key string) (bool, error) {
	res, err := l.db.NewDelete().TableExpr("?", bun.Ident(l.table("settings"))).Where("? = ?", l.keyColumn(), key).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("ledger: remove setting %s: %w", key, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Settings returns the stored settings whose key starts with prefix ("" for all),
// ordered by key.
func (l *Ledger) Settings(ctx context.Context, prefix string) ([]Setting, error) {
	var rows []settingRow
	q := l.db.NewSelect().TableExpr("?", bun.Ident(l.table("settings"))).Column("key", "value", "updated_time").OrderExpr("?", l.keyColumn())
	if prefix != "" {
		// The prefix is compared as text, not as a LIKE pattern: a pass name may hold '_'.
		q = q.Where("substr(?, 1, ?) = ?", l.keyColumn(), len(prefix), prefix)
	}
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("ledger: read settings: %w", err)
	}
	out := make([]Setting, 0, len(rows))
	for _, r := range rows {
		out = append(out, Setting{Key: r.Key, Value: r.Value, Updated: r.UpdatedTime})
	}
	return out, nil
}

// PassSettingKey is the key of a pass's setting: pass.NAME.FIELD.
func PassSettingKey(pass, field string) string { return PassSettingPrefix + pass + "." + field }

// SplitPassSettingKey splits pass.NAME.FIELD into the pass's name and the field; a pass
// name may itself hold dots, so the field is what follows the last one.
func SplitPassSettingKey(key string) (pass, field string, ok bool) {
	rest, ok := strings.CutPrefix(key, PassSettingPrefix)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 || i == len(rest)-1 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}
