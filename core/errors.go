package core

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The codes the five deterministic error types carry unless told otherwise. A transport
// or a log pipeline maps an error by its code, never by its message.
const (
	CodeValidationFailed     = "VALIDATION_FAILED"
	CodeBusinessRuleViolated = "BUSINESS_RULE_VIOLATED"
	CodeNotFound             = "NOT_FOUND"
	CodeForbidden            = "FORBIDDEN"
	CodeConflict             = "CONFLICT"
)

// Error is the plain form of every retention error: a message and an optional code.
// Each of the five typed errors below can also be read as an *Error through errors.As,
// so code that only wants the code and the message needs to know none of them.
//
// An *Error made with NewError is not deterministic: only the five typed errors promise
// that retrying cannot help.
type Error struct {
	Message string
	// Code is the machine-readable code; empty means the error carries none.
	Code string
}

// NewError returns an error with the given message and code; code may be empty.
func NewError(msg, code string) *Error { return &Error{Message: msg, Code: code} }

func (e *Error) Error() string { return e.Message }

// ErrorCode returns the error's code, so ErrorCode(err) can read it through any wrapping.
func (e *Error) ErrorCode() string { return e.Code }

// coded is what ErrorCode looks for: any error in a chain that names a code.
type coded interface{ ErrorCode() string }

// deterministic marks the five error types whose failure a retry would only repeat.
type deterministic interface{ deterministic() }

// ErrorCode returns the code of the first error in err's chain that carries one, or ""
// when none does. It looks through fmt.Errorf("%w") and errors.Join wrapping.
func ErrorCode(err error) string {
	var c coded
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}

// IsDeterministic reports whether err (or anything it wraps) is one of the five typed
// errors: validation, business rule, not found, forbidden or conflict. The runtime never
// retries such a failure sooner than the pass's normal interval, because a second attempt
// would fail the same way.
func IsDeterministic(err error) bool {
	var d deterministic
	return errors.As(err, &d)
}

// asError lets every typed error answer errors.As(err, **Error).
func asError(target any, msg, code string) bool {
	p, ok := target.(**Error)
	if ok {
		*p = &Error{Message: msg, Code: code}
	}
	return ok
}

// ValidationError says that input did not satisfy its rules. Fields maps each offending
// field to every message about it, so a caller can report all problems at once instead
// of making the user fix them one run at a time.
type ValidationError struct {
	Message string
	Code    string
	Fields  map[string][]string
}

// NewValidationError returns a validation error over the given fields with a generic
// message. The map is copied.
func NewValidationError(fields map[string][]string) *ValidationError {
	return NewValidationErrorMessage("validation failed", fields)
}

// NewValidationErrorMessage is NewValidationError with a message of the caller's.
func NewValidationErrorMessage(msg string, fields map[string][]string) *ValidationError {
	copied := make(map[string][]string, len(fields))
	for k, v := range fields {
		copied[k] = slices.Clone(v)
	}
	return &ValidationError{Message: msg, Code: CodeValidationFailed, Fields: copied}
}

// Error lists every field's messages in field order, so the text is stable from run to run.
func (e *ValidationError) Error() string {
	if len(e.Fields) == 0 {
		return e.Message
	}
	var b strings.Builder
	b.WriteString(e.Message)
	for i, field := range slices.Sorted(maps.Keys(e.Fields)) {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", field, strings.Join(e.Fields[field], ", "))
	}
	return b.String()
}

// ErrorCode returns the error's code.
func (e *ValidationError) ErrorCode() string { return e.Code }
func (e *ValidationError) deterministic()    {}

// As lets errors.As read a ValidationError as an *Error.
func (e *ValidationError) As(target any) bool { return asError(target, e.Error(), e.Code) }

// BusinessRuleError says that a domain invariant would be violated.
type BusinessRuleError struct {
	Message string
	Code    string
}

// NewBusinessRuleError returns a business rule error with the default code.
func NewBusinessRuleError(msg string) *BusinessRuleError {
	return &BusinessRuleError{Message: msg, Code: CodeBusinessRuleViolated}
}

// NewBusinessRuleErrorCode returns a business rule error with a code of the caller's,
// for a rule specific enough that a client should tell it apart; an empty code falls back
// to the default.
func NewBusinessRuleErrorCode(msg, code string) *BusinessRuleError {
	if code == "" {
		code = CodeBusinessRuleViolated
	}
	return &BusinessRuleError{Message: msg, Code: code}
}

func (e *BusinessRuleError) Error() string { return e.Message }

// ErrorCode returns the error's code.
func (e *BusinessRuleError) ErrorCode() string { return e.Code }
func (e *BusinessRuleError) deterministic()    {}

// As lets errors.As read a BusinessRuleError as an *Error.
func (e *BusinessRuleError) As(target any) bool { return asError(target, e.Message, e.Code) }

// NotFoundError says that the addressed entity does not exist. It carries the entity's
// type and id rather than a message, so a caller can act on them.
type NotFoundError struct {
	EntityType string
	EntityID   any
}

// NewNotFoundError returns a not-found error for one entity.
func NewNotFoundError(entityType string, id any) *NotFoundError {
	return &NotFoundError{EntityType: entityType, EntityID: id}
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s %v was not found", e.EntityType, e.EntityID)
}

// ErrorCode returns CodeNotFound.
func (e *NotFoundError) ErrorCode() string { return CodeNotFound }
func (e *NotFoundError) deterministic()    {}

// As lets errors.As read a NotFoundError as an *Error.
func (e *NotFoundError) As(target any) bool { return asError(target, e.Error(), CodeNotFound) }

// ForbiddenError says that the caller is known but not permitted.
type ForbiddenError struct{ Message string }

// NewForbiddenError returns a forbidden error.
func NewForbiddenError(msg string) *ForbiddenError { return &ForbiddenError{Message: msg} }

func (e *ForbiddenError) Error() string { return e.Message }

// ErrorCode returns CodeForbidden.
func (e *ForbiddenError) ErrorCode() string { return CodeForbidden }
func (e *ForbiddenError) deterministic()    {}

// As lets errors.As read a ForbiddenError as an *Error.
func (e *ForbiddenError) As(target any) bool { return asError(target, e.Message, CodeForbidden) }

// ConflictError says that a write lost against a concurrent one.
type ConflictError struct{ Message string }

// NewConflictError returns a conflict error.
func NewConflictError(msg string) *ConflictError { return &ConflictError{Message: msg} }

func (e *ConflictError) Error() string { return e.Message }

// ErrorCode returns CodeConflict.
func (e *ConflictError) ErrorCode() string { return CodeConflict }
func (e *ConflictError) deterministic()    {}

// As lets errors.As read a ConflictError as an *Error.
func (e *ConflictError) As(target any) bool { return asError(target, e.Message, CodeConflict) }
