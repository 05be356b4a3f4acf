package postgres

import (
	"errors"
	"strings"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes/driver"
)

// Classify sorts err by its SQLSTATE: a deadlock or serialization failure retries the
// unit; an integrity violation (class 23) or a trigger's exception (P0001) is one row's;
// an undefined table, column or schema is drift; a connection exception (class 08),
// insufficient resources (class 53), a server shutting down or starting, a lock or
// statement timeout is transient. Without a SQLSTATE, a connection-level failure is
// transient and anything else fatal.
func (Driver) Classify(err error) error {
	if err == nil || classified(err) {
		return err
	}
	var pe pgdriver.Error
	if !errors.As(err, &pe) {
		if driver.IsConnectionFailure(err) {
			return core.NewDatabaseError(core.ErrTransient, err)
		}
		return core.NewDatabaseError(core.ErrFatal, err)
	}
	return core.NewDatabaseError(classOf(pe.Field('C')), err)
}

// classOf maps a SQLSTATE to its class.
func classOf(code string) error {
	switch code {
	case "40001", "40P01":
		return core.ErrRetryUnit
	case "P0001":
		return core.ErrRowSpecific
	case "42P01", "42703", "3F000":
		return core.ErrSchemaDrift
	case "57P01", "57P02", "57P03", "55P03", "57014":
		return core.ErrTransient
	}
	switch {
	case strings.HasPrefix(code, "23"):
		return core.ErrRowSpecific
	case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"):
		return core.ErrTransient
	}
	return core.ErrFatal
}

// Culprit reads the constraint and table fields of PostgreSQL's error report; a table
// outside public is named with its schema.
func (Driver) Culprit(err error) (constraint, table string) {
	var pe pgdriver.Error
	if !errors.As(err, &pe) {
		return "", ""
	}
	constraint, table = pe.Field('n'), pe.Field('t')
	if s := pe.Field('s'); s != "" && s != "public" && table != "" {
		table = s + "." + table
	}
	return constraint, table
}

// classified reports whether err already carries a class, so classifying twice keeps the
// first driver's verdict.
func classified(err error) bool {
	var de *core.DatabaseError
	return errors.As(err, &de) || errors.Is(err, core.ErrSchemaDrift)
}
