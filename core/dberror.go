package core

import (
	"errors"
	"fmt"
)

// The classes of a database error. A driver sorts each error its database returns into
// one of them, so supervision and the batch loop decide what to do from the class and
// never from a database's own codes or message text. Check them with errors.Is.
var (
	// ErrRetryUnit says the unit of work failed as a whole for a reason of the moment
	// (a deadlock, a serialization failure, a lock timeout): running the same unit again
	// at once may succeed.
	ErrRetryUnit = errors.New("database: retry the unit")
	// ErrRowSpecific says one row of the unit is at fault (a constraint it violates): the
	// unit is split (bisected) to find and set that row aside, and the rest goes through.
	ErrRowSpecific = errors.New("database: row-specific")
	// ErrTransient says the database could not be reached or asked (a lost connection,
	// a server shutting down, too many connections): a later attempt may succeed.
	ErrTransient = errors.New("database: transient")
	// ErrSchemaDrift says a table, column or schema the pass was configured with is not
	// there: retrying soon cannot help, yet the pass works again once it is back.
	ErrSchemaDrift = errors.New("database: schema drift")
	// ErrFatal is every other database error: retrying the same statement fails the
	// same way.
	ErrFatal = errors.New("database: fatal")
)

// DatabaseError is a database's error with the class its driver gave it. errors.Is
// matches it against its class; Unwrap gives the database's own error.
type DatabaseError struct {
	// Class is one of ErrRetryUnit, ErrRowSpecific, ErrTransient, ErrSchemaDrift and
	// ErrFatal.
	Class error
	// Err is the database's error.
	Err error
}

// NewDatabaseError gives err its class; a nil err stays nil.
func NewDatabaseError(class, err error) error {
	if err == nil {
		return nil
	}
	return &DatabaseError{Class: class, Err: err}
}

func (e *DatabaseError) Error() string { return e.Err.Error() }

// Unwrap returns the database's error, so errors.As still finds the driver's own type.
func (e *DatabaseError) Unwrap() error { return e.Err }

// Is matches the error's class.
func (e *DatabaseError) Is(target error) bool { return target == e.Class }

// SchemaDriftError says that a table or column a pass was configured with is not there
// (any more): the configuration and the database have drifted apart. A Go pass may
// return one itself; a driver classifies the database's own errors into ErrSchemaDrift.
type SchemaDriftError struct {
	Err error
}

func (e *SchemaDriftError) Error() string { return fmt.Sprintf("configuration drift: %v", e.Err) }

// Unwrap returns the cause.
func (e *SchemaDriftError) Unwrap() error { return e.Err }

// Is makes a SchemaDriftError of class ErrSchemaDrift.
func (e *SchemaDriftError) Is(target error) bool { return target == ErrSchemaDrift }

// IsSchemaDrift reports whether err is configuration drift: a *SchemaDriftError or an
// error a driver classified as ErrSchemaDrift anywhere in its chain.
func IsSchemaDrift(err error) bool { return err != nil && errors.Is(err, ErrSchemaDrift) }
