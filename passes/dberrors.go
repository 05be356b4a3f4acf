package passes

import (
	"errors"

	"github.com/retentionkit/retention/core"
)

// SchemaDriftError is core.SchemaDriftError, kept under its old name so a Go pass that
// returns one needs no change.
type SchemaDriftError = core.SchemaDriftError

// IsSchemaDrift reports whether err says that a table, column or schema does not exist:
// a *SchemaDriftError, or an error one of the drivers classifies as core.ErrSchemaDrift.
// Code that knows its driver asks it (Classify) instead.
func IsSchemaDrift(err error) bool { return hasClass(err, core.ErrSchemaDrift) }

// IsTransient reports whether err is the moment's rather than the configuration's: one
// of the drivers classifies it as core.ErrTransient (the database could not be reached
// or asked) or core.ErrRetryUnit (a deadlock, a serialization failure). Trying again
// later may succeed; trying a bad configuration again never does.
func IsTransient(err error) bool {
	return hasClass(err, core.ErrTransient) || hasClass(err, core.ErrRetryUnit)
}

// hasClass reports whether err carries class already or some driver gives it that
// class: each driver recognises only its own database's errors, so the one that owns err
// decides.
func hasClass(err error, class error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, class) {
		return true
	}
	for _, d := range Drivers() {
		if errors.Is(d.Classify(err), class) {
			return true
		}
	}
	return false
}
