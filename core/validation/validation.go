// Package validation holds the two seams retention checks input and configuration
// through: a Validator for a value, and a StartupValidator that lets a host refuse to
// start ("fail at boot, not at 3 a.m.") or start and log what it found.
package validation

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/retentionkit/retention/core"
)

// Validator checks one value of type T.
type Validator[T any] interface {
	Validate(ctx context.Context, value T) Result
}

// Result collects every problem found in a value, per field, so a user sees them all at
// once. The zero value is a valid result with no problems.
type Result struct {
	fields map[string][]string
}

// Add records a problem with field. It returns the result so checks can be chained.
func (r *Result) Add(field, message string) *Result {
	if r.fields == nil {
		r.fields = make(map[string][]string)
	}
	r.fields[field] = append(r.fields[field], message)
	return r
}

// Merge adds every problem of other to r.
func (r *Result) Merge(other Result) {
	for _, field := range slices.Sorted(maps.Keys(other.fields)) {
		for _, msg := range other.fields[field] {
			r.Add(field, msg)
		}
	}
}

// Valid reports whether no problem was found.
func (r Result) Valid() bool { return len(r.fields) == 0 }

// Fields returns a copy of the problems per field.
func (r Result) Fields() map[string][]string {
	out := make(map[string][]string, len(r.fields))
	for k, v := range r.fields {
		out[k] = slices.Clone(v)
	}
	return out
}

// Err returns nil for a valid result and a *core.ValidationError carrying every problem
// otherwise, so a failed validation is deterministic wherever it travels.
func (r Result) Err() error {
	if r.Valid() {
		return nil
	}
	return core.NewValidationError(r.fields)
}

// StartupValidator checks, before a host starts working, that what it was configured
// with is coherent.
type StartupValidator interface {
	ValidateStartup(ctx context.Context) StartupResult
}

// StartupResult is a startup check's verdict: a failure stops the host; a success may
// carry warnings, which the host logs at warning level, so no validator needs a logger of
// its own. The zero value is a success with no message.
type StartupResult struct {
	failed      bool
	unavailable bool
	message     string
	warnings    []string
}

// Failure returns a result that stops the host, with the reason.
func Failure(message string) StartupResult {
	return StartupResult{failed: true, message: message}
}

// Unavailable returns a failed result whose cause is the moment, not the configuration:
// the check could not ask what it checks (the database did not answer, timed out, or
// was shutting down). A host may retry it; a Failure it must not.
func Unavailable(message string) StartupResult {
	return StartupResult{failed: true, unavailable: true, message: message}
}

// Success returns a result that lets the host start, with any findings for the host to
// log as warnings (a gap the host may have chosen on purpose, say).
func Success(message string, warnings ...string) StartupResult {
	return StartupResult{message: message, warnings: slices.Clone(warnings)}
}

// Failed reports whether the host must not start.
func (r StartupResult) Failed() bool { return r.failed }

// Unavailable reports whether the check failed only because what it checks could not
// be reached: trying again later may succeed.
func (r StartupResult) Unavailable() bool { return r.unavailable }

// Message returns the check's summary or, for a failure, its reason.
func (r StartupResult) Message() string { return r.message }

// Warnings returns the findings a successful check asks the host to log.
func (r StartupResult) Warnings() []string { return slices.Clone(r.warnings) }

// StartupFailedError is returned by RunStartup when one or more checks failed. It is a
// business rule violation: the configuration, not the moment, is wrong, so retrying the
// start cannot help.
type StartupFailedError struct {
	*core.BusinessRuleError
	// Reasons are the failed checks' messages, in the order the checks ran.
	Reasons []string
}

// Unwrap exposes the business rule error to errors.As and core.IsDeterministic.
func (e *StartupFailedError) Unwrap() error { return e.BusinessRuleError }

// RunStartup runs every validator, in order, even after one failed, so a host reports all
// of its problems at once. Each warning of a successful check is handed to warn (which
// may be nil). It returns a *StartupFailedError naming every failure, or nil.
func RunStartup(ctx context.Context, validators []StartupValidator, warn func(string)) error {
	var reasons []string
	unavailable := 0
	for _, v := range validators {
		res := v.ValidateStartup(ctx)
		if res.Failed() {
			reasons = append(reasons, res.Message())
			if res.Unavailable() {
				unavailable++
			}
			continue
		}
		if warn != nil {
			for _, w := range res.warnings {
				warn(w)
			}
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	msg := strings.Join(reasons, "; ")
	if unavailable == len(reasons) {
		return &StartupUnavailableError{Reasons: reasons}
	}
	return &StartupFailedError{BusinessRuleError: core.NewBusinessRuleError("startup validation failed: " + msg), Reasons: reasons}
}

// StartupUnavailableError is returned by RunStartup when every failed check was
// Unavailable: nothing says the configuration is wrong, the checks could not run. It is
// not deterministic, so a host (or its supervisor) may try again.
type StartupUnavailableError struct {
	// Reasons are the failed checks' messages, in the order the checks ran.
	Reasons []string
}

func (e *StartupUnavailableError) Error() string {
	return "startup validation could not run: " + strings.Join(e.Reasons, "; ")
}
