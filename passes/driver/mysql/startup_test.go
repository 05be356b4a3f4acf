package mysql_test

import (
	"context"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// TestStartupRefusesAnUnindexedTimestamp: on MySQL a timestamp no index can serve the
// cutoff's range with fails startup, naming the pass and the timestamp field (PostgreSQL
// only warns); an index on the timestamp, or on the filter's column then the timestamp
// with that filter, is accepted.
func TestStartupRefusesAnUnindexedTimestamp(t *testing.T) {
	db := openMySQL(t, "")
	ctx := context.Background()
	for _, stmt := range []string{
		"CREATE TABLE bare (id BIGINT PRIMARY KEY, tenant INT NOT NULL, at DATETIME(6) NOT NULL)",
		"CREATE TABLE led (id BIGINT PRIMARY KEY, tenant INT NOT NULL, at DATETIME(6) NOT NULL, KEY led_at (at, id))",
		"CREATE TABLE tenanted (id BIGINT PRIMARY KEY, tenant INT NOT NULL, at DATETIME(6) NOT NULL, KEY by_tenant (tenant, at))",
		"CREATE TABLE idfirst (id BIGINT PRIMARY KEY, tenant INT NOT NULL, at DATETIME(6) NOT NULL, KEY at_last (id, at))",
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	tenant := &passes.Filter{Column: "tenant", In: []any{7}}
	tests := []struct {
		name    string
		table   string
		filter  *passes.Filter
		refused bool
	}{
		{"no index at all", "bare", nil, true},
		{"no index, with a filter", "bare", tenant, true},
		{"an index led by the timestamp", "led", nil, false},
		{"the filter's column then the timestamp, with that filter", "tenanted", tenant, false},
		{"the filter's column then the timestamp, without a filter", "tenanted", nil, true},
		{"the timestamp second after another column", "idfirst", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := passes.NewTable(db.DB, "sweep-"+tc.table, passes.TableSpec{Table: tc.table, Key: "id", Timestamp: "at", Filter: tc.filter})
			if err != nil {
				t.Fatal(err)
			}
			res := tbl.ValidateStartup(ctx)
			if !tc.refused {
				if res.Failed() {
					t.Fatalf("refused: %s", res.Message())
				}
				return
			}
			msg := res.Message()
			if !res.Failed() {
				t.Fatalf("accepted (%s); want the unindexed timestamp refused", msg)
			}
			for _, want := range []string{`pass "sweep-` + tc.table + `"`, "timestamp: no index of " + tc.table + " starts with at", "create an index on (at)"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not say %q", msg, want)
				}
			}
		})
	}
}
