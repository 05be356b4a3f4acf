package passes_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/retentionkit/retention/passes"
)

// The classification of each database's real errors is tested in its driver's package
// (TestErrorsAreClassified in passes/driver/postgres and passes/driver/sqlite).

func TestASchemaDriftErrorOfAGoPassIsDrift(t *testing.T) {
	err := fmt.Errorf("sweep: %w", &passes.SchemaDriftError{Err: errors.New("the export bucket is gone")})
	if !passes.IsSchemaDrift(err) || passes.IsTransient(err) {
		t.Fatalf("%v: drift %v, transient %v", err, passes.IsSchemaDrift(err), passes.IsTransient(err))
	}
}
