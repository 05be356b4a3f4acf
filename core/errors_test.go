package core_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/retentionkit/retention/core"
)

func TestErrorCodesAndDeterminism(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		err           error
		code          string
		deterministic bool
		message       string
	}{
		{"validation", core.NewValidationError(map[string][]string{"batch_size": {"must be positive"}}), core.CodeValidationFailed, true, "validation failed: batch_size: must be positive"},
		{"validation with message", core.NewValidationErrorMessage("pass audit-log is invalid", map[string][]string{"b": {"x", "y"}, "a": {"z"}}), core.CodeValidationFailed, true, "pass audit-log is invalid: a: z; b: x, y"},
		{"business rule", core.NewBusinessRuleError("in use"), core.CodeBusinessRuleViolated, true, "in use"},
		{"business rule with own code", core.NewBusinessRuleErrorCode("on hold", "LEGAL_HOLD"), "LEGAL_HOLD", true, "on hold"},
		{"business rule with empty code keeps the default", core.NewBusinessRuleErrorCode("x", ""), core.CodeBusinessRuleViolated, true, "x"},
		{"not found", core.NewNotFoundError("DeadLetter", 42), core.CodeNotFound, true, "DeadLetter 42 was not found"},
		{"forbidden", core.NewForbiddenError("no token"), core.CodeForbidden, true, "no token"},
		{"conflict", core.NewConflictError("lost the race"), core.CodeConflict, true, "lost the race"},
		{"plain error with code", core.NewError("boom", "BOOM"), "BOOM", false, "boom"},
		{"plain error without code", core.NewError("boom", ""), "", false, "boom"},
		{"foreign error", errors.New("connection reset"), "", false, "connection reset"},
		{"nil", nil, "", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wrapped := fmt.Errorf("sweep audit-log: %w", tc.err)
			joined := errors.Join(errors.New("other"), wrapped)
			for _, err := range []error{tc.err, wrapped, joined} {
				if tc.err == nil && err != nil {
					continue
				}
				if got := core.ErrorCode(err); got != tc.code {
					t.Errorf("ErrorCode(%v) = %q, want %q", err, got, tc.code)
				}
				if got := core.IsDeterministic(err); got != tc.deterministic {
					t.Errorf("IsDeterministic(%v) = %v, want %v", err, got, tc.deterministic)
				}
			}
			if tc.err != nil && tc.err.Error() != tc.message {
				t.Errorf("Error() = %q, want %q", tc.err.Error(), tc.message)
			}
		})
	}
}

func TestTypedErrorsReadAsBaseError(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		core.NewValidationError(map[string][]string{"f": {"m"}}),
		core.NewBusinessRuleError("m"),
		core.NewNotFoundError("T", "id"),
		core.NewForbiddenError("m"),
		core.NewConflictError("m"),
	} {
		var base *core.Error
		if !errors.As(fmt.Errorf("wrapped: %w", err), &base) {
			t.Fatalf("errors.As(%T, *core.Error) = false", err)
		}
		if base.Code != core.ErrorCode(err) || base.Message != err.Error() {
			t.Errorf("%T read as %+v", err, base)
		}
	}
}

func TestTypedErrorsAreFoundByType(t *testing.T) {
	t.Parallel()
	nf := core.NewNotFoundError("Pass", "audit-log")
	var got *core.NotFoundError
	if !errors.As(fmt.Errorf("lookup: %w", nf), &got) || got.EntityType != "Pass" || got.EntityID != "audit-log" {
		t.Fatalf("errors.As found %+v", got)
	}
	v := core.NewValidationError(map[string][]string{"batch_size": {"must be positive"}})
	var ve *core.ValidationError
	if !errors.As(fmt.Errorf("x: %w", v), &ve) || ve.Fields["batch_size"][0] != "must be positive" {
		t.Fatalf("errors.As found %+v", ve)
	}
	if !errors.Is(fmt.Errorf("x: %w", v), v) {
		t.Fatal("errors.Is does not find the same validation error")
	}
}

func TestValidationErrorCopiesFields(t *testing.T) {
	t.Parallel()
	fields := map[string][]string{"a": {"x"}}
	err := core.NewValidationError(fields)
	fields["a"][0] = "changed"
	fields["b"] = []string{"new"}
	if err.Fields["a"][0] != "x" || len(err.Fields) != 1 {
		t.Fatalf("the error shares the caller's map: %v", err.Fields)
	}
}

func TestPanicErrorUnwrapsAnErrorValue(t *testing.T) {
	t.Parallel()
	cause := core.NewConflictError("lost")
	p := &core.PanicError{Value: cause}
	if !errors.Is(p, cause) || !core.IsDeterministic(p) {
		t.Fatal("a panic carrying an error does not expose it")
	}
	if (&core.PanicError{Value: "text"}).Unwrap() != nil {
		t.Fatal("a panic carrying a string unwraps to an error")
	}
	if got := p.Error(); got != "panic: lost" {
		t.Fatalf("Error() = %q", got)
	}
}
