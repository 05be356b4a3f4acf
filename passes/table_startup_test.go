package passes_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

func TestTableStartupValidation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, passes.TimestampNative)
		ctx := context.Background()

		res := f.table(f.spec()).ValidateStartup(ctx)
		if res.Failed() {
			t.Fatalf("a good declaration failed: %s", res.Message())
		}
		warnings := strings.Join(res.Warnings(), "\n")
		if strings.Contains(warnings, "audit_log.occurred_at") || !strings.Contains(warnings, "audit_attachment.audit_log_id") {
			t.Fatalf("warnings = %s; want none for the indexed timestamp, one for the unindexed child key", warnings)
		}

		failing := []struct {
			name   string
			mutate func(*passes.TableSpec)
			want   string
		}{
			{"missing table", func(s *passes.TableSpec) { s.Table = f.p + "nope" }, f.p + "nope"},
			{"missing column", func(s *passes.TableSpec) { s.Timestamp = "created_at" }, "created_at"},
			{"missing filter column", func(s *passes.TableSpec) { s.Filter.Column = "status" }, "status"},
			{"missing child table", func(s *passes.TableSpec) { s.Children[1].Table = f.p + "reviews" }, f.p + "reviews"},
			{"non-unique key", func(s *passes.TableSpec) { s.Key = "state" }, "not unique"},
			{"set_null on a NOT NULL foreign key", func(s *passes.TableSpec) { s.Children[2].OnDelete = passes.OnDeleteSetNull },
				f.p + "legal_hold.audit_log_id is NOT NULL"},
			{"set_null on a nested NOT NULL foreign key", func(s *passes.TableSpec) {
				s.Children[0].Children[0].OnDelete = passes.OnDeleteSetNull
			}, f.p + "attachment_blob.attachment_id is NOT NULL"},
		}
		for _, tc := range failing {
			spec := f.spec()
			tc.mutate(&spec)
			res := f.table(spec).ValidateStartup(ctx)
			if !res.Failed() || !strings.Contains(res.Message(), `pass "audit-log"`) || !strings.Contains(res.Message(), tc.want) {
				t.Errorf("%s: result %v %q, want a failure naming the pass and %q", tc.name, res.Failed(), res.Message(), tc.want)
			}
		}

		f.exec("DROP INDEX {p}audit_log_ts")
		res = f.table(f.spec()).ValidateStartup(ctx)
		if res.Failed() || !strings.Contains(strings.Join(res.Warnings(), "\n"), "audit_log.occurred_at") {
			t.Fatalf("without the timestamp index: failed %v, warnings %v", res.Failed(), res.Warnings())
		}
	})
}
