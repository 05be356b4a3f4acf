package passtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
)

// Classified is one real error a database returned, and the classes it must fall in:
// schema drift (the pass waits for the schema to be fixed) and transient (the batch is
// tried again later). An error that is neither stops the pass.
type Classified struct {
	// Name names the case.
	Name string
	// Err makes the database fail and returns its error.
	Err func(t *testing.T) error
	// Drift and Transient are what passes.IsSchemaDrift and passes.IsTransient must say.
	Drift, Transient bool
}

// CheckClassified runs each case as a subtest: the error, and the error wrapped as a
// batch wraps it, must be classified as the case says.
func CheckClassified(t *testing.T, cases []Classified) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			err := tc.Err(t)
			if err == nil {
				t.Fatal("the statement did not fail")
			}
			if got := passes.IsSchemaDrift(err); got != tc.Drift {
				t.Errorf("IsSchemaDrift(%v) = %v, want %v", err, got, tc.Drift)
			}
			if got := passes.IsTransient(err); got != tc.Transient {
				t.Errorf("IsTransient(%v) = %v, want %v", err, got, tc.Transient)
			}
			wrapped := fmt.Errorf("pass %q: delete batch: %w", "p", err)
			if passes.IsSchemaDrift(wrapped) != tc.Drift || passes.IsTransient(wrapped) != tc.Transient {
				t.Errorf("the wrapped %v is classified differently", wrapped)
			}
		})
	}
}

// Exec is a Classified case's Err that runs one statement on db.
func Exec(db bun.IDB, query string) func(t *testing.T) error {
	return func(*testing.T) error {
		_, err := db.ExecContext(context.Background(), query)
		return err
	}
}
