package cluster_test

import (
	"testing"

	"github.com/retentionkit/retention/node/cluster"
	"github.com/retentionkit/retention/passes"
)

func TestHelperNames(t *testing.T) {
	tests := []struct {
		id   string
		base string
		ok   bool
	}{
		{"events#1", "events", true},
		{"a#b#12", "a#b", true},
		{"events", "", false},
		{"events#0", "", false},
		{"events#01", "", false},
		{"events#+1", "", false},
		{"events#x", "", false},
		{"#1", "", false},
	}
	for _, tt := range tests {
		base, ok := cluster.HelperOf(tt.id)
		if base != tt.base || ok != tt.ok {
			t.Errorf("HelperOf(%q) = %q, %v; want %q, %v", tt.id, base, ok, tt.base, tt.ok)
		}
	}
	if got := cluster.HelperName("events", 2); got != "events#2" {
		t.Fatalf("HelperName = %q", got)
	}
}

func TestHelpersRegistrations(t *testing.T) {
	reg := passes.Registration{Name: "events", Target: "events_table", Options: passes.DefaultOptions()}
	reg.Options.MaxStartupStagger = 1000
	var wrapped []string
	hs := cluster.Helpers(reg, 2, func(id string, f passes.Factory) passes.Factory { wrapped = append(wrapped, id); return f })
	if len(hs) != 2 || hs[0].Name != "events#1" || hs[1].Name != "events#2" {
		t.Fatalf("helpers = %+v", hs)
	}
	for _, h := range hs {
		if h.Target != h.Name || h.Options.MaxStartupStagger != 0 {
			t.Fatalf("helper %s: target %q stagger %v; want its own target and no stagger", h.Name, h.Target, h.Options.MaxStartupStagger)
		}
	}
	if len(wrapped) != 2 || wrapped[1] != "events#2" {
		t.Fatalf("wrap saw %v, want each helper identity", wrapped)
	}
}
