package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/ledger"
)

func TestSettingsSetListUnset(t *testing.T) {
	eachDB(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		l := migrated(t, db)
		at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		for _, s := range [][2]string{{"pass.audit_log.batch_size", "100"}, {"pass.a.b.paused", "true"}, {"passx.other", "1"}} {
			if err := l.SetSetting(ctx, s[0], s[1], at); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.SetSetting(ctx, "pass.audit_log.batch_size", "200", at.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		got, err := l.Settings(ctx, ledger.PassSettingPrefix)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Key != "pass.a.b.paused" || got[1].Value != "200" || !got[1].Updated.Equal(at.Add(time.Minute)) {
			t.Fatalf("settings %+v: want the two pass. keys, the second replaced", got)
		}
		if ok, err := l.UnsetSetting(ctx, "pass.a.b.paused"); err != nil || !ok {
			t.Fatalf("unset = %v, %v", ok, err)
		}
		if ok, err := l.UnsetSetting(ctx, "pass.a.b.paused"); err != nil || ok {
			t.Fatalf("second unset = %v, %v; want nothing there", ok, err)
		}
		if all, _ := l.Settings(ctx, ""); len(all) != 2 {
			t.Fatalf("all settings %+v", all)
		}
	})
}

func TestSplitPassSettingKey(t *testing.T) {
	cases := []struct {
		key, pass, field string
		ok               bool
	}{
		{"pass.audit-log.batch_size", "audit-log", "batch_size", true},
		{"pass.a.b.paused", "a.b", "paused", true},
		{"pass.batch_size", "", "", false},
		{"pass.x.", "", "", false},
		{"metadata_cleanup.retention_period", "", "", false},
	}
	for _, c := range cases {
		pass, field, ok := ledger.SplitPassSettingKey(c.key)
		if pass != c.pass || field != c.field || ok != c.ok {
			t.Errorf("SplitPassSettingKey(%q) = %q, %q, %v", c.key, pass, field, ok)
		}
		if ok && ledger.PassSettingKey(pass, field) != c.key {
			t.Errorf("PassSettingKey(%q, %q) does not give back %q", pass, field, c.key)
		}
	}
}
