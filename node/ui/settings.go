package ui

import (
	"time"

	"github.com/retentionkit/retention/passes/ledger"
)

// settingsView is the settings page: the metadata cleanup's default retention, where it
// comes from, and every name's retention (read-only).
type settingsView struct {
	CleanupOff  bool
	LedgerOff   bool
	Key         string
	File        time.Duration
	Override    time.Duration
	HasOverride bool
	Updated     time.Time
	Effective   time.Duration
	Source      string
	// FileSource is where the value without the override comes from: "file" or
	// "default".
	FileSource string
	Interval   time.Duration
	BatchSize  int
	Groups     []ledger.Group
	// Live are the passes' runtime overrides (pass.NAME.FIELD: pace, pause), which the
	// page lists with a button to clear each.
	Live     []ledger.Setting
	Problems []string
}

func (v settingsView) problems() []string { return v.Problems }

func (h *Handler) settingsPage(r *request) (string, any) {
	v := settingsView{Key: ledger.SettingCleanupRetention, CleanupOff: h.cfg.Cleanup == nil, LedgerOff: h.cfg.Ledger == nil}
	if v.LedgerOff {
		return "settings", v
	}
	var pr problems
	live, err := h.cfg.Ledger.Settings(r.ctx, ledger.PassSettingPrefix)
	pr.add("live settings", err, h.cfg.Redact)
	v.Live = live
	if v.CleanupOff {
		v.Problems = pr.list
		return "settings", v
	}
	p := h.cfg.Cleanup
	v.File, v.Interval, v.BatchSize, v.Effective, v.Source = p.Retention, p.Interval, p.BatchSize, p.Retention, "file"
	if h.cfg.CleanupDefaulted {
		v.Source = "default"
	}
	v.FileSource = v.Source
	d, updated, ok, err := h.cfg.Ledger.CleanupRetentionSetting(r.ctx)
	pr.add("settings", err, h.cfg.Redact)
	if ok && err == nil {
		v.Override, v.HasOverride, v.Updated, v.Effective, v.Source = d, true, updated, d, "override"
	}
	for _, g := range p.Groups {
		if g.Default {
			g.Retention = v.Effective
		}
		v.Groups = append(v.Groups, g)
	}
	v.Problems = pr.list
	return "settings", v
}
