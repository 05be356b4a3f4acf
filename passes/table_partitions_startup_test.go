package passes_test

import (
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// The startup checks of partitions against PostgreSQL's catalog are tested in
// passes/driver/postgres (partitions_startup_test.go); SQLite's and MySQL's refusals in
// their drivers' packages.

func partitionedSpec() passes.TableSpec {
	return passes.TableSpec{Table: "events", KeyColumns: []string{"at", "id"}, Timestamp: "at", Partitions: &passes.PartitionSpec{}}
}

// A filter, a where or a block child is refused before the database is asked: a
// retired partition would take the rows they keep.
func TestPartitionsRefuseKeepConditions(t *testing.T) {
	tests := map[string]func(*passes.TableSpec){
		"filter": func(s *passes.TableSpec) { s.Filter = &passes.Filter{Column: "kind", In: []any{"done"}} },
		"where":  func(s *passes.TableSpec) { s.Where = "kind <> 'x'" },
		"block child": func(s *passes.TableSpec) {
			s.Children = []passes.ChildSpec{{Table: "holds", ForeignKeyColumns: []string{"a", "b"}, OnDelete: passes.OnDeleteBlock}}
		},
	}
	for name, mutate := range tests {
		spec := partitionedSpec()
		mutate(&spec)
		err := spec.Validate("events")
		if err == nil || !strings.Contains(err.Error(), "partitions cannot be used with "+strings.Replace(name, "block", "a block", 1)) ||
			!strings.Contains(err.Error(), "a retired partition would take rows the pass must keep") {
			t.Errorf("%s: %v, want the partitions refusal", name, err)
		}
	}
}
