package validation_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/core/validation"
)

func TestResult(t *testing.T) {
	t.Parallel()
	var r validation.Result
	if !r.Valid() || r.Err() != nil {
		t.Fatal("the zero Result is not valid")
	}
	r.Add("batch_size", "must be at least 1").Add("batch_size", "must be at most 10000").Add("name", "is empty")
	var other validation.Result
	other.Add("table", "is not an identifier")
	r.Merge(other)
	err := r.Err()
	var ve *core.ValidationError
	if !errors.As(err, &ve) || !core.IsDeterministic(err) {
		t.Fatalf("Err() = %v, want a *core.ValidationError", err)
	}
	if want := []string{"must be at least 1", "must be at most 10000"}; !slices.Equal(ve.Fields["batch_size"], want) {
		t.Fatalf("batch_size messages = %v", ve.Fields["batch_size"])
	}
	if len(ve.Fields) != 3 {
		t.Fatalf("fields = %v", ve.Fields)
	}
	fields := r.Fields()
	fields["name"][0] = "changed"
	if r.Fields()["name"][0] != "is empty" {
		t.Fatal("Fields shares the result's storage")
	}
}

type startupCheck validation.StartupResult

func (c startupCheck) ValidateStartup(context.Context) validation.StartupResult {
	return validation.StartupResult(c)
}

func TestRunStartup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		checks       []validation.StartupResult
		wantReasons  []string
		wantWarnings []string
	}{
		{"no validators", nil, nil, nil},
		{"successes log their warnings", []validation.StartupResult{
			validation.Success("ledger ok"),
			validation.Success("passes ok", "audit_log.occurred_at has no index", "sessions has no rows"),
		}, nil, []string{"audit_log.occurred_at has no index", "sessions has no rows"}},
		{"every failure is named, and successes still run", []validation.StartupResult{
			validation.Failure("table audit_log does not exist"),
			validation.Success("ok", "a warning"),
			validation.Failure("column sessions.expires_at does not exist"),
		}, []string{"table audit_log does not exist", "column sessions.expires_at does not exist"}, []string{"a warning"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var validators []validation.StartupValidator
			for _, c := range tc.checks {
				validators = append(validators, startupCheck(c))
			}
			var warnings []string
			err := validation.RunStartup(context.Background(), validators, func(w string) { warnings = append(warnings, w) })
			if !slices.Equal(warnings, tc.wantWarnings) {
				t.Errorf("warnings = %v, want %v", warnings, tc.wantWarnings)
			}
			if tc.wantReasons == nil {
				if err != nil {
					t.Fatalf("RunStartup = %v", err)
				}
				return
			}
			var failed *validation.StartupFailedError
			if !errors.As(err, &failed) || !slices.Equal(failed.Reasons, tc.wantReasons) {
				t.Fatalf("RunStartup = %v, want reasons %v", err, tc.wantReasons)
			}
			if !core.IsDeterministic(err) {
				t.Fatal("a startup failure is not deterministic")
			}
		})
	}
}

func TestStartupResultAccessors(t *testing.T) {
	t.Parallel()
	var zero validation.StartupResult
	if zero.Failed() {
		t.Fatal("the zero StartupResult fails")
	}
	s := validation.Success("ok", "w")
	if s.Failed() || s.Message() != "ok" || !slices.Equal(s.Warnings(), []string{"w"}) {
		t.Fatalf("Success = %+v", s)
	}
	f := validation.Failure("bad")
	if !f.Failed() || f.Message() != "bad" || len(f.Warnings()) != 0 {
		t.Fatalf("Failure = %+v", f)
	}
}

func TestRunStartupTellsUnavailableFromFailed(t *testing.T) {
	t.Parallel()
	down := validation.Unavailable("pass \"a\": connection refused")
	if !down.Failed() || !down.Unavailable() || validation.Failure("x").Unavailable() {
		t.Fatalf("Unavailable = %+v", down)
	}
	run := func(checks ...validation.StartupResult) error {
		var validators []validation.StartupValidator
		for _, c := range checks {
			validators = append(validators, startupCheck(c))
		}
		return validation.RunStartup(context.Background(), validators, nil)
	}
	err := run(down, validation.Success("ok"))
	var unavailable *validation.StartupUnavailableError
	if !errors.As(err, &unavailable) || core.IsDeterministic(err) || !slices.Equal(unavailable.Reasons, []string{down.Message()}) {
		t.Fatalf("only unavailable checks: %v (deterministic %v)", err, core.IsDeterministic(err))
	}
	err = run(down, validation.Failure("table t does not exist"))
	var failed *validation.StartupFailedError
	if !errors.As(err, &failed) || !core.IsDeterministic(err) || len(failed.Reasons) != 2 {
		t.Fatalf("a configuration failure among them: %v", err)
	}
}
