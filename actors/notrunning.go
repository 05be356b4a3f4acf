package actors

import (
	"errors"

	"github.com/retentionkit/retention/core"
)

// ErrNotRunning says the runtime was asked for something before Start or after Stop.
// It is the one test for that state: callers check it with errors.Is rather than
// matching an error's text, which can change without the compiler noticing.
var ErrNotRunning = errors.New("the runtime is not running")

// notRunningError is what a request to a runtime that is not running returns where the
// API maps errors by kind: it reads as a business-rule error (the admin API answers 409)
// and also matches ErrNotRunning, so a caller can check either without reading the text.
type notRunningError struct {
	rule *core.BusinessRuleError
}

// errNotRunning returns the request-facing form of ErrNotRunning.
func errNotRunning() error {
	return &notRunningError{rule: core.NewBusinessRuleError("retention: runtime is not running")}
}

func (e *notRunningError) Error() string { return e.rule.Message }

// Unwrap exposes both the business-rule error and the sentinel to errors.Is and errors.As.
func (e *notRunningError) Unwrap() []error { return []error{e.rule, ErrNotRunning} }
