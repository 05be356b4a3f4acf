package passes

import (
	"strings"
	"testing"
	"time"
)

// A report's log line names its estimate as one, and a partition never analyzed
// (reltuples -1) as unknown rather than as "-1 rows".
func TestPartitionReportStringNamesTheEstimate(t *testing.T) {
	t.Parallel()
	cutoff := time.Date(2026, 11, 5, 1, 0, 0, 0, time.UTC)
	tests := []struct {
		rows       float64
		want, miss string
	}{
		{1234, "estimated rows 1234 (an estimate, not a count)", "unknown"},
		{0, "estimated rows 0 (an estimate, not a count)", "unknown"},
		{-1, "estimated rows unknown (the partition was never analyzed)", "rows -1"},
	}
	for _, tt := range tests {
		r := PartitionReport{Partition: "public.events_d1", Lower: "'2026-10-01'", Upper: "'2026-10-02'", Outcome: PartitionRetired,
			EstimatedRows: tt.rows, Mode: PartitionDrop, Cutoff: cutoff}
		got := r.String()
		if !strings.Contains(got, tt.want) || strings.Contains(got, tt.miss) {
			t.Errorf("rows %v: %q, want %q and no %q", tt.rows, got, tt.want, tt.miss)
		}
	}
}
