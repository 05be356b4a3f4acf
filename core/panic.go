package core

import "fmt"

// PanicError carries the value a recovered panic was raised with, so code that contains
// panics (the poll loop, the observer guard, the pass actor) can report one as an
// ordinary error. When the value was itself an error, Unwrap returns it, so errors.As
// and errors.Is still see what the panicking code meant.
type PanicError struct {
	Value any
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error, and nil otherwise.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
